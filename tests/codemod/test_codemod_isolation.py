"""codemod/isolation.py and the CLI's limits: size, time and memory per file; a crash stays in its child."""

import json
import time

import pytest

from multi_gpu_codemod import run_files
from multi_gpu_codemod.cli import main
from multi_gpu_codemod.core import transform_source
from multi_gpu_codemod.isolation import Limits, memory_budget, parse_size, run_isolated
from codemod_fixtures import ROOT

LEGACY = (ROOT / "seed" / "xception_doc.before.py").read_bytes()  # 1213 bytes
MIGRATED = (ROOT / "seed" / "xception_doc.after.py").read_bytes()


def test_file_over_the_size_limit_with_legacy_code_is_reported(tmp_path, capsys):
    script = tmp_path / "train.py"
    script.write_bytes(LEGACY)
    assert main(["--max-size", "1K", str(script)]) == 2
    assert script.read_bytes() == LEGACY
    out = capsys.readouterr().out
    assert f"{script}:1:1: MGPU504 file too large to rewrite safely (1.18 KiB, limit 1 KiB)" in out
    assert "higher `--max-size`" in out
    assert main(["--max-size", "2K", str(script)]) == 1 and script.read_bytes() == MIGRATED


def test_huge_generated_files_are_bounded_by_the_default_limit(tmp_path, capsys):
    listing = tmp_path / "data.py"  # a 27 MB list literal: no marker, so never parsed
    with listing.open("w") as handle:
        handle.write("DATA = [\n")
        for _ in range(30_000):
            handle.write("0.123456789, " * 70 + "\n")
        handle.write("]\n")
    legacy = tmp_path / "train.py"  # 20 MB of generated code and a legacy site at its end
    with legacy.open("wb") as handle:
        for n in range(400_000):
            handle.write(b"value_%d = %d * 2 + 1\n" % (n, n))
        handle.write(LEGACY)
    assert listing.stat().st_size > 27e6 and legacy.stat().st_size > 9e6
    assert main(["--format", "json", str(tmp_path)]) == 2
    report = json.loads(capsys.readouterr().out)
    assert report["summary"] == {"scanned": 2, "rewritten": 0, "attention": 0, "failed": 1, "skipped": 0,
                                 "sites": {"rewritten": 0, "reported": 0, "untouched": 0}}
    [finding] = report["findings"]
    assert finding["file"] == str(legacy) and finding["code"] == "MGPU504" and "limit 1 MiB" in finding["message"]


def test_marker_split_across_read_chunks_is_found(tmp_path, capsys):
    script = tmp_path / "train.py"
    padding = (1 << 20) - len("# ") - 4  # `multi_gpu` straddles the first 1 MiB read
    script.write_bytes(b"# " + b"x" * padding + b"\n# multi_gpu_model\n")
    assert main(["--max-size", "64K", str(script)]) == 2
    assert "MGPU504" in capsys.readouterr().out


def test_notebooks_may_be_ten_times_the_limit(tmp_path, capsys):
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
            "source": LEGACY.decode().splitlines(keepends=True)}
    notebook = tmp_path / "nb.ipynb"
    notebook.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 2, "metadata": {}, "cells": [cell]}, indent=1))
    size = notebook.stat().st_size
    assert main(["--check", "--max-size", str(size // 10 - 1), str(notebook)]) == 2
    assert "MGPU504 file too large" in capsys.readouterr().out
    assert main(["--check", "--max-size", str(size // 10 + 1), str(notebook)]) == 1


@pytest.mark.parametrize("bad", ["0", "-1", "lots", "", "1T"])
def test_bad_max_size_is_a_usage_error(bad, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--max-size", bad, "x.py"])
    assert stop.value.code == 2 and "--max-size: not a size" in capsys.readouterr().err


def test_parse_size():
    assert [parse_size(t) for t in ("1000", "512K", "2M", "1G", "1.5m", "64kb")] == [
        1000, 512 << 10, 2 << 20, 1 << 30, 3 << 19, 64 << 10]


def test_rewrite_over_the_time_limit_is_reported_and_the_run_goes_on(tmp_path, capsys, monkeypatch):
    real = run_files._transform

    def slow_for_one(source, path, strategy):
        if path.endswith("a_slow.py"):
            time.sleep(60)  # stands for a pathological file; the child is killed long before
        return real(source, path, strategy)

    monkeypatch.setattr(run_files, "_transform", slow_for_one)
    (tmp_path / "a_slow.py").write_bytes(LEGACY)
    (tmp_path / "b_train.py").write_bytes(LEGACY)
    assert main(["--timeout", "3", str(tmp_path)]) == 2  # b_train.py needs a fraction of it
    out = capsys.readouterr().out
    assert f"{tmp_path / 'a_slow.py'}:1:1: MGPU504 processing the file took longer than the time limit (3 s)" in out
    assert out.endswith("2 files scanned, 1 rewritten, 0 need attention, 1 failed; 1 call site: 1 rewritten, 0 "
                        "reported, 0 untouched\n")
    assert (tmp_path / "a_slow.py").read_bytes() == LEGACY and (tmp_path / "b_train.py").read_bytes() == MIGRATED


def test_memory_is_bounded_in_the_child():
    value, findings = run_isolated(lambda: len(bytearray(8 << 30)), "big.py", Limits(memory=256 << 20))
    assert value is None
    [finding] = findings
    assert finding.code == "MGPU504" and "more memory than allowed (256 MiB per file)" in finding.message


def test_child_answers_and_exceptions():
    assert run_isolated(lambda: transform_source(LEGACY).output, "t.py", Limits()) == (MIGRATED, [])

    def broken():
        raise LookupError("nobody expected this")

    value, [finding] = run_isolated(broken, "t.py", Limits())
    assert value is None and finding.code == "MGPU502"
    assert "LookupError: nobody expected this" in finding.message and "migrate this file by hand" in finding.message


def test_deep_code_gets_a_deep_stack_in_the_child():
    source = ("x = " + " + ".join(["1"] * 1100) + "\n").encode() + LEGACY
    assert transform_source(source).failed  # in-process, the default recursion limit
    value, findings = run_isolated(lambda: transform_source(source), "t.py", Limits())
    assert findings == [] and value.changed and not value.failed


def test_memory_budget_shares_half_the_machine_between_workers():
    import os

    physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    for jobs in (1, 2, 8, 64):
        budget = memory_budget(jobs)
        assert 256 << 20 <= budget <= 4 << 30
        assert budget == 256 << 20 or budget * jobs <= physical // 2
    assert memory_budget(1, cap=1 << 30) <= 1 << 30


def test_raised_size_limit_still_bounds_a_big_file_without_legacy_code(tmp_path, capsys):
    listing = tmp_path / "data.py"  # Python's own check of it runs in a child too, bounded in time
    listing.write_text("DATA = [\n" + "0.123456789, " * 40_000 + "\n]\n")
    assert main(["--max-size", "10M", str(listing)]) == 0
    assert main(["--max-size", "10M", "--timeout", "0.001", str(listing)]) == 2
    assert "MGPU504 processing the file took longer than the time limit (0.001 s)" in capsys.readouterr().out
