"""Report how long each notebook took, so the time budgets (lesson 3 min, exercises 2 min) stay visible; make
nbval wake a kernel that stops answering (course_lib.instructor.watchdog)."""

from collections import defaultdict

_notebook_seconds: dict[str, float] = defaultdict(float)


def pytest_runtest_logreport(report):
    if report.nodeid.split("::")[0].endswith(".ipynb"):
        _notebook_seconds[report.nodeid.split("::")[0]] += report.duration


def pytest_terminal_summary(terminalreporter):
    if not _notebook_seconds:
        return
    terminalreporter.section("notebook run times (budget: lessons 180 s, solutions/exercises 120 s)")
    for path, seconds in sorted(_notebook_seconds.items()):
        budget = 180 if path.startswith("notebooks/") else 120
        flag = "" if seconds <= budget else "   OVER BUDGET"
        terminalreporter.write_line(f"{seconds:7.1f} s  {path}{flag}")


def pytest_configure(config):
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


def pytest_collection_modifyitems(items):
    for item in items:
        if hasattr(item, "output_timeout"):
            item.output_timeout = NBVAL_OUTPUT_TIMEOUT
