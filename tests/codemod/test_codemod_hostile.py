"""codemod/core.py on hostile input: Python 2, syntax errors, null bytes, binaries, encodings, layout."""

import ast
import difflib
import os
import time
from pathlib import Path

import pytest

from codemod import transform_source
from codemod.cli import main
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
    assert checked > 20


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
    source = b"".join(line + (b"\r\n" if i % 3 == 0 else b"\r" if i % 3 == 1 else b"\n") for i, line in enumerate(lines[:-1]))
    result = transform_source(source)
    assert result.changed
    _unchanged_lines_kept(source, result.output)
    ast.parse(result.output)
    assert b"# complicate weight sharing." in result.output
    assert transform_source(result.output).output == result.output


def test_files_without_markers_are_not_parsed_by_libcst(monkeypatch):
    import libcst

    def boom(*args, **kwargs):
        raise AssertionError("libcst parse on a file without a marker")

    monkeypatch.setattr(libcst, "parse_module", boom)
    result = transform_source(b"import numpy as np\nprint(np.ones(3))\n")
    assert not result.changed and not result.findings and not result.failed


def test_prefilter_markers_cover_the_recogniser():
    from codemod import recognise
    from codemod.prefilter import MARKERS, may_contain_site

    names = {"multi_gpu_model", "AltModelCheckpoint", *recognise._HELPER_FUNCTIONS, *recognise._WRAPPER_NAMES}
    assert all(may_contain_site(n.encode()) for n in names)
    for fixture in ROOT.glob("*/*.before.py"):
        assert may_contain_site(fixture.read_bytes()), fixture
    for fixture in ROOT.glob("*/*.py"):
        source = fixture.read_bytes()
        assert transform_source(source).output == transform_source(source, prefilter=False).output
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
