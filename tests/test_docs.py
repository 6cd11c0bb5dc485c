"""Every fenced code block of README.md and MIGRATION.md is executed or checked.

Convention: an HTML comment on the line just before a fence steers the check.
- `<!-- docs-test: before NAME -->` / `<!-- docs-test: after NAME -->`: a codemod before/after
  pair; the codemod must turn the first block into exactly the second.
- `<!-- docs-test: skip REASON -->`: cannot run here (real GPUs, a 2-machine cluster); python is
  then only `ast.parse`d, bash only `bash -n`. Keep these few.
- `<!-- docs-test: slow REASON -->`: a bash command too slow for this file (another test runs
  it); its arguments are still parsed by the real argument parser.
Python blocks run in a fresh interpreter on 2 simulated GPUs in a scratch folder. Bash blocks:
`bash -n`, then each command is run (cheap codemod invocations on files that exist, `multi-gpu-compat
doctor`) or checked (`pip install` lines parsed; scripts and paths must exist; placeholder
paths only parsed). `r` blocks need Rscript. `text` blocks show output or formats.
"""

from __future__ import annotations

import ast
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from child_process import child_env, simulated_gpus_env

ROOT = Path(__file__).resolve().parents[1]
DOCS = ["README.md", "MIGRATION.md"]
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.M | re.S)
MARK = re.compile(r"<!--\s*docs-test:\s*(\w+)\s*(.*?)\s*-->")
NOT_CODE = {"text", "json", "yaml", "console", ""}
MAX_SKIPS = 3
NO_GPU = {"CUDA_VISIBLE_DEVICES": ""}  # commands run on the CPU alone


def _blocks():
    out = []
    for doc in DOCS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
            mark = MARK.search(before)
            line = text[: m.start()].count("\n") + 1
            out.append((doc, line, m.group(1).lower(), m.group(2),
                        (mark.group(1), mark.group(2)) if mark else (None, "")))
    return out


BLOCKS = _blocks()
IDS = [f"{doc}:{line}:{lang or 'plain'}" for doc, line, lang, _, _ in BLOCKS]


def test_docs_have_blocks_and_few_skips():
    assert len(BLOCKS) >= 10
    skips = [(doc, line) for doc, line, _, _, (kind, _) in BLOCKS if kind == "skip"]
    assert len(skips) <= MAX_SKIPS, skips
    kinds = {lang for _, _, lang, _, _ in BLOCKS}
    assert kinds <= NOT_CODE | {"python", "bash", "r"}, kinds
    pairs = [reason for *_, (kind, reason) in BLOCKS if kind in ("before", "after")]
    assert all(pairs.count(name) == 2 for name in pairs), pairs  # one before, one after each


def test_every_python_block_parses():
    for doc, line, lang, code, _ in BLOCKS:
        if lang == "python":
            ast.parse(code, f"{doc}:{line}")


def _runs_python(lang: str, mark: tuple) -> bool:
    return lang == "python" and mark[0] not in ("skip", "before", "after")


# Python and shell blocks are checked; output samples are not code, and R blocks run in test_r_reticulate.py.
# Python examples train in a TensorFlow child: slow. Their syntax and the before/after pairs stay fast.
PARAMS = [pytest.param(*block, id=name, marks=[pytest.mark.slow] if _runs_python(block[2], block[4]) else [])
          for block, name in zip(BLOCKS, IDS) if block[2] in ("python", "bash")]


@pytest.mark.parametrize("doc,line,lang,code,mark", PARAMS)
def test_block(doc, line, lang, code, mark, tmp_path):
    kind, reason = mark
    if lang == "python":
        _python(code, kind, reason, tmp_path)
    else:
        _bash(code, kind, tmp_path)


def _python(code, kind, reason, tmp_path):
    ast.parse(code)
    if kind == "skip":
        return
    if kind in ("before", "after"):
        if kind == "before":
            from multi_gpu_codemod import transform_source

            after = [c for _, _, _, c, (k, r) in BLOCKS if k == "after" and r == reason]
            assert after, f"no after block for {reason}"
            assert transform_source(code.encode()).output.decode() == after[0]
        return
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          env=simulated_gpus_env(2), timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


def _run(argv: list[str], cwd: Path, extra: dict[str, str] | None = None,
         timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=child_env({**NO_GPU, **(extra or {})}), capture_output=True,
                          text=True, timeout=timeout)


def _commands(code):
    for raw in code.splitlines():
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if line:
            yield shlex.split(line)


def _bash(code, kind, tmp_path):
    assert subprocess.run(["bash", "-n", "-c", code]).returncode == 0
    if kind == "skip":
        return
    for argv in _commands(code):
        env_prefix = {}
        while argv and re.match(r"^[A-Z_]+=", argv[0]):
            key, _, value = argv.pop(0).partition("=")
            env_prefix[key] = value
        _command(argv, env_prefix, kind, tmp_path)


def _exists(path):
    return (ROOT / path).exists()


def _command(argv, env_prefix, kind, tmp_path):
    prog = argv[0]
    if prog == "pip":
        assert argv[1] == "install"
        return
    if prog == "bash":
        script = ROOT / argv[1]
        assert script.is_file(), script
        assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
        return
    if prog == "export":
        return
    # The console scripts are `python -m` of the installed packages (test_console_scripts).
    if prog == "multi-gpu-codemod":
        argv = ["python", "-m", "multi_gpu_codemod"] + argv[1:]
    if prog == "multi-gpu-compat":
        argv = ["python", "-m", "multi_gpu_compat"] + argv[1:]
    assert argv[0] == "python", argv
    if argv[1:3] == ["-m", "multi_gpu_codemod"]:
        from multi_gpu_codemod import arguments

        args = arguments.parse([a for a in argv[3:] if a != "..."] or ["--help"])
        if args.command == "verify":
            assert _exists(args.script), args.script
            if kind != "slow":
                done = _run([sys.executable] + argv[1:], ROOT, timeout=600)
                assert done.returncode == 0, done.stdout[-3000:]
        elif all(_exists(p) for p in args.paths) and (args.check or args.diff):
            done = _run([sys.executable] + argv[1:], ROOT)
            assert done.returncode in (0, 1), done.stderr[-3000:]
        return
    if argv[1:3] == ["-m", "multi_gpu_compat"]:
        if argv[3] == "doctor":
            done = _run([sys.executable] + argv[1:], ROOT, env_prefix)
            assert done.returncode == 0, done.stderr[-3000:]
        else:  # placeholder file names: the subcommand must exist
            done = _run([sys.executable, "-m", "multi_gpu_compat", argv[3], "--help"], ROOT)
            assert done.returncode == 0, done.stderr[-3000:]
        return
    if argv[1:3] == ["-m", "libcst.tool"]:
        import importlib

        module, _, name = argv[argv.index("-x") + 1].rpartition(".")
        assert hasattr(importlib.import_module(module), name)
        return
    # `python SCRIPT`: a placeholder script (train.py) in prose; the env settings must be valid.
    script = argv[1]
    if _exists(script):
        done = _run([sys.executable, script], tmp_path, env_prefix)
        assert done.returncode == 0, done.stderr[-3000:]
    else:
        assert script.endswith(".py")
        for key, value in env_prefix.items():
            if key == "MULTI_GPU_COMPAT_SIMULATE_GPUS":
                assert int(value) >= 1
