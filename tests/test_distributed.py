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

from course_lib import checks
from course_lib.instructor import fingerprint, grading, sandbox
from course_lib.instructor.points import exercise_points

pytest.importorskip("dask.distributed")
pytestmark = pytest.mark.skipif(not sandbox.detect().bwrap, reason="no bubblewrap sandbox on this machine")

ROOT = Path(__file__).resolve().parents[1]
LESSON, NAME = "06", "06_masked_attention.ipynb"  # the cheapest lesson to grade
SOLUTION = ROOT / "solutions" / NAME


def _cell(nb, exercise):
    gid = f"ex-{exercise.replace('.', '-')}"
    return next(c for c in nb.cells if (c.metadata.get("nbgrader") or {}).get("grade_id") == gid)


@pytest.fixture(scope="module")
def small_class(tmp_path_factory):
    """Lesson 06's release kept to its setup, answer and check cells (cheap to grade), and three students."""
    tmp = tmp_path_factory.mktemp("dask")
    nb = nbformat.read(ROOT / "exercises" / NAME, as_version=4)
    setup = next(c for c in nb.cells if c.cell_type == "code")
    nb.cells = [c for c in nb.cells if c is setup or (c.metadata.get("nbgrader") or {}).get("grade_id")]
    fingerprint.stamp(nb, LESSON)
    release = tmp / NAME
    nbformat.write(nb, release)
    solution = nbformat.read(SOLUTION, as_version=4)
    subs = tmp / "subs"
    subs.mkdir()
    for name, solved in {"ann": ["6.1", "6.2", "6.3", "6.4"], "bob": ["6.1", "6.3"], "cy": []}.items():
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
        [subs], LESSON, out, release=release, jobs=2, cell_timeout=60, budget=300,
        limits=sandbox.Limits(memory_mb=1500), progress=None, **kwargs,
    )  # fmt: skip
    with open(out, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return rows


def _expected_points(small_class):
    """ann solved everything, bob 6.1 and 6.3, cy nothing, notes is not a notebook: by the release's points."""
    worth = exercise_points(nbformat.read(small_class[1], as_version=4), list(checks.exercises(LESSON)))
    return {"ann": sum(worth.values()), "bob": worth["6.1"] + worth["6.3"], "cy": 0, "notes": 0}


def _points(rows):
    return {r["student"]: float(r["points"]) for r in rows}


def _comparable(rows):
    return sorted(rows, key=lambda r: r["student"])


def test_a_local_cluster_of_two_workers_grades_as_jobs_2_does(small_class):
    local = _grade(small_class, "local.csv")
    dask = _grade(small_class, "dask.csv", scheduler="local")
    assert _comparable(dask) == _comparable(local)
    assert _points(dask) == _expected_points(small_class)


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
    assert _points(rows) == _expected_points(small_class)


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
