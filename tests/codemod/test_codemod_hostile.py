"""codemod/core.py on hostile input: Python 2, syntax errors, null bytes, binaries, encodings, layout."""

import ast
import os
import time

import pytest

from multi_gpu_codemod import transform_source
from multi_gpu_codemod.cli import main
from codemod_fixtures import ROOT

HOSTILE = sorted((ROOT / "hostile").glob("*.py"))
LEGACY = (ROOT / "seed" / "xception_doc.before.py").read_bytes()
MIGRATED = (ROOT / "seed" / "xception_doc.after.py").read_bytes()


@pytest.mark.parametrize("path", HOSTILE, ids=lambda p: p.name)
def test_hostile_file_reported_never_modified(path):
    source = path.read_bytes()
    result = transform_source(source, path.name)
    assert result.failed and result.output == source and not result.changed
    [finding] = result.findings
    assert finding.code == "MGPU501"
    text = finding.format()
    assert text.startswith(f"{path.name}: cannot parse as Python 3: ")
    assert "rerun" in text or "exclude" in text  # says what to do


@pytest.mark.parametrize("path", HOSTILE, ids=lambda p: p.name)
def test_hostile_file_exit_2_untouched(path, tmp_path, capsys):
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    before = copy.stat().st_mtime_ns
    assert main([str(tmp_path)]) == 2  # walked, not silently skipped
    assert copy.read_bytes() == path.read_bytes() and copy.stat().st_mtime_ns == before
    out = capsys.readouterr().out
    assert f"{copy}: cannot parse as Python 3: " in out and "1 failed" in out


def test_python2_reasons_say_port_it():
    for name in ("py2_print.py", "py2_except.py", "py2_no_site.py"):
        message = transform_source((ROOT / "hostile" / name).read_bytes(), name).findings[0].message
        assert "Python 2" in message and "2to3" in message, name


@pytest.mark.parametrize("line,written", [
    # (round 50, al15: a Colab export's raw shell line; the advice said "port the file to Python 3")
    ("!nvidia-smi", "get_ipython().system('nvidia-smi')"),
    ("    !pip install -q keras==2.2.4", "get_ipython().system('pip install -q keras==2.2.4')"),
    ("%matplotlib inline", "get_ipython().run_line_magic('matplotlib', 'inline')"),
    ("%%time", "get_ipython().run_cell_magic('time', '', <the cell>)"),
])
def test_an_ipython_line_in_a_py_file_says_how_nbconvert_writes_it(line, written):
    source = f"import numpy as np\n{line}\nfrom keras.utils import multi_gpu_model\n".encode()
    result = transform_source(source, "export.py")
    [finding] = result.findings
    assert result.failed and result.output == source and finding.code == "MGPU501" and finding.line == 2
    assert "Line 2 is an IPython" in finding.message and f"`{written}`" in finding.message
    assert "Python 2" not in finding.message and "port" not in finding.message


def test_undecodable_and_null_bytes_reasons():
    und = transform_source((ROOT / "hostile" / "undecodable.py").read_bytes()).findings[0]
    assert "byte 0xe9 is not valid utf-8" in und.message and und.line == 1
    nul = transform_source((ROOT / "hostile" / "null_bytes.py").read_bytes()).findings[0]
    assert "null bytes" in nul.message


def _unchanged_lines_kept(source: bytes, output: bytes) -> None:
    """Every output line whose text is an original line's keeps that line's exact ending."""
    endings = {}
    for line in source.splitlines(keepends=True):
        text = line.rstrip(b"\r\n")
        if text.strip():
            endings.setdefault(text, set()).add(line[len(text):])
    checked = 0
    for line in output.splitlines(keepends=True):
        text = line.rstrip(b"\r\n")
        if text in endings and len(endings[text]) == 1:
            assert line[len(text):] in endings[text], line
            checked += 1
    assert checked >= 15  # enough untouched lines for the check to mean something


LAYOUTS = {
    "bom": (lambda d: b"\xef\xbb\xbf" + d),
    "crlf": (lambda d: d.replace(b"\n", b"\r\n")),
    "cr_only": (lambda d: d.replace(b"\n", b"\r")),
    "tabs": (lambda d: d.replace(b"    ", b"\t")),
    "latin1_cookie": (lambda d: b"# -*- coding: latin-1 -*-\n# caf\xe9 cr\xe8me\n" + d),
    "crlf_bom_latin1": (lambda d: (b"# -*- coding: latin-1 -*-\n# na\xefve\n" + d).replace(b"\n", b"\r\n")),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_layout_preserved_around_a_real_rewrite(layout):
    apply = LAYOUTS[layout]
    source = apply(LEGACY)
    result = transform_source(source)
    assert result.changed and not result.failed
    if layout == "tabs":  # the rewrite's own indentation follows the file's (tabs)
        assert result.output == MIGRATED.replace(b"    ", b"\t")
    else:
        assert result.output == apply(MIGRATED)
    assert transform_source(result.output).output == result.output


def test_mixed_line_endings_kept_outside_edits():
    lines = LEGACY.split(b"\n")
    endings = (b"\r\n", b"\r", b"\n")
    source = b"".join(line + endings[i % 3] for i, line in enumerate(lines[:-1]))
    result = transform_source(source)
    assert result.changed
    _unchanged_lines_kept(source, result.output)
    ast.parse(result.output)
    assert b"# This assumes that your machine has 8 available GPUs." in result.output
    assert transform_source(result.output).output == result.output


def test_files_without_markers_are_not_parsed_by_libcst(monkeypatch):
    import libcst

    def boom(*args, **kwargs):
        raise AssertionError("libcst parse on a file without a marker")

    monkeypatch.setattr(libcst, "parse_module", boom)
    result = transform_source(b"import numpy as np\nprint(np.ones(3))\n")
    assert not result.changed and not result.findings and not result.failed


def test_prefilter_markers_cover_the_recogniser():
    from multi_gpu_codemod import recognise
    from multi_gpu_codemod.prefilter import MARKERS, may_contain_site

    names = {"multi_gpu_model", "AltModelCheckpoint", *recognise._HELPER_FUNCTIONS, *recognise._WRAPPER_NAMES}
    assert all(may_contain_site(n.encode()) for n in names)
    for fixture in ROOT.glob("*/*.before.py"):
        assert may_contain_site(fixture.read_bytes()), fixture
    # A file the prefilter lets through takes the same path either way; one it skips must be one the
    # full rewrite leaves unchanged too.
    skipped = [f for f in ROOT.glob("*/*.py") if not may_contain_site(f.read_bytes())]
    assert skipped
    for fixture in skipped:
        source = fixture.read_bytes()
        assert transform_source(source).output == source == transform_source(source, prefilter=False).output, fixture
    assert MARKERS


def test_unchanged_file_never_rewritten(tmp_path):
    other = tmp_path / "other.py"
    other.write_bytes(b"x = 1\n")
    nosite = tmp_path / "lib.py"
    nosite.write_bytes(b"def multi_gpu_model(m, gpus):\n    return m\n")  # marker, but no site
    stamps = {p: p.stat().st_mtime_ns for p in (other, nosite)}
    time.sleep(0.01)
    assert main([str(tmp_path)]) == 0
    assert {p: p.stat().st_mtime_ns for p in (other, nosite)} == stamps


def test_read_only_file_reported_not_replaced(tmp_path, capsys):
    script = tmp_path / "train.py"
    script.write_bytes(LEGACY)
    script.chmod(0o444)
    assert main([str(script)]) == 2
    assert script.read_bytes() == LEGACY
    assert "MGPU503 cannot write the file (file is read-only)" in capsys.readouterr().out


def test_read_only_directory_reported(tmp_path, capsys):
    if os.geteuid() == 0:
        pytest.skip("root ignores directory permissions")
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "train.py").write_bytes(LEGACY)
    folder.chmod(0o555)
    try:
        assert main([str(folder)]) == 2
        assert "MGPU503" in capsys.readouterr().out
    finally:
        folder.chmod(0o755)


def test_symlinks_skipped_when_walking_rewritten_when_named(tmp_path, capsys):
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    target = real_dir / "train.py"
    target.write_bytes(LEGACY)
    repo = tmp_path / "repo"
    repo.mkdir()
    link = repo / "train_link.py"
    link.symlink_to(target)
    (repo / "linked_dir").symlink_to(real_dir, target_is_directory=True)
    assert main([str(repo)]) == 0  # nothing else in repo: links reported, not followed
    out = capsys.readouterr().out
    assert f"{link}: skipped: symbolic link" in out and f"{repo / 'linked_dir'}: skipped: symbolic link" in out
    assert "2 symlinks skipped" in out
    assert target.read_bytes() == LEGACY
    assert main([str(link)]) == 1  # named explicitly: the target is rewritten, the link kept
    assert link.is_symlink() and target.read_bytes() == MIGRATED


def test_missing_file_reported(tmp_path, capsys):
    assert main([str(tmp_path / "nope.py")]) == 2
    assert "MGPU503 cannot read the file" in capsys.readouterr().out


# ------------------------------------------------ one bad file never ends the run, nor lies with exit 1

SMALL_LEGACY = (
    b"from keras.utils import multi_gpu_model\n"
    b"model = build()\n"
    b"parallel = multi_gpu_model(model, gpus=2)\n"
    b'parallel.compile("sgd", "mse")\n'
)


def _run_folder(folder, capsys, *args):
    code = main([*args, str(folder)])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("cookie", ["rot13", "hex", "base64", "klingon"])
def test_coding_cookie_that_is_not_a_text_encoding(cookie, tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_bytes(f"# coding: {cookie}\nx = 1\n".encode())
    (tmp_path / "train.py").write_bytes(SMALL_LEGACY)
    code, out = _run_folder(tmp_path, capsys, "--check")
    assert code == 2
    assert f"{bad}: cannot parse as Python 3: " in out and "[MGPU501]" in out and cookie in out
    assert "Traceback" not in out and "2 files scanned, 1 would be rewritten" in out


def test_deep_sum_without_legacy_code_is_left_alone(tmp_path, capsys):
    (tmp_path / "generated.py").write_text("x = " + " + ".join(["1"] * 10_000) + "\n")
    assert _run_folder(tmp_path, capsys) == (0, "1 file scanned, 0 rewritten, 0 need attention, 0 failed\n")


@pytest.mark.parametrize("deep", [
    "x = " + " + ".join(["1"] * 1000) + "\n",
    "if a:\n    pass\n" + "".join(f"elif a == {i}:\n    pass\n" for i in range(1000)),
], ids=["1000-term sum", "1000 elifs"])
def test_deep_code_next_to_legacy_code_is_rewritten(deep, tmp_path, capsys):
    script = tmp_path / "train.py"
    script.write_bytes(deep.encode() + SMALL_LEGACY)
    code, out = _run_folder(tmp_path, capsys)
    lines = deep.count("\n") + 3  # the call is on the third line of SMALL_LEGACY
    assert (code, out) == (1, f"{script}:{lines}:12: multi_gpu_model rewritten\n"
                              "1 file scanned, 1 rewritten, 0 need attention, 0 failed; 1 call site: 1 rewritten, "
                              "0 reported, 0 untouched\n")
    assert deep.encode() in script.read_bytes() and b"with strategy.scope():" in script.read_bytes()


def test_deep_code_in_process_is_a_finding_not_an_exception():
    source = ("x = " + " + ".join(["1"] * 3000) + "\n").encode() + SMALL_LEGACY
    result = transform_source(source, "train.py")  # the library call: no child process, default recursion limit
    assert result.failed and result.output == source
    assert [f.code for f in result.findings] == ["MGPU505"]


def test_unary_operators_beyond_pythons_parser(tmp_path, capsys):
    bad = tmp_path / "unary.py"
    bad.write_bytes(b"x = " + b"-" * 50_000 + b"1\n" + SMALL_LEGACY)
    (tmp_path / "zz_train.py").write_bytes(SMALL_LEGACY)
    code, out = _run_folder(tmp_path, capsys)
    assert code == 2
    assert f"{bad}:1:1: MGPU505 nested too deeply to parse safely (Python's parser: MemoryError)" in out
    assert out.endswith("2 files scanned, 1 rewritten, 0 need attention, 1 failed; 1 call site: 1 rewritten, 0 "
                        "reported, 0 untouched\n")


@pytest.mark.slow
def test_long_and_chain_that_crashes_libcst_in_process(tmp_path, capsys):  # its child gets a deep stack
    script = tmp_path / "train.py"
    script.write_bytes(("x = " + " and ".join(["a"] * 10_000) + "\n").encode() + SMALL_LEGACY)
    code, out = _run_folder(tmp_path, capsys, "--check")
    assert (code, out) == (1, f"{script}:4:12: multi_gpu_model would be rewritten\n"
                              "1 file scanned, 1 would be rewritten, 0 need attention, 0 failed; 1 call site: "
                              "1 would be rewritten, 0 reported, 0 untouched\n")


def test_parser_crash_is_a_finding_and_the_run_goes_on(tmp_path, capsys, monkeypatch):
    import signal

    import libcst

    parse = libcst.parse_module

    def crashing(source, *args, **kwargs):
        if b"CRASH" in source:
            os.kill(os.getpid(), signal.SIGSEGV)  # what libcst's native parser does on a deep `and` chain
        return parse(source, *args, **kwargs)

    monkeypatch.setattr(libcst, "parse_module", crashing)
    (tmp_path / "a_crash.py").write_bytes(b"# CRASH\n" + SMALL_LEGACY)
    (tmp_path / "b_train.py").write_bytes(SMALL_LEGACY)
    code, out = _run_folder(tmp_path, capsys)
    assert code == 2
    crash = tmp_path / "a_crash.py"
    assert f"{crash}:1:1: MGPU505 nested too deeply to parse safely (the parser crashed with SIGSEGV)" in out
    assert out.endswith("2 files scanned, 1 rewritten, 0 need attention, 1 failed; 1 call site: 1 rewritten, 0 "
                        "reported, 0 untouched\n")
    assert (tmp_path / "a_crash.py").read_bytes() == b"# CRASH\n" + SMALL_LEGACY


def test_unexpected_error_is_named_and_the_run_goes_on(tmp_path, capsys, monkeypatch):
    from multi_gpu_codemod import run_files

    def broken(source, path, strategy):
        if path.endswith("a.py"):
            raise KeyError("surprise")
        return transform_source(source, path, strategy=strategy)

    monkeypatch.setattr(run_files, "_transform", broken)
    (tmp_path / "a.py").write_bytes(SMALL_LEGACY)
    (tmp_path / "b.py").write_bytes(SMALL_LEGACY)
    code, out = _run_folder(tmp_path, capsys, "--format", "json")
    assert code == 2
    import json

    report = json.loads(out)
    assert report["summary"] == {"scanned": 2, "rewritten": 1, "attention": 0, "failed": 1, "skipped": 0,
                                 "sites": {"rewritten": 1, "reported": 0, "untouched": 0}}
    [finding] = report["findings"]
    assert finding["code"] == "MGPU502" and "KeyError: 'surprise'" in finding["message"]
    assert "migrate this file by hand" in finding["message"]


def test_non_utf8_file_name_in_a_walked_folder(tmp_path, capsys):
    name = os.fsdecode(b"caf\xe9.py")
    try:
        (tmp_path / name).write_bytes(SMALL_LEGACY)
    except (UnicodeEncodeError, OSError):
        pytest.skip("this file system refuses non-UTF-8 names")
    (tmp_path / "ok.py").write_bytes(b"x = 1\n")
    code, out = _run_folder(tmp_path, capsys, "--check")
    assert code == 1
    assert out.endswith(": multi_gpu_model would be rewritten\n2 files scanned, 1 would be rewritten, 0 need "
                        "attention, "
                        "0 failed; 1 call site: 1 would be rewritten, 0 reported, 0 untouched\n")
    assert out.startswith(f"{tmp_path}/caf\\xe9.py:")  # the undecodable byte shown, never raw
    code, out = _run_folder(tmp_path, capsys, "--check", "--format", "github")
    assert "caf\\xe9.py" not in out  # nothing to report; a finding would show the byte as \xe9
    (tmp_path / name).write_bytes(b'print "x"\n')
    code, out = _run_folder(tmp_path, capsys)
    assert code == 2 and f"{tmp_path}/caf\\xe9.py: cannot parse as Python 3" in out


def test_unreadable_sub_folder_is_reported_and_the_rest_processed(tmp_path, capsys, monkeypatch):
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "train.py").write_bytes(SMALL_LEGACY)
    (tmp_path / "train.py").write_bytes(SMALL_LEGACY)
    scandir = os.scandir

    def refusing(path="."):  # what a folder without read permission does (root is never refused)
        if os.fspath(path) == str(locked):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    code, out = _run_folder(tmp_path, capsys, "--check")
    assert code == 2
    message = "MGPU503 cannot read the folder (Permission denied); the files in it were not processed."
    assert f"{locked}:1:1: {message}" in out
    assert out.endswith("1 file scanned, 1 would be rewritten, 0 need attention, 1 failed; 1 call site: 1 would be "
                        "rewritten, 0 reported, 0 untouched\n")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads folders whatever their permissions")
def test_unreadable_sub_folder_for_real(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "train.py").write_bytes(SMALL_LEGACY)
    (tmp_path / "train.py").write_bytes(SMALL_LEGACY)
    locked.chmod(0)
    try:
        code, out = _run_folder(tmp_path, capsys, "--check")
    finally:
        locked.chmod(0o755)
    assert code == 2 and "MGPU503 cannot read the folder" in out and "1 would be rewritten" in out


def _notebook(cells, **top):
    import json

    return json.dumps({"nbformat": 4, "nbformat_minor": 2, "metadata": {}, "cells": cells, **top}, indent=1)


LEGACY_CELL = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
               "source": SMALL_LEGACY.decode().splitlines(keepends=True)}


def test_truncated_notebook(tmp_path, capsys):
    text = _notebook([LEGACY_CELL])
    (tmp_path / "nb.ipynb").write_text(text[: text.rindex("}")])  # the last brace lost
    code, out = _run_folder(tmp_path, capsys)
    assert code == 2 and "nb.ipynb: cannot parse as Python 3: not a readable notebook" in out and "[MGPU501]" in out


def test_deeply_nested_notebook_metadata(tmp_path, capsys):
    depth = 100_000
    text = _notebook([LEGACY_CELL])
    (tmp_path / "nb.ipynb").write_text(text[:-1] + ', "deep": ' + "[" * depth + "]" * depth + "}")
    deep_metadata = '"metadata": {"x": ' + "[" * depth + "]" * depth + "}"
    (tmp_path / "plain.ipynb").write_text(_notebook([]).replace('"metadata": {}', deep_metadata))
    code, out = _run_folder(tmp_path, capsys, "--check")
    assert code == 2
    assert "nb.ipynb:1:1: MGPU505 nested too deeply to parse safely (JSON nesting" in out
    assert "plain.ipynb" not in out  # no legacy code in it: nothing to read it for
    assert out.endswith("2 files scanned, 0 would be rewritten, 0 need attention, 1 failed\n")


def test_nbformat_3_notebook_is_reported(tmp_path, capsys):
    import json

    old = {"nbformat": 3, "nbformat_minor": 0, "metadata": {"name": ""}, "worksheets": [{"cells": [
        {"cell_type": "code", "language": "python", "input": SMALL_LEGACY.decode().splitlines(True), "outputs": []}]}]}
    (tmp_path / "old.ipynb").write_text(json.dumps(old))
    code, out = _run_folder(tmp_path, capsys)
    assert code == 2
    assert "old.ipynb:1:1: MGPU508 nbformat 3 notebook" in out and "jupyter nbconvert --to notebook --nbformat 4" in out


def test_cells_without_cell_type_are_reported(tmp_path, capsys):
    untyped = {"metadata": {}, "source": ["x = 1\n"]}
    notebook = tmp_path / "nb.ipynb"
    notebook.write_text(_notebook([LEGACY_CELL, untyped, dict(LEGACY_CELL), untyped]))
    before = notebook.read_bytes()
    code, out = _run_folder(tmp_path, capsys)
    assert code == 2 and notebook.read_bytes() == before
    assert "nb.ipynb:cell 2:line 1:col 1: MGPU508 cells 2, 4 without a `cell_type`" in out


def test_report_into_a_missing_folder_is_created(tmp_path, capsys):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "bad.py").write_bytes(b'print "x"\n')
    report = tmp_path / "reports" / "ci" / "multi_gpu_codemod.json"
    assert main(["--format", "json", "--report", str(report), str(tmp_path / "src")]) == 2
    import json

    assert json.loads(report.read_text())["summary"]["failed"] == 1


def test_report_that_cannot_be_written_is_a_clear_error(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    (tmp_path / "train.py").write_bytes(SMALL_LEGACY)
    assert main(["--report", str(blocker / "r.txt"), str(tmp_path / "train.py")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"multi-gpu-codemod: error: cannot write the report to {blocker / 'r.txt'}: ")
    assert "Traceback" not in err
    assert (tmp_path / "train.py").read_bytes() == SMALL_LEGACY  # nothing done without a report
