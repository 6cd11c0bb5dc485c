"""codemod/cli.py and reports.py: --format text|json|github, --report FILE, -j/--jobs, progress, pre-commit hook."""

import json
import shutil
from pathlib import Path

import pytest

from multi_gpu_codemod.cli import main
from codemod_fixtures import ROOT

LEGACY = (ROOT / "seed" / "xception_doc.before.py").read_bytes()
MIGRATED = (ROOT / "seed" / "xception_doc.after.py").read_bytes()


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_bytes(LEGACY)
    shutil.copy(ROOT / "strategy_scope" / "template_is_parameter.unchanged.py", tmp_path / "lib.py")
    shutil.copy(ROOT / "hostile" / "py2_print.py", tmp_path / "old.py")
    shutil.copy(ROOT / "notebooks" / "train.before.ipynb", tmp_path / "nb.ipynb")
    for i in range(30):
        (tmp_path / f"other_{i}.py").write_text(f"x = {i}\n")
    return tmp_path


def test_json_report_schema(tmp_path, capsys):
    _tree(tmp_path)
    report = tmp_path.parent / "report.json"
    assert main(["--check", "--format", "json", "--report", str(report), str(tmp_path)]) == 2
    doc = json.loads(report.read_text())
    assert doc["version"] == 1 and doc["mode"] == "check"
    assert doc["summary"] == {"scanned": 34, "rewritten": 2, "attention": 1, "failed": 1, "skipped": 0,
                             "sites": {"rewritten": 2, "reported": 1, "untouched": 0}}
    assert {f["file"]: f["status"] for f in doc["files"]} == {
        str(tmp_path / "lib.py"): "needs attention", str(tmp_path / "nb.ipynb"): "rewritten",
        str(tmp_path / "old.py"): "failed", str(tmp_path / "train.py"): "rewritten",
    }
    for record in doc["findings"]:
        assert list(record) == ["file", "line", "col", "cell", "code", "message", "fixed"]
    by_code = {r["code"]: r for r in doc["findings"]}
    assert by_code["MGPU101"]["line"] == 5 and by_code["MGPU101"]["fixed"] is False
    assert by_code["MGPU501"]["file"] == str(tmp_path / "old.py") and by_code["MGPU501"]["cell"] is None
    out = capsys.readouterr()
    assert out.out.startswith("34 files scanned, 2 would be rewritten")  # summary still on the terminal


def test_json_on_stdout_is_clean(tmp_path, capsys):
    (tmp_path / "train.py").write_bytes(LEGACY)
    assert main(["--check", "--format", "json", str(tmp_path)]) == 1
    out = capsys.readouterr()
    assert json.loads(out.out)["summary"]["rewritten"] == 1
    assert "1 file scanned" in out.err


def test_github_annotations(tmp_path, capsys):
    _tree(tmp_path)
    assert main(["--check", "--format", "github", str(tmp_path)]) == 2
    lines = capsys.readouterr().out.splitlines()
    assert f"::warning file={tmp_path / 'lib.py'},line=5,col=16,title=MGPU101::" in "\n".join(lines)
    error = next(line for line in lines if line.startswith("::error "))
    assert f"file={tmp_path / 'old.py'},line=3,col=1,title=MGPU501::cannot parse as Python 3" in error


def test_github_escaping():
    from multi_gpu_codemod.reports import github_annotation
    from multi_gpu_codemod.findings import Finding

    line = github_annotation(Finding(1, 2, "MGPU101", "50% a\nb", "a,b:c.py"), False)
    assert line == "::warning file=a%2Cb%3Ac.py,line=1,col=2,title=MGPU101::50%25 a%0Ab"
    cell = github_annotation(Finding(3, 4, "MGPU101", "m", "n.ipynb", cell=2), True)
    assert cell == "::warning file=n.ipynb,title=MGPU101 (file rewritten)::cell 2, line 3, col 4: m"


def test_text_report_file(tmp_path, capsys):
    _tree(tmp_path)
    report = tmp_path.parent / "report.txt"
    assert main(["--check", "--report", str(report), str(tmp_path)]) == 2
    text = report.read_text().splitlines()
    assert any(" MGPU101 " in line for line in text) and text[-1].startswith("34 files scanned")
    assert capsys.readouterr().out.startswith("34 files scanned")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_jobs_give_the_same_result(tmp_path, capsys, jobs):
    _tree(tmp_path)
    assert main(["-j", jobs, str(tmp_path)]) == 2
    assert (tmp_path / "train.py").read_bytes() == MIGRATED
    assert (tmp_path / "nb.ipynb").read_bytes() == (ROOT / "notebooks" / "train.after.ipynb").read_bytes()
    out = capsys.readouterr().out
    assert out.endswith("34 files scanned, 2 rewritten, 1 needs attention, 1 failed; 3 call sites: 2 rewritten, 1 "
                        "reported, "
                        "0 untouched\n")


def test_progress_only_when_asked_or_terminal(tmp_path, capsys):
    _tree(tmp_path)
    main(["--check", str(tmp_path)])
    assert "\r" not in capsys.readouterr().err  # not a terminal: silent
    main(["--check", "--progress", "always", str(tmp_path)])
    assert "[34/34]" in capsys.readouterr().err


def test_pre_commit_hook_manifest():
    text = (Path(__file__).resolve().parents[2] / ".pre-commit-hooks.yaml").read_text()
    for needed in ("- id: multi-gpu-codemod", "entry: multi-gpu-codemod", "language: python",
                   "types_or: [python, jupyter]"):
        assert needed in text
