"""The test run as a whole: how its work is shared between the two cores, what it reports at the end, and nbval
waking a kernel that stops answering (course_lib.instructor.watchdog).

`make test` runs one pytest over tests/ (the lessons executed once by tests/test_headless.py, the launch
environments) and the solutions and exercises notebooks; `make test-more` the lessons under nbval, the browser,
and the grades on Dask and by nbgrader (the Makefile says why). Both use pytest-xdist (`-n 2`). The scheduler below
sends out work in units; items that must stay together form one unit, which one worker runs in order:
- a notebook's cells under nbval (one kernel, cells in order);
- the browser tests (one JupyterLab and one Chromium per worker would double the memory and the start-up);
- the grading tests, in two units (each grade starts sandboxed kernels; two units, not one per file, keep the
  run at about one grader per core);
- the lesson executions of tests/test_headless.py and the site tests that reuse them (the executed lesson
  is kept where the site looks for it, so it must exist before the site is built).
Units go out longest first (the order below), then one at a time to whichever worker is free, so the last
minutes are not one long unit on one worker. (pytest-xdist's own `--dist loadgroup` marks items by renaming
their node ids, which pytest 9 no longer allows: the groups stayed split.)
"""

from __future__ import annotations

import os
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest

BUDGET_SECONDS = {"make test": 20 * 60, "lesson": 180, "notebook": 120}
GROUPS = {  # test file or folder (relative to the repository), by prefix -> the unit it belongs to
    "tests/test_headless.py": "lessons",  # first in its unit: it keeps each executed lesson for the site
    "tests/test_site.py": "lessons",
    "tests/browser/test_site.py": "lessons",
    "tests/browser/": "browser",
    "tests/test_launch_envs.py": "launch",  # fresh virtual environments, pip: mostly waiting on the disk
    # the grader, in two units of about the same length (one alone was the whole run's longest path)
    "tests/test_grading.py": "grading",
    "tests/test_grading_stall.py": "grading",
    "tests/test_sandbox.py": "grading",
    "tests/test_gradebook.py": "grading",
    "tests/test_grading_harness.py": "grading",
    "tests/test_regrade.py": "grading",
    "tests/test_grading": "grading-more",  # test_grading_answers.py, test_grading_safety.py
    "tests/test_nbgrader_agreement.py": "grading-more",
    "tests/test_distributed.py": "grading-more",
}
FIRST = ("grading", "grading-more", "lessons", "launch", "browser")  # the longest units, sent out first

_notebook_seconds: dict[str, float] = defaultdict(float)
_item_seconds: dict[str, float] = defaultdict(float)
_started = time.monotonic()


def _group_of(nodeid: str) -> str | None:
    path = nodeid.split("::")[0]
    if path.endswith(".ipynb"):
        return path
    return next((group for prefix, group in GROUPS.items() if path.startswith(prefix)), None)


def _order(item) -> tuple[int, int]:
    """Longest units first, then the notebooks, then the rest; test_headless leads its unit."""
    group = _group_of(item.nodeid) or ""
    rank = FIRST.index(group) if group in FIRST else len(FIRST) + (0 if ".ipynb" in item.nodeid else 1)
    return rank, 0 if item.nodeid.startswith("tests/test_headless.py") else 1


def pytest_collection_modifyitems(config, items):
    for item in items:
        if hasattr(item, "output_timeout"):
            item.output_timeout = NBVAL_OUTPUT_TIMEOUT
    _reuse_passed_notebooks(config, items)
    _reuse_passed_items(config, items)
    items.sort(key=_order)  # stable: the order inside a unit is kept


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's scheduler by scope, with our units: a group, or else a test on its own."""
    from xdist.scheduler import LoadScopeScheduling

    class UnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _group_of(nodeid) or nodeid

    config.option.loadscopereorder = False  # keep our order: longest units first
    return UnitScheduling(config, log)


# --- a local second run reuses what passed with the same inputs (never in CI) ---
#
# Executing a notebook is most of a run. Where every input of a notebook is what it was when all its items last
# passed (site.fingerprint: the notebook, course_lib's sources and weights, constraints.txt, the Python and torch
# versions), a LOCAL run leaves its items out and says so. CI (the CI variable is set, as .ci/run has it) and
# REUSE=0 (make test REUSE=0) always execute everything. The record is kept in .pytest_cache/course-notebooks/.
# Items that stand for one notebook: its nbval cells, and the tests marked notebook_run(path). Workers collect
# and leave items out alike (the records do not change during a run); the process that reports writes them.


def _reuse_off() -> bool:
    """CI, and REUSE=0, run everything: nothing from an earlier run is left out."""
    return bool(os.environ.get("CI")) or os.environ.get("REUSE", "1") == "0"


_passed_items: dict[str, set[str]] = defaultdict(set)
_expected_items: dict[str, int] = {}
_failed_notebooks: set[str] = set()


def _notebook_of(item) -> str | None:
    """The execution an item stands for: 'PATH' for nbval's cells, 'PATH (FILE)' for a test marked
    notebook_run(PATH) in FILE (another executor: its record is its own, so it never stands in for nbval's)."""
    path = item.nodeid.split("::")[0]
    if path.endswith(".ipynb"):
        return path
    marker = item.get_closest_marker("notebook_run")
    return f"{marker.args[0]} ({Path(path).stem})" if marker else None


def _record(rootpath, execution: str) -> Path | None:
    from course_lib.instructor import site

    source = Path(rootpath) / execution.split(" ")[0]
    if not source.exists():
        return None
    key = site.fingerprint(source, Path(rootpath))
    return Path(rootpath) / ".pytest_cache" / "course-notebooks" / f"{_record_name(execution)}-{key}"


def _record_name(execution: str) -> str:
    return execution.replace("/", "-").replace(" (", "@").rstrip(")")


def _reuse_passed_notebooks(config, items) -> None:
    of_item = {item.nodeid: nb for item in items if (nb := _notebook_of(item))}
    counts = defaultdict(int)
    for nb in of_item.values():
        counts[nb] += 1
    for item in items:  # reaches the reporting process with each report (xdist sends user_properties)
        if item.nodeid in of_item:
            item.user_properties += [
                ("course_notebook", of_item[item.nodeid]),
                ("course_items", counts[of_item[item.nodeid]]),
            ]
    if _reuse_off():
        return
    try:
        reused = {nb for nb in counts if (record := _record(config.rootpath, nb)) and record.exists()}
    except ImportError:  # course_lib's instructor tools missing: nothing to compare with
        return
    if reused:
        kept = [it for it in items if of_item.get(it.nodeid) not in reused]
        config.hook.pytest_deselected(items=[it for it in items if of_item.get(it.nodeid) in reused])
        items[:] = kept
        config._course_reused = sorted(reused)


def _note_notebook_result(report) -> None:
    props = dict(report.user_properties)
    notebook = props.get("course_notebook")
    if not notebook:
        return
    _expected_items[notebook] = props["course_items"]
    if report.failed or report.skipped:
        _failed_notebooks.add(notebook)
    elif report.when == "call":
        _passed_items[notebook].add(report.nodeid)


# --- a local second run leaves out every test that passed on the same tree (never in CI) ---
#
# The key is the whole working tree as git sees it (every tracked file and every untracked one that is not
# ignored, by content: the tests, conftest, course_lib, its weights, the notebooks, constraints.txt), the Python
# version and every installed distribution's version. A test that passed under that key passes again; one that
# failed, was skipped or is new runs. Any edit anywhere changes the key, and the next run runs everything.

_passed_tests: set[str] = set()
_not_passed_tests: set[str] = set()


def _tree_key(rootpath) -> str | None:
    """A hash of every input of a run, or None where git cannot list the tree (then nothing is reused)."""
    import hashlib
    import platform
    import subprocess
    import sysconfig
    from importlib.metadata import distributions

    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=rootpath, capture_output=True, check=True, timeout=60,
        ).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    digest = hashlib.sha256(f"python {platform.python_version()} {platform.machine()}".encode())
    for name in sorted(n for n in set(listed.split(b"\0")) - {b""} if not n.startswith(b".pytest_cache/")):
        path = Path(rootpath) / name.decode("utf-8", "surrogateescape")
        digest.update(name + b"\0")
        if path.is_file():
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    # the environment's own site-packages only: what else sys.path holds depends on the process and the moment
    # (setuptools puts its vendored packages on it when first imported; the current folder's *.egg-info), and a
    # worker's key at collection must be the one the run recorded at its end
    where = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    installed = sorted(f"{d.metadata['Name']}=={d.version}" for d in distributions(path=where) if d.metadata["Name"])
    digest.update("\n".join(installed).encode())
    return digest.hexdigest()[:16]


def _passed_record(config) -> Path | None:
    if not hasattr(config, "_course_tree_key"):
        config._course_tree_key = _tree_key(config.rootpath)
    key = config._course_tree_key
    return Path(config.rootpath) / ".pytest_cache" / "course-passed" / key if key else None


def _reuse_passed_items(config, items) -> None:
    if _reuse_off():
        return
    record = _passed_record(config)
    if record is None or not record.exists():
        return
    passed = set(record.read_text(encoding="utf-8").splitlines())
    # a notebook's cells only together (each cell needs the ones before it): all of them passed, or none is left out
    cells = defaultdict(list)
    for it in items:
        if it.nodeid.split("::")[0].endswith(".ipynb"):
            cells[it.nodeid.split("::")[0]].append(it.nodeid)
    passed -= {nodeid for ids in cells.values() if not passed.issuperset(ids) for nodeid in ids}
    left_out = [it for it in items if it.nodeid in passed]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [it for it in items if it.nodeid not in passed]
        if not os.environ.get("PYTEST_XDIST_WORKER"):
            config._course_reused_items = len(left_out)


def _note_test_result(report) -> None:
    if report.failed or report.skipped:
        _not_passed_tests.add(report.nodeid)
    elif report.when == "call":
        _passed_tests.add(report.nodeid)


def _record_passed_items(config) -> None:
    if os.environ.get("CI"):
        return  # CI's clone is thrown away: nothing to record
    record = _passed_record(config)
    if record is None:
        return
    record.parent.mkdir(parents=True, exist_ok=True)
    before = set(record.read_text(encoding="utf-8").splitlines()) if record.exists() else set()
    for old in record.parent.iterdir():
        if old != record:
            old.unlink()  # an earlier tree's record: never valid again for this one
    record.write_text("\n".join(sorted((before | _passed_tests) - _not_passed_tests)), encoding="utf-8")


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # the controller has every report
    _record_passed_items(session.config)
    for notebook, passed in _passed_items.items():
        if notebook in _failed_notebooks or len(passed) != _expected_items[notebook]:
            continue
        try:
            record = _record(session.config.rootpath, notebook)
        except ImportError:
            return
        if record:
            record.parent.mkdir(parents=True, exist_ok=True)
            for old in record.parent.glob(f"{_record_name(notebook)}-*"):
                old.unlink()
            record.touch()


def pytest_runtest_logreport(report):
    _note_notebook_result(report)
    _note_test_result(report)
    _item_seconds[report.nodeid] += report.duration
    if report.nodeid.split("::")[0].endswith(".ipynb"):
        _notebook_seconds[report.nodeid.split("::")[0]] += report.duration


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_terminal_summary(terminalreporter):
    # what this machine could not run (no bubblewrap, no chromium, no apt on macOS or Fedora, ...), said once per
    # reason instead of hidden in a count of skips
    skipped = Counter(_skip_reason(r) for r in terminalreporter.stats.get("skipped", []))
    if skipped:
        terminalreporter.section("not run on this machine (skipped), by reason")
        for reason, count in skipped.most_common():
            terminalreporter.write_line(f"{count:5d}  {reason}")
    items = getattr(terminalreporter.config, "_course_reused_items", 0)
    if items:
        terminalreporter.section("tests not run again (passed before on this same tree; REUSE=0 runs them)")
        terminalreporter.write_line(f"  {items} tests passed on this tree before: those selected now were left out")
    reused = getattr(terminalreporter.config, "_course_reused", [])
    if reused:
        terminalreporter.section("notebooks not executed again (passed before with the same inputs; REUSE=0 runs them)")
        for notebook in reused:
            terminalreporter.write_line(f"  {notebook}")
    if _notebook_seconds:
        terminalreporter.section("notebook run times (budget: lessons 180 s, solutions/exercises 120 s)")
        for path, seconds in sorted(_notebook_seconds.items()):
            budget = BUDGET_SECONDS["lesson" if path.startswith("notebooks/") else "notebook"]
            flag = "" if seconds <= budget else "   OVER BUDGET"
            terminalreporter.write_line(f"{seconds:7.1f} s  {path}{flag}")
    if not _item_seconds:
        return
    wall = time.monotonic() - _started
    terminalreporter.section("test-time budget (README: make test within 20 minutes, install included)")
    terminalreporter.write_line(
        f"this run: {wall / 60:.1f} min of wall time, {sum(_item_seconds.values()) / 60:.1f} min of test time "
        f"over {len(_item_seconds)} items"
    )
    terminalreporter.write_line("the ten slowest items (notebooks counted whole):")
    whole = dict(_notebook_seconds)
    whole.update({k: v for k, v in _item_seconds.items() if not k.split("::")[0].endswith(".ipynb")})
    for nodeid, seconds in sorted(whole.items(), key=lambda kv: -kv[1])[:10]:
        terminalreporter.write_line(f"{seconds:7.1f} s  {nodeid}")
    by_file: dict[str, float] = defaultdict(float)
    for nodeid, seconds in _item_seconds.items():
        by_file[nodeid.split("::")[0]] += seconds
    terminalreporter.write_line("the ten costliest files (where the test time goes):")
    for path, seconds in sorted(by_file.items(), key=lambda kv: -kv[1])[:10]:
        terminalreporter.write_line(f"{seconds:7.1f} s  {path}")


def pytest_configure(config):
    if not os.environ.get("PYTEST_XDIST_WORKER") and not os.environ.get("CI"):
        record = _passed_record(config)  # the tree's key now, before any test runs (workers take theirs too)
        if record and record.exists() and not _reuse_off():
            config._course_reused_items = len(record.read_text(encoding="utf-8").splitlines())
    config.addinivalue_line(
        "markers", "notebook_run(path): the test executes that notebook and depends on nothing else"
    )
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # two workers on two cores: torch's own threads would only fight each other (benchmarks/bench_threads.py)
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        try:
            import torch

            torch.set_num_threads(1)
        except ImportError:
            pass
    try:
        from course_lib.instructor import watchdog
    except ImportError:  # nbclient missing: no notebooks are executed here either
        return
    try:
        watchdog.patch_nbval()
    except ImportError:  # nbval missing
        pass


# nbval waits 5 s for each output message after a cell's reply; a kernel that computes on every core (torch)
# can starve its own output thread longer than that on a loaded machine, and the cell fails for no fault.
NBVAL_OUTPUT_TIMEOUT = 60
