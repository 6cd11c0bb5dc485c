"""Running the codemod over files: each read within its limits and rewritten (in a bounded child
when libcst parses it), many at once in a pool, the rewrite written back atomically."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from .core import TransformResult, transform_source
from .files import FileChangedError, NotRegularFileError, file_may_contain_site, read_regular, write_atomically
from .findings import Finding
from .isolation import Limits, die_with_parent, run_isolated, too_large, unexpected
from .prefilter import may_contain_site
from .sites import SiteStatus

__all__ = ["Outcome", "outcomes", "process_file", "unreadable_folder", "write_outcome"]

DEFAULT_LIMITS = Limits()
_CHECK_IN_PROCESS_BELOW = 256 << 10  # Python's own check of a file without a marker: cheap below this


@dataclass
class Outcome:
    """One file's result as sent back from a worker: `output` only when it changed."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    source: bytes | None = None
    output: bytes | None = None
    failed: bool = False
    sites: list[SiteStatus] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.output is not None and not self.failed


def process_file(path: str, strategy: str = "mirrored", limits: Limits = DEFAULT_LIMITS) -> Outcome:
    """Reads and transforms one file (a worker's job); never raises."""
    try:
        return _process(path, strategy, limits)
    except Exception as error:  # noqa: BLE001 - the last line of defence: one file never ends the run
        return Outcome(path, [unexpected(path, f"{type(error).__name__}: {error}".splitlines()[0][:300])], failed=True)


def _process(path: str, strategy: str, limits: Limits) -> Outcome:
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):  # a FIFO would block the run forever once opened
            return Outcome(path, [_not_regular(path, info.st_mode)], failed=True)
        limit = limits.for_path(path)
        if info.st_size > limit:
            return _oversized(path, info.st_size, limit)
        source = read_regular(path, limit)
        if source is None:  # grew past the limit since the stat
            return _oversized(path, os.stat(path).st_size, limit)
    except NotRegularFileError as error:
        return Outcome(path, [_not_regular(path, error.mode)], failed=True)
    except OSError as error:
        reason = error.strerror or type(error).__name__
        message = f"cannot read the file ({reason}); check the path and permissions."
        return Outcome(path, [Finding(1, 1, "MGPU503", message, path)], failed=True)
    if path.endswith(".ipynb") and strategy == "multi-worker":
        return Outcome(path, [Finding(1, 1, "MGPU703", (
            "notebooks are not rewritten with --strategy multi-worker: every worker runs the same script "
            "with its own TF_CONFIG; export the notebook to a script (`jupyter nbconvert --to script`) and rerun."
        ), path)])
    work = partial(_transform, source, path, strategy)
    if may_contain_site(source) or len(source) > _CHECK_IN_PROCESS_BELOW:  # libcst, or a big ast: bounded, in a child
        value, findings = run_isolated(work, path, limits)
        if not isinstance(value, TransformResult):
            return Outcome(path, findings, failed=True)
        result = value
    else:  # only Python's own checks run on a small file: cheap, and they raise nothing uncaught
        result = work()
    if result.changed:
        return Outcome(path, result.findings, source, result.output, sites=result.sites)
    return Outcome(path, result.findings, failed=result.failed, sites=result.sites)


def _transform(source: bytes, path: str, strategy: str) -> TransformResult:
    if path.endswith(".ipynb"):
        from .notebook import transform_notebook

        return transform_notebook(source, path)
    return transform_source(source, path, strategy=strategy)


def _not_regular(path: str, mode: int) -> Finding:
    kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a directory" if stat.S_ISDIR(mode)
            else "not a regular file")
    return Finding(1, 1, "MGPU506", (
        f"{kind}, not a regular file: never opened, left as it is. Leave it out of the paths given "
        "(or rename it) if it is not Python source."
    ), path)


def _oversized(path: str, size: int, limit: int) -> Outcome:
    """Too large to parse: reported if it may hold a site, else left alone (it cannot hold one)."""
    if file_may_contain_site(path):
        return Outcome(path, [too_large(path, size, limit)], failed=True)
    return Outcome(path)


def outcomes(paths: list[str], jobs: int, strategy: str = "mirrored",
              limits: Limits = DEFAULT_LIMITS) -> Iterator[Outcome]:
    work = partial(process_file, strategy=strategy, limits=limits)
    if jobs <= 1 or len(paths) < 8:
        yield from map(work, paths)
        return
    chunk = max(1, min(64, len(paths) // (jobs * 8)))
    done = 0
    # Workers end with this process, even when it is killed without a chance to stop them.
    workers = min(jobs, len(paths))
    with ProcessPoolExecutor(max_workers=workers, initializer=die_with_parent, initargs=(os.getpid(),)) as pool:
        try:
            for outcome in pool.map(work, paths, chunksize=chunk):
                done += 1
                yield outcome
        except BrokenProcessPool:  # a worker was killed from outside: finish here, one file at a time
            yield from map(work, paths[done:])


def unreadable_folder(folder: Path, reason: str) -> Outcome:
    return Outcome(str(folder), [Finding(1, 1, "MGPU503", (
        f"cannot read the folder ({reason}); the files in it were not processed. Check its permissions and rerun."
    ), str(folder))], failed=True)


def write_outcome(outcome: Outcome) -> None:
    """Replaces the file with the rewrite; a file that cannot be replaced fails with a finding."""
    try:
        write_atomically(Path(outcome.path), outcome.output or b"", expected=outcome.source)
    except FileChangedError:
        outcome.findings.append(Finding(1, 1, "MGPU507", (
            "the file changed on disk while the codemod ran (edited or saved meanwhile?); "
            "not replaced, your version is kept. Rerun the codemod on it."
        ), outcome.path))
        outcome.failed = True
    except OSError as error:
        outcome.findings.append(Finding(
            1, 1, "MGPU503",
            f"cannot write the file ({error.strerror or error}); left unchanged. Make it writable and rerun.",
            outcome.path,
        ))
        outcome.failed = True
    except Exception as error:  # noqa: BLE001 - one file never ends the run
        outcome.findings.append(unexpected(outcome.path, f"{type(error).__name__}: {error}".splitlines()[0]))
        outcome.failed = True
