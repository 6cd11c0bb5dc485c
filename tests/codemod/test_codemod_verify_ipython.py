"""verify/ipython_shell.py: a notebook exported as a script runs under `verify` with its magics."""

from __future__ import annotations

import sys

import pytest

from multi_gpu_codemod.verify import child
from multi_gpu_codemod.verify.ipython_shell import Shell

EXPORT = '''#!/usr/bin/env python
# coding: utf-8

# In[1]:


get_ipython().run_line_magic('matplotlib', 'inline')
get_ipython().system('pip install keras==2.2.4')
get_ipython().magic('load_ext autoreload')
x = 3


# In[2]:


get_ipython().run_cell_magic('time', '', 'y = x + 1\\nlisting = get_ipython().getoutput("ls")\\n')
get_ipython().run_line_magic('time', 'z = y * 2')
get_ipython().run_line_magic('timeit', 'z + 1')


# In[3]:


get_ipython().run_cell_magic('writefile', 'helper.py', 'VALUE = 7\\n')
import helper
result = (x, y, z, listing, helper.VALUE)
'''


def test_an_export_runs_its_code_magics_writes_its_files_and_lists_what_it_skipped(tmp_path, monkeypatch):
    script = tmp_path / "export.py"
    script.write_text(EXPORT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.delitem(sys.modules, "helper", raising=False)
    shell = Shell()
    namespace = child._run_script(str(script), shell)
    assert namespace["result"] == (3, 4, 8, [], 7)
    assert shell.skipped == ["%matplotlib inline", "!pip install keras==2.2.4", "%load_ext autoreload",
                             "!ls", "%timeit z + 1"]
    (note,) = shell.notes()
    assert "`%matplotlib inline`" in note and "and 0 more" not in note and "same in every run" in note


def test_a_failing_magic_cell_fails_the_run_as_the_notebook_did():
    shell = Shell()
    with pytest.raises(ZeroDivisionError):
        exec("get_ipython().run_cell_magic('time', '', '1 / 0')", {"get_ipython": shell})


def test_many_skipped_lines_are_counted_not_listed():
    shell = Shell()
    for n in range(8):
        shell.system(f"echo {n}")
    (note,) = shell.notes()
    assert "`!echo 4`" in note and "`!echo 5`" not in note and "and 3 more" in note
    assert Shell().notes() == []


def test_the_report_says_a_note_every_run_made_once():
    from multi_gpu_codemod.verify.report import Report, format_report
    from multi_gpu_codemod.verify.runs import Run

    skipped = "IPython lines skipped outside a notebook (the same in every run): `!nvidia-smi`"
    runs = {mode: Run(mode, ok=True, notes=[skipped] + (["the script never called fit"] if mode == "single" else []))
            for mode in ("shim", "migrated", "single")}
    text = format_report(Report("export.py", runs, [], []))
    assert text.count("nvidia-smi") == 1 and f"every run: {skipped}" in text
    assert "single: the script never called fit" in text
