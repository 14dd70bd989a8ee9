"""Grading a class on a Dask cluster: ``course-lib grade ... --scheduler local`` (a local cluster of ``--jobs``
workers, embedded in the run) or ``--scheduler tcp://HOST:8786`` (any Dask cluster: dask-jobqueue on Slurm or
PBS, dask-kubernetes, ``dask scheduler`` + ``dask worker`` by hand).

The process that runs ``course-lib grade`` owns the CSV: it reads each submission (a regular file only, as the
local grader does), sends its bytes and the release's to a worker, and writes each row once, when its
submission finishes, in the order they finish. A worker grades with
:func:`~course_lib.instructor.submission.grade_submission`, in its own bubblewrap sandbox as the local grader
does, and refuses without one (the run then stops: :class:`NoSandboxOnWorker`). A worker that dies mid-run
(killed, out of memory) loses no row: Dask gives its submissions to another worker, and a submission whose
grading killed workers several times gets a row saying it was not graded. Workers need course_lib (the same
version: the checks' fingerprints tell) and bubblewrap; they need no shared disk.
"""

from __future__ import annotations

import tempfile
import traceback
from dataclasses import asdict
from pathlib import Path

LOCAL = "local"


class NoSandboxOnWorker(Exception):
    """A worker has no working sandbox: nothing may be graded there."""


def _grade_on_worker(job: dict, name: str, data: bytes, release: bytes, student: str) -> dict:
    """Runs on a Dask worker: the submission's bytes graded in the worker's own sandbox; the Submission as a dict
    (and, when the grader itself failed, its traceback under "traceback")."""
    from course_lib.instructor import sandbox
    from course_lib.instructor.submission import Submission, grade_submission

    support = sandbox.detect()
    if job["sandboxed"] and not support.bwrap:
        import socket

        raise NoSandboxOnWorker(f"worker {socket.gethostname()}: {sandbox.refusal(support)}")
    with tempfile.TemporaryDirectory(prefix="course-lib-grade-") as folder:
        release_path = Path(folder) / Path(job["release"]).name
        release_path.write_bytes(release)
        path = Path(folder) / "submission" / name
        path.parent.mkdir()
        path.write_bytes(data)
        try:
            sub = grade_submission(
                path,
                release_path,
                lesson=job["lesson"],
                student=student,
                cell_timeout=job["cell_timeout"],
                budget=job["budget"],
                limits=sandbox.Limits(**job["limits"]),
                sandboxed=job["sandboxed"],
            )
        except sandbox.SandboxUnavailable as exc:
            raise NoSandboxOnWorker(str(exc)) from None
        except Exception:  # ours, never the student's: the row says so, the instructor's log gets the traceback
            sub = Submission(student=student, path="")
            sub.problems.append(
                f"not graded: the grader failed on this submission (see {job['log']}); tell your instructor"
            )
            return {**asdict(sub), "traceback": traceback.format_exc()}
    return asdict(sub)


def client_for(scheduler: str, jobs: int):
    """A Dask client: on an embedded local cluster of ``jobs`` single-threaded worker processes (``"local"``), or
    on the scheduler at ``scheduler``. The caller closes it (and the local cluster with it)."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise ValueError(
            "--scheduler needs Dask: pip install -c constraints.txt 'course-lib[cluster]' (or 'dask[distributed]')"
        ) from None
    if scheduler == LOCAL:
        # one thread per worker: each grades one submission at a time, as --jobs does; a kernel uses one thread
        cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
        client.close_cluster = cluster  # closed with the client (see close)
        return client
    if not isinstance(scheduler, str) or "://" not in scheduler:
        raise ValueError(
            f"--scheduler must be 'local' or a Dask scheduler address such as tcp://host:8786, got {scheduler!r}"
        )
    return Client(scheduler, timeout="30s")


def _sandbox_here(sandboxed: bool) -> str:
    """On a worker: "" when it can grade (a working sandbox, or none asked for), else why not."""
    import socket

    from course_lib.instructor import sandbox

    support = sandbox.detect()
    return "" if support.bwrap or not sandboxed else f"worker {socket.gethostname()}: {sandbox.refusal(support)}"


def refusals(client, sandboxed: bool) -> list[str]:
    """Why each worker that cannot grade cannot (asked of every worker before anything is graded)."""
    return [why for why in client.run(_sandbox_here, sandboxed).values() if why]


def close(client) -> None:
    cluster = getattr(client, "close_cluster", None)
    client.close()
    if cluster is not None:
        cluster.close()


def run_all(entries, job: dict, client, log_file=None):
    """Grade every entry on the cluster behind ``client``; yield each Submission once, as it finishes.

    Raises :class:`NoSandboxOnWorker` (after cancelling the rest) when a worker has no working sandbox.
    """
    from dask.distributed import as_completed

    from course_lib.instructor.submission import MAX_NOTEBOOK_BYTES, Submission, grade_submission, read_regular, shown

    release = Path(job["release"]).read_bytes()
    [release_on_cluster] = client.scatter([release], broadcast=True)
    futures = {}
    for entry in entries:
        try:
            data = read_regular(entry.path, MAX_NOTEBOOK_BYTES)
        except ValueError:
            # a link, a FIFO, a file over the limit: grade_submission reports it without running anything
            yield grade_submission(
                entry.path, job["release"], lesson=job["lesson"], student=entry.student, sandboxed=False
            )
            continue
        name = Path(entry.path).name if Path(entry.path).suffix == ".ipynb" else "submission.ipynb"
        future = client.submit(
            _grade_on_worker,
            job,
            name,
            data,
            release_on_cluster,
            entry.student,
            pure=False,
            key=f"grade-{len(futures)}",
        )
        futures[future] = entry
    done = set()
    try:
        for future in as_completed(list(futures)):
            entry = futures[future]
            if future.key in done:  # never twice, whatever the scheduler reports
                continue
            done.add(future.key)
            try:
                record = future.result()
            except NoSandboxOnWorker:
                raise
            except Exception as exc:  # KilledWorker: its grading took workers down each time it was tried
                sub = Submission(student=entry.student, path=shown(str(entry.path)))
                sub.problems.append(
                    f"not graded: the grader's workers failed on it ({type(exc).__name__}); tell your instructor"
                )
                yield sub
                continue
            tb = record.pop("traceback", None)
            if tb and log_file is not None:
                log_file.write(f"{entry.student}: grading failed:\n{tb}".encode())
                log_file.flush()
            sub = Submission(**record)
            sub.path = shown(str(entry.path))  # the instructor's path, not the worker's copy
            yield sub
    finally:
        client.cancel([f for f in futures if f.key not in done])
