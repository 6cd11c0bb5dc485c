"""The codemod on the real-world corpus (fixtures/realworld): legacy code in the shapes found in
public repositories, written for this project. Every file: no crash, output that parses, a second
run changes nothing, no comment lost. Every site: the outcome its manifest entry asks for."""

from __future__ import annotations

import ast
import functools
import io
import json
import tokenize

import pytest


from child_process import run_on_two_simulated_gpus
from codemod_fixtures import deleted_definition_lines, lost_comments, needs_tensorflow
from realworld import ROOT, cells, code_text, corpus_files, grade, manifest, run_file

# Each corpus file is migrated once for the module: its site and contract tests read the same run.
_migrated = functools.lru_cache(maxsize=None)(run_file)

FILES = corpus_files()
IDS = [p.relative_to(ROOT).as_posix() for p in FILES]
# Tiny scripts whose migrated form must train on 2 simulated GPUs without the shim.
RUNNABLE = ["runnable/optimizer_before_branch.py", "runnable/inputs_above_branch.py", "runnable/blank_lines_kept.py",
            "runnable/checkpoint_branch.py", "runnable/alias_and_attribute_reads.py",
            "runnable/head_on_parallel_output.py", "runnable/own_strategy_scope.py",
            "runnable/device_settings_in_construction.py", "runnable/template_reloaded_in_try.py",
            "runnable/same_count_both_branches.py", "runnable/kfold_strategy_once.py"]


def _sites() -> list[tuple[str, dict]]:
    found = []
    for path, sites in manifest()["files"].items():
        if isinstance(sites, list):
            found += [(path, site) for site in sites]
    return found


SITES = _sites()


def test_corpus_is_large_and_every_file_is_in_the_manifest():
    listed = set(manifest()["files"])
    assert len(FILES) >= 60
    assert set(IDS) == listed, "every corpus file says what must happen to it"
    assert sum(p.suffix == ".ipynb" for p in FILES) >= 5


def _compiles(path, data: bytes) -> None:
    if path.suffix != ".ipynb":
        ast.parse(data)
        return
    for number, source in cells(data):
        lines = ["pass" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n")]
        try:
            ast.parse("\n".join(lines))
        except SyntaxError as error:
            raise AssertionError(f"cell {number} does not compile on its own: {error}\n{source}") from None


def _comments(text: str) -> list[str]:
    return [t.string for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT]


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_file_is_rewritten_safely(path):
    run = _migrated(path)
    assert run.error is None, run.error
    assert not run.failed, [f.format() for f in run.findings]
    _compiles(path, run.output)
    again = run_file(path, run.output)
    assert again.error is None and again.output == run.output, "a second run must change nothing"
    if path.suffix == ".ipynb":
        json.loads(run.output)
        before, after = "\n".join(s for _, s in cells(run.source)), "\n".join(s for _, s in cells(run.output))
        before = "\n".join(line for line in before.split("\n") if not line.lstrip().startswith(("%", "!")))
        after = "\n".join(line for line in after.split("\n") if not line.lstrip().startswith(("%", "!")))
    else:
        before, after = run.source.decode("utf-8"), run.output.decode("utf-8")
    # only comments on what the migration removed go (the CPU placement, the wrapper: stale_comments.py;
    # a deleted copied helper's own)
    gone = deleted_definition_lines(before, after) if path.suffix != ".ipynb" else set()
    missing = lost_comments(before, after, gone)
    assert not missing, f"comments lost: {missing}"


@pytest.mark.parametrize("path", [p for p, i in zip(FILES, IDS) if manifest()["files"].get(i) == "quiet"],
                         ids=lambda p: p.name)
def test_code_that_is_not_ours_is_left_alone_without_a_word(path):
    run = _migrated(path)
    assert run.output == run.source and run.findings == []


@pytest.mark.parametrize("rel,site", SITES, ids=[f"{p}:{s['at'].splitlines()[0][:40]}" for p, s in SITES])
def test_site_outcome(rel, site):
    path = ROOT / rel
    (graded,) = grade(path, _migrated(path), [site])
    required = {"rewritten": "rewritten", "quiet": "quiet"}.get(site["expect"], "reported")
    assert graded.outcome == required, f"{graded.outcome}: {graded.detail}\n" + code_text(path, _migrated(path).output)


def test_at_least_half_of_the_sites_are_rewritten():
    rewritten = [s for _, s in SITES if s["expect"] == "rewritten"]
    assert len(rewritten) * 2 >= len(SITES)


@pytest.mark.slow
@needs_tensorflow
@pytest.mark.parametrize("name", RUNNABLE)
def test_migrated_script_trains_on_two_simulated_gpus(name, tmp_path):
    run_on_two_simulated_gpus(ROOT / name, tmp_path)


@pytest.mark.slow
@needs_tensorflow
def test_a_migrated_inference_script_predicts_what_the_shim_run_predicts(tmp_path):
    # round 43, db20: a predict-only script (no compile) is rewritten; its migrated form must
    # predict on 2 simulated GPUs what the unchanged script predicts through the shim
    from multi_gpu_codemod import verify

    report = verify.verify(ROOT / "runnable/predict_only.py", modes=("shim", "migrated"), workdir=tmp_path,
                           timeout=600)
    assert report.passed, [r.error for r in report.runs.values()]
    compared = [c for c in report.comparisons if c.metric == "predictions"]
    assert compared and all(c.status == "ok" for c in compared), compared
