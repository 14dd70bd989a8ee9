"""`make test` on a machine without apt (macOS, Fedora): the install steps it runs first say what will not run
and let the run go on (exit 0), instead of failing at the first step. Simulated here with a PATH that has no
apt-get, no bwrap and no npm, and no chromium where the script looks for it."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def no_apt_path(tmp_path):
    """A PATH with the few commands the scripts use besides the ones a machine without apt lacks."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for tool in ("id", "dirname", "head", "sed", "grep"):
        found = shutil.which(tool)
        assert found, tool
        (bin_ / tool).symlink_to(found)
    return str(bin_)


def run(script: str, path: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["/bin/bash", str(ROOT / "scripts" / script)],
        env={"PATH": path, "HOME": os.environ.get("HOME", "/tmp"), **env},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )


def test_without_apt_the_sandbox_step_says_what_is_skipped_and_lets_make_test_go_on(no_apt_path):
    done = run("install_sandbox.sh", no_apt_path)
    assert done.returncode == 0, done.stderr
    assert "no apt-get here" in done.stderr and "skipped" in done.stderr and "refuses to run" in done.stderr
    assert "bubblewrap: missing" in done.stdout


def test_without_apt_the_browser_step_says_what_is_skipped_and_lets_make_test_more_go_on(no_apt_path, tmp_path):
    done = run("install_browser.sh", no_apt_path, CHROMIUM=str(tmp_path / "no-chromium"))
    assert done.returncode == 0, done.stderr
    assert "no apt-get here" in done.stderr and "will be skipped" in done.stderr


def test_the_run_ends_with_what_it_skipped_by_reason():
    """conftest.py's summary, given the skip reports pytest hands it (in make test, those of every worker)."""
    import importlib.util
    from types import SimpleNamespace

    spec = importlib.util.spec_from_file_location("course_conftest", ROOT / "conftest.py")
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    skip = lambda reason: SimpleNamespace(longrepr=("tests/x.py", 3, f"Skipped: {reason}"))  # noqa: E731
    lines = []
    reporter = SimpleNamespace(
        stats={"skipped": [skip("no bubblewrap sandbox"), skip("no chromium"), skip("no bubblewrap sandbox")]},
        config=SimpleNamespace(),
        section=lambda title: lines.append(f"== {title}"),
        write_line=lines.append,
    )
    conftest.pytest_terminal_summary(reporter)
    assert lines[:3] == [
        "== not run on this machine (skipped), by reason",
        "    2  no bubblewrap sandbox",
        "    1  no chromium",
    ]


def test_the_install_leaves_bytecode_for_what_a_grading_kernel_imports():
    """The sandbox mounts the packages read-only, so a grading kernel can never write a .pyc: what it imports must
    have one from the install (scripts/warm_bytecode.py), or each kernel compiles torch and IPython from source."""
    probe = (
        "import importlib, os, sys\n"
        "for name in sys.argv[1:]:\n"
        "    importlib.import_module(name)\n"
        "specs = {n: getattr(m, '__spec__', None) for n, m in sys.modules.items()}\n"
        "missing = [n for n, s in specs.items() if s and s.cached and not os.path.exists(s.cached)]\n"
        "print(len(sys.modules), len(missing), missing[:5])\n"
    )
    # as in the sandbox: nothing may be written, so only what exists counts
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    names = ["torch", "IPython", "ipykernel.kernelapp", "matplotlib.pyplot", "course_lib.checks", "course_lib.notebook"]
    done = subprocess.run(
        [sys.executable, "-c", probe, *names], env=env, capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    imported, missing, some = done.stdout.split(" ", 2)
    assert int(imported) > 500 and int(missing) == 0, f"{missing} of {imported} modules have no .pyc, e.g. {some}"


def test_the_bytecode_warm_up_refuses_to_run_where_it_could_write_nothing():
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "warm_bytecode.py")],
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "PYTHONDONTWRITEBYTECODE" in done.stderr
