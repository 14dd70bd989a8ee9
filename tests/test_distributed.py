"""Grading on a Dask cluster (course_lib.instructor.distributed): the same CSV as local workers, no row lost or
duplicated when a worker is killed, and a worker without a sandbox refuses as the local grader does."""

import csv
import os
import signal
import threading
import time
from pathlib import Path

import nbformat
import pytest

from course_lib.instructor import fingerprint, grading, sandbox

pytest.importorskip("dask.distributed")
pytestmark = pytest.mark.skipif(not sandbox.detect().bwrap, reason="no bubblewrap sandbox on this machine")

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "solutions" / "01_ngrams.ipynb"


def _cell(nb, exercise):
    gid = f"ex-{exercise.replace('.', '-')}"
    return next(c for c in nb.cells if (c.metadata.get("nbgrader") or {}).get("grade_id") == gid)


@pytest.fixture(scope="module")
def small_class(tmp_path_factory):
    """Lesson 01's release kept to its setup, answer and check cells (cheap to grade), and three students."""
    tmp = tmp_path_factory.mktemp("dask")
    nb = nbformat.read(ROOT / "exercises" / "01_ngrams.ipynb", as_version=4)
    setup = next(c for c in nb.cells if c.cell_type == "code")
    nb.cells = [c for c in nb.cells if c is setup or (c.metadata.get("nbgrader") or {}).get("grade_id")]
    fingerprint.stamp(nb, "01")
    release = tmp / "01_ngrams.ipynb"
    nbformat.write(nb, release)
    solution = nbformat.read(SOLUTION, as_version=4)
    subs = tmp / "subs"
    subs.mkdir()
    for name, solved in {"ann": ["1.1", "1.2", "1.3", "1.4", "1.5"], "bob": ["1.1", "1.3"], "cy": []}.items():
        student = nbformat.read(release, as_version=4)
        for e in solved:
            _cell(student, e).source = _cell(solution, e).source
        nbformat.write(student, subs / f"{name}.ipynb")
    (subs / "notes.ipynb").write_text("not a notebook")
    return tmp, release, subs


def _grade(small_class, out_name, **kwargs):
    tmp, release, subs = small_class
    out = tmp / out_name
    grading.grade(
        [subs], "01", out, release=release, jobs=2, cell_timeout=60, budget=300,
        limits=sandbox.Limits(memory_mb=1500), progress=None, **kwargs,
    )  # fmt: skip
    with open(out, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return rows


def _comparable(rows):
    return sorted(rows, key=lambda r: r["student"])


def test_a_local_cluster_of_two_workers_grades_as_jobs_2_does(small_class):
    local = _grade(small_class, "local.csv")
    dask = _grade(small_class, "dask.csv", scheduler="local")
    assert _comparable(dask) == _comparable(local)
    assert [r["points"] for r in sorted(dask, key=lambda r: r["student"])] == ["9", "2", "0", "0"]


def test_a_worker_killed_mid_run_loses_no_row_and_duplicates_none(small_class):
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        from dask.distributed import Client

        with Client(cluster) as client:
            pids = list(client.run(os.getpid).values())

            def kill_one():
                time.sleep(8)  # the workers are grading by then (each submission takes longer)
                os.kill(pids[0], signal.SIGKILL)

            killer = threading.Thread(target=kill_one)
            killer.start()
            rows = _grade(small_class, "killed.csv", scheduler=cluster.scheduler_address)
            killer.join()
    assert sorted(r["student"] for r in rows) == ["ann", "bob", "cy", "notes"]  # each once
    by = {r["student"]: r for r in rows}
    assert (by["ann"]["points"], by["bob"]["points"], by["cy"]["points"]) == ("9", "2", "0")


def test_a_worker_without_a_sandbox_refuses_before_any_row(small_class, tmp_path):
    from dask.distributed import LocalCluster

    empty = tmp_path / "empty-path"
    empty.mkdir()  # a PATH without bwrap: the worker's sandbox check finds none
    with LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None, env={"PATH": str(empty)}
    ) as cluster:
        tmp, _, _ = small_class
        with pytest.raises(grading.InstructorError, match="bubblewrap"):
            _grade(small_class, "nosandbox.csv", scheduler=cluster.scheduler_address)
    out = tmp / "nosandbox.csv"
    assert not out.exists() or out.read_text() == ""
