"""Grade a folder of exercise submissions so that the grade cannot be forged and no student reaches another.

    course-lib grade submissions/ --lesson 01 --out grades.csv --jobs 2

For each submission the grader

1. copies it (a regular file only: a symlink, a FIFO or a folder is reported, never followed) into a
   scratch folder of its own, which is all the student's kernel can see: the kernel runs in a
   bubblewrap sandbox (:mod:`course_lib.instructor.sandbox`) with limits on memory, processes, CPU time
   and file size, and everything it started is killed afterwards;
2. puts back the setup cell and every locked check cell from the released exercise notebook;
3. executes the notebook (a cell past its time limit is interrupted, a cell that ignores the interrupt
   gets the kernel killed; the whole notebook has a total budget; output is capped as it streams), only
   to report its problems;
4. decides the grade itself from the answer cells alone: a fresh sandboxed process loads the released
   setup cell and the answer cells (top level: imports, definitions, constants), the grader draws each
   check's inputs with a seed that process never sees, the student's function runs on them there under an
   observer, only plain data (numbers, strings, arrays) comes back, read strictly with a size cap, and the
   comparison and the hints run here, in the grader. Nothing the notebook's kernel prints, records or
   writes counts;
5. appends the student's row to the CSV as soon as the submission is done, so an interrupted run keeps
   what it graded, and running the same command again resumes after the last row.

Problems of the instructor's own making (no kernel, no exercises for the lesson, an output path that
cannot be written) stop the run with a clear message before any student is graded.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path

from course_lib import _project
from course_lib.instructor import fingerprint, gradebook, points, sandbox
from course_lib.instructor.ids import sort_key
from course_lib.instructor.release import expected_exercises, release, release_notebook, restore_checks
from course_lib.instructor.roster import Entry, collect, feedback_names, unique_names
from course_lib.instructor.submission import (
    FAILED,
    MAX_RECORD_BYTES,
    NOT_IMPLEMENTED,
    NOT_RUN,
    PASSED,
    Submission,
    feedback_text,
    find_release_for,
    grade_submission,
    protocol,
    read_regular,
    shown,
)

__all__ = [  # the grading API, wherever each piece lives
    "grade",
    "grade_submission",
    "release",
    "release_notebook",
    "restore_checks",
    "feedback_text",
    "find_release_for",
    "collect",
    "feedback_names",
    "safe_cell",
    "read_regular",
    "Submission",
    "InstructorError",
    "PASSED",
    "FAILED",
    "NOT_IMPLEMENTED",
    "NOT_RUN",
]


class InstructorError(Exception):
    """A problem with the grading set-up, not with a student's work: stop before grading anyone."""


class Stopped(KeyboardInterrupt):
    """The run was stopped by a signal (SIGTERM, SIGHUP) and ends as Ctrl-C ends it: rows already written stay,
    every worker, kernel and sandbox it started is killed, its temporary folders are removed."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum
        self.name = signal.Signals(signum).name


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
# a signal that came while a row was being written waits for its end; once the run is stopping, another signal
# changes nothing (it would cut the clean-up short)
_STOP = {"holding": 0, "pending": None, "stopping": False}


def _on_stop(signum, frame) -> None:
    if _STOP["stopping"]:
        return
    if _STOP["holding"]:
        _STOP["pending"] = signum
        return
    _STOP["stopping"] = True
    raise Stopped(signum)


@contextlib.contextmanager
def stop_on_signals():
    """SIGTERM and SIGHUP stop :func:`grade` as Ctrl-C does (``course-lib grade`` runs it so); only in the main
    thread, where Python runs signal handlers; the previous handlers are put back."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, _on_stop) for s in STOP_SIGNALS}
    _STOP.update(holding=0, pending=None, stopping=False)
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def _whole():
    """What is written inside (a row, its feedback files) is written whole: SIGTERM or SIGHUP waits for the end
    (Ctrl-C too: its KeyboardInterrupt is held the same way), then stops the run."""
    previous = signal.getsignal(signal.SIGINT) if threading.current_thread() is threading.main_thread() else None
    if previous is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_stop)
    _STOP["holding"] += 1
    try:
        yield
    finally:
        _STOP["holding"] -= 1
        if previous is signal.default_int_handler:
            signal.signal(signal.SIGINT, previous)
        pending, _STOP["pending"] = _STOP["pending"], None
        if pending == signal.SIGINT:
            raise KeyboardInterrupt
        if pending is not None:
            _STOP["stopping"] = True
            raise Stopped(pending)


# what a spreadsheet reads as a formula at a cell's start, and the quote that marks text (quoted too, so that two
# names never give one cell: "-x" and "'-x" would both be written "'-x")
QUOTED = ("=", "+", "-", "@", "\t", "\r", "'")


def safe_cell(value) -> str:
    """A CSV cell a spreadsheet shows as text: a leading = + - @ (or tab, CR, or the quote itself) gets a quote before
    it; one to one, so gradebook's ``_unquoted`` gives the value back."""
    text = str(value)
    return "'" + text if text[:1] in QUOTED else text


def _header(exercises: list[str]) -> list[str]:
    head = ["student", "file", "score", "total"] + [f"ex {e}" for e in exercises]
    return head + points.columns(exercises) + ["checks", "problems"]


def _row(sub: Submission, exercises: list[str], worth: dict | None = None, checks: str = "") -> list[str]:
    cells = [sub.student, sub.path, sub.score, len(exercises)]
    cells += [sub.exercises.get(e, {}).get("status", NOT_RUN) for e in exercises]
    cells += points.cells(sub.exercises, worth or dict.fromkeys(exercises, 1), PASSED) + [checks]
    return [safe_cell(c) for c in cells + ["; ".join(sub.problems)]]


NBGRADER_FILES = ("gradebook.db", "nbgrader_config.py")  # what nbgrader writes in a course folder


def _nbgrader_course(folder: Path) -> bool:
    """Is ``folder`` nbgrader's course folder, passed instead of its submitted/ folder (one level too high: its
    submitted/ would be read as one student's folder, autograded/ and feedback/ as others)? Known by its own files
    (gradebook.db, nbgrader_config.py) beside a real submitted/ folder, and no notebook of its own: a student named
    ``submitted`` (a folder, or a link, among the others) is a student, graded, and stops no one's grading, also
    beside a stray upload named gradebook.db in a folder of students' notebooks (hostile class 33n)."""
    sub = folder / "submitted"
    if not folder.is_dir() or sub.is_symlink() or not sub.is_dir():
        return False
    if any(p.name.lower().endswith(".ipynb") for p in folder.iterdir()):
        return False  # a course folder holds no notebooks at its top: students' notebooks, the flat layout
    return any((folder / name).is_file() and not (folder / name).is_symlink() for name in NBGRADER_FILES)


def _previous_rows(out: Path, header: list[str]) -> set[str]:
    """Students already graded in ``out`` by an earlier, interrupted run of the same lesson."""
    if not out.exists():
        return set()
    with open(out, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows:
        return set()
    if rows[0] != header:
        raise InstructorError(f"{out} exists with other columns (another lesson?); choose another --out or remove it")
    return {row[0] for row in rows[1:] if row}


# A kernel's sockets are files in its worker's temporary folder (ZeroMQ's ipc transport), and Linux caps a socket
# file's path at 107 bytes: the longest path the grader makes there, below the temporary folder.
SOCKET_PATH = "course-lib-run-4194304-xxxxxxxx/course-lib-answers-xxxxxxxx/conn/kernel-65535"
MAX_SOCKET_PATH = 107


def preflight(lesson: str, release, out: Path, feedback_dir: Path) -> list[str]:
    """Everything that is the instructor's to fix, checked before any student is graded."""
    import importlib.util

    import nbformat

    longest = os.path.join(tempfile.gettempdir(), SOCKET_PATH)
    if len(os.fsencode(longest)) > MAX_SOCKET_PATH:
        raise InstructorError(
            f"the temporary folder {tempfile.gettempdir()} is too long a path for a kernel's sockets "
            f"({len(os.fsencode(longest))} of at most {MAX_SOCKET_PATH} bytes): set TMPDIR to a shorter folder, "
            "e.g. /tmp"
        )

    if importlib.util.find_spec("ipykernel") is None:
        raise InstructorError(
            f"no Jupyter kernel: ipykernel is not installed for {sys.executable} "
            f"({_project.install_command(extra='instructor')}, or pip install ipykernel)"
        )
    try:
        release_nb = nbformat.read(release, as_version=4)
    except Exception as exc:
        raise InstructorError(f"cannot read the released notebook {release}: {exc}") from None
    expected = expected_exercises(release_nb)
    if not expected:
        raise InstructorError(f"{release} has no exercises (no ex-N-M answer cells): is it the exercise notebook?")
    try:
        checked = protocol(lesson)
    except ValueError as exc:
        raise InstructorError(f"lesson {lesson}: {exc}") from None
    unknown = [e for e in expected if e not in checked]
    if unknown:
        raise InstructorError(
            f"{release} has exercise(s) {', '.join(unknown)} that course_lib has no check for: "
            "is it the exercise notebook of this version of the course?"
        )
    if out.is_dir():
        raise InstructorError(f"--out must be a CSV file, got the folder {out}")
    if out.suffix.lower() != ".csv":
        raise InstructorError(f"--out must end in .csv (a notebook name there would overwrite it), got {out}")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "a", encoding="utf-8"):
            pass
        feedback_dir.mkdir(parents=True, exist_ok=True)
        probe = feedback_dir / f".probe-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise InstructorError(f"cannot write the grades: {exc}") from None
    return expected


def _points_and_checks(release, lesson: str, exercises: list[str], accept: bool) -> tuple[dict, str, str]:
    """Each exercise's points, from the release's nbgrader metadata (:mod:`course_lib.instructor.points`), and
    whether the checks are those it was released with (:mod:`course_lib.instructor.fingerprint`): the rows'
    mark and a message, or InstructorError when they changed and ``accept`` is False."""
    import nbformat

    release_nb = nbformat.read(release, as_version=4)
    try:
        worth = points.exercise_points(release_nb, exercises)
        mark, message = fingerprint.compare(release_nb, lesson, exercises, accept=accept)
    except (ValueError, fingerprint.ChecksChanged) as exc:
        raise InstructorError(f"{release}: {exc}") from None
    return worth, mark, message


def grade(
    submissions,
    lesson: str,
    out,
    root=None,
    feedback_dir=None,
    cell_timeout: int = 120,
    budget: int = 900,
    jobs: int = 1,
    release=None,
    limits: sandbox.Limits | None = None,
    progress=print,
    sandboxed: bool = True,
    accept_changed_checks: bool = False,
    nbgrader_course=None,
    assignment: str | None = None,
    scheduler: str | None = None,
) -> list[Submission]:
    """Grade every submission; append one CSV row each to ``out`` as it finishes, and a feedback file each.

    Raises :class:`InstructorError` (nothing graded, nothing written) for set-up problems, among them no
    working sandbox while ``sandboxed`` (``--no-sandbox`` sets it False: the students' code then runs
    unconfined; the run warns at its start and end and writes ``<out>.UNSANDBOXED.txt`` beside the CSV,
    naming every student graded so). The tracebacks of anything that failed in the grader go to ``<out>.log``.
    Each row has points per exercise, their total and the maximum, from the release's nbgrader ``points``. A
    release that ``course-lib release`` stamped is compared with the checks that would grade: when one changed,
    the run stops naming it (InstructorError) unless ``accept_changed_checks``, and the ``checks`` column of
    every row says which were changed. With ``nbgrader_course`` (an nbgrader course folder) and ``assignment``,
    each graded submission also goes into its gradebook (:func:`course_lib.instructor.gradebook.to_nbgrader`).
    ``scheduler`` ("local", or a Dask scheduler's address) grades on a Dask cluster instead of local workers
    (:mod:`course_lib.instructor.distributed`); a worker without a working sandbox stops the run before any row.
    Ctrl-C stops the run (SIGTERM and SIGHUP too, inside :func:`stop_on_signals`, as ``course-lib grade`` runs
    it): rows already written stay whole, the students in progress get no row, every worker and what it started
    is killed, and the same call resumes.
    """
    from course_lib._validate import positive_int

    jobs = positive_int("jobs", jobs)
    cell_timeout = positive_int("cell_timeout", cell_timeout)
    budget = positive_int("budget", budget)
    if not isinstance(sandboxed, bool):
        raise ValueError(f"sandboxed must be True or False, got {sandboxed!r}")
    limits = limits or sandbox.Limits()
    say = progress or (lambda *a: None)
    support = sandbox.detect()
    if sandboxed and not support.bwrap:
        raise InstructorError(sandbox.refusal(support))  # before anything is written or run
    release = Path(release) if release else release_notebook(lesson, root)
    lesson = lesson[:2] if lesson else release.name[:2]
    out = Path(out)
    feedback_dir = Path(feedback_dir) if feedback_dir else out.with_name(out.stem + "_feedback")
    course = [Path(s) for s in submissions if _nbgrader_course(Path(s))]
    if course:
        raise ValueError(f"submissions: {course[0]} holds nbgrader's submitted/ folder; pass that folder itself")
    entries, warnings = collect(submissions, release.name)
    if not entries:
        raise ValueError("submissions: no notebooks found")
    entries = unique_names(entries)
    expected = preflight(lesson, release, out, feedback_dir)
    header = _header(sorted(expected, key=sort_key))
    if nbgrader_course is not None and not (isinstance(assignment, str) and assignment.strip()):
        raise InstructorError("--nbgrader needs --assignment NAME (the assignment's name in the nbgrader course)")
    paths = {e.student: e.path for e in entries}
    worth, mark, message = _points_and_checks(release, lesson, sorted(expected, key=sort_key), accept_changed_checks)
    if message:
        say(message)
    done = _previous_rows(out, header)
    files = feedback_names([e.student for e in entries])
    log = out.with_suffix(".log")
    marker = out.with_name(out.stem + ".UNSANDBOXED.txt")
    if not sandboxed:
        say(f"WARNING: grading WITHOUT the sandbox (--no-sandbox): {sandbox.NO_SANDBOX_RISK}.")
    for warning in warnings:
        say(f"warning: {warning}")
    say(f"isolation: {support.describe() if sandboxed else 'NONE (--no-sandbox); limits only'}")
    sandbox.sweep_cgroups()
    if done:
        say(f"resuming: {len(done)} student(s) already in {out}")
    todo = [e for e in entries if safe_cell(e.student) not in done]
    new_file = not out.exists() or out.stat().st_size == 0
    results: list[Submission] = []
    job = {
        "release": str(release),
        "lesson": lesson,
        "cell_timeout": cell_timeout,
        "budget": budget,
        "limits": asdict(limits),
        "sandboxed": sandboxed,
        "log": log.name,
    }
    client = _dask_client(scheduler, jobs, sandboxed) if scheduler else None  # refuses before anything is written
    with open(out, "a", newline="", encoding="utf-8") as f, open(log, "ab") as log_file:
        writer = csv.writer(f)
        if new_file:
            writer.writerow(header)
            f.flush()
        runner = (
            _run_all(todo, {**job, "support": asdict(support)}, jobs, budget, log_file, log.name)
            if client is None
            else _on_dask(client, todo, job, log_file)
        )
        try:
            for sub in runner:
                with _whole():
                    if not sandboxed:
                        with open(marker, "a", encoding="utf-8") as m:
                            if m.tell() == 0:
                                m.write(
                                    f"The students below in {out.name} were graded by `course-lib grade --no-sandbox`: "
                                    "their code ran unconfined on the grader's machine.\n"
                                )
                            m.write(f"{sub.student}\n")
                    writer.writerow(_row(sub, sorted(expected, key=sort_key), worth, mark))
                    f.flush()
                    os.fsync(f.fileno())
                    try:
                        text = feedback_text(sub, unsandboxed=not sandboxed)
                        (feedback_dir / f"{files[sub.student]}.md").write_text(text, encoding="utf-8")
                        page = gradebook.feedback_html(f"{release.stem}: {sub.student}", text)
                        (feedback_dir / f"{files[sub.student]}.html").write_text(page, encoding="utf-8")
                    except OSError as exc:  # the row is written; the run goes on
                        say(f"warning: {shown(sub.student)}: the feedback file could not be written ({exc})")
                    if nbgrader_course is not None:
                        _to_nbgrader(nbgrader_course, assignment, release, sub, files[sub.student], text, paths, say)
                    results.append(sub)
                    say(
                        f"{sub.student}: {sub.score}/{len(sub.exercises)} passed"
                        + (f"; {len(sub.problems)} problem(s)" if sub.problems else "")
                        + f" ({sub.seconds:.0f} s)"
                    )
        finally:  # stopped between two rows (Ctrl-C, SIGTERM): the workers go now, not when collected
            runner.close()
    if log.exists() and log.stat().st_size == 0:
        log.unlink()
    elif log.exists():
        say(f"the grader logged problems of its own in {log}")
    if not sandboxed:
        say(f"WARNING: graded WITHOUT the sandbox: the students' code ran unconfined; {marker.name} lists them.")
    return results


def _dask_client(scheduler: str, jobs: int, sandboxed: bool):
    from course_lib.instructor import distributed

    client = distributed.client_for(scheduler, jobs)
    why = distributed.refusals(client, sandboxed)
    if why:
        distributed.close(client)
        raise InstructorError("; ".join(why))
    return client


def _on_dask(client, todo, job, log_file):
    from course_lib.instructor import distributed

    try:
        yield from distributed.run_all(todo, job, client, log_file)
    except distributed.NoSandboxOnWorker as exc:
        raise InstructorError(f"{exc}; the rows already written stay") from None
    finally:
        distributed.close(client)


def _to_nbgrader(course, assignment, release, sub, student_id, feedback, paths, say) -> None:
    """One graded submission into the nbgrader gradebook, as ``student_id`` (its feedback file's name: a plain,
    unique folder name); a failure is said, naming the student, and the run goes on (the CSV row stands)."""
    import nbformat

    try:
        release_nb = nbformat.read(release, as_version=4)
        gradebook.to_nbgrader(course, assignment, release_nb, release.stem, sub, student_id, PASSED)
        gradebook.write_autograded(course, assignment, release.stem, student_id, paths.get(sub.student), feedback)
    except Exception as exc:  # noqa: BLE001 - the CSV row stands; the instructor is told which student is missing
        say(f"warning: {shown(sub.student)}: not written to the nbgrader gradebook ({type(exc).__name__}: {exc})")


def worker_command() -> list[str]:
    """The worker's command: isolated Python (nothing imported from the current or submissions folder)."""
    return sandbox.python_command("from course_lib.instructor.grading import _worker; sys.exit(_worker())")


class _Worker:
    """A grader process of our own (a new session, so Ctrl-C reaches only the main process) that grades
    one submission at a time: a job as a JSON line on its stdin, the Submission as a JSON line on its stdout.
    Kept for many submissions, so its imports (nbclient, torch) are paid once."""

    def __init__(self, log_file=None, log_name: str = "the log", scratch: Path | None = None):
        env = {**os.environ, "TMPDIR": str(scratch)} if scratch is not None else None
        self.proc = subprocess.Popen(
            worker_command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log_file if log_file is not None else subprocess.DEVNULL,  # tracebacks: the instructor's log
            start_new_session=True,
            env=env,  # its temporary folders (the kernels', the answers') go into the run's own, removed at its end
        )
        self.log_name = log_name
        self.entry: Entry | None = None
        self.started = 0.0
        self.buffer = b""

    def give(self, entry: Entry, job: dict) -> None:
        self.entry, self.started, self.buffer = entry, time.monotonic(), b""
        self.proc.stdin.write(json.dumps({**job, "path": str(entry.path), "student": entry.student}).encode() + b"\n")
        self.proc.stdin.flush()

    def read(self) -> bool:
        """Take what the worker wrote; True when its answer is complete (or it ended)."""
        chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
        self.buffer += chunk
        return not chunk or b"\n" in self.buffer or len(self.buffer) > MAX_RECORD_BYTES

    def result(self, late: bool) -> Submission:
        entry, self.entry = self.entry, None
        try:
            return Submission(**json.loads(self.buffer.split(b"\n")[0].decode("utf-8")))
        except Exception:
            sub = Submission(student=entry.student, path=shown(str(entry.path)))
            why = "ran past the total time budget" if late else f"the grader's worker failed (see {self.log_name})"
            sub.problems.append(f"not graded: {why}; tell your instructor")
            return sub

    def kill(self) -> None:
        """The worker and everything it started: its process group (the kernels' launchers and bubblewrap, whose
        sandboxes die with them), then whatever is left in its cgroups (named after its pid)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()
        sandbox.remove_cgroups_of(self.proc.pid)


def _run_all(entries: list[Entry], job: dict, jobs: int, budget: int, log_file=None, log_name: str = "the log"):
    """Grade every entry with ``jobs`` workers; yield each Submission as it finishes. A worker past twice the
    budget (a stalled kernel is retried once) plus a margin for starting kernels is killed with everything it
    started, and replaced."""
    import select

    for entry in entries:  # nothing to grade (several notebooks, a folder that cannot be read): the row says why
        if entry.problem:
            yield Submission(student=entry.student, path=shown(str(entry.path)), problems=[entry.problem])
    pending = [e for e in entries if not e.problem]
    workers: list[_Worker] = []
    scratch = Path(tempfile.mkdtemp(prefix=f"course-lib-run-{os.getpid()}-"))  # the workers' TMPDIR
    try:
        while pending or any(w.entry for w in workers):
            for worker in workers:
                if worker.entry is None and pending:
                    worker.give(pending.pop(0), job)
            while pending and len(workers) < jobs:
                with _whole():  # a worker started is a worker in the list, which the clean-up below kills
                    workers.append(_Worker(log_file, log_name, scratch))
                workers[-1].give(pending.pop(0), job)
            busy = {w.proc.stdout.fileno(): w for w in workers if w.entry}
            ready, _, _ = select.select(list(busy), [], [], 0.5)
            for fd in ready:
                worker = busy[fd]
                if worker.read():
                    ended = worker.proc.poll() is not None or not worker.buffer.endswith(b"\n")
                    yield worker.result(late=False)
                    if ended:
                        worker.kill()
                        workers.remove(worker)
            for worker in list(workers):
                if worker.entry and time.monotonic() - worker.started > 2 * budget + 120:
                    worker.kill()
                    workers.remove(worker)
                    yield worker.result(late=True)
    finally:  # Ctrl-C, SIGTERM, SIGHUP or any error of ours: no worker outlives the run, nor its folders
        for worker in workers:
            worker.kill()
        shutil.rmtree(scratch, ignore_errors=True)


def _worker() -> int:
    # our stdout carries the results; fd 2 is the instructor's log (the kernels' own output goes to /dev/null)
    import logging
    import traceback

    results = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    current = {"student": ""}
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(student)s: %(message)s"))
    handler.addFilter(lambda record: setattr(record, "student", current["student"]) or True)
    logging.getLogger("course_lib.grading").addHandler(handler)
    for line in sys.stdin:
        job = json.loads(line)
        current["student"] = job["student"]
        if job.get("support") and sandbox.detect.cache_info().currsize == 0:  # the grader's trial run, not two more
            sandbox.adopt(sandbox.Support(**job["support"]))
        try:
            sub = grade_submission(
                job["path"],
                job["release"],
                lesson=job["lesson"],
                student=job["student"],
                cell_timeout=job["cell_timeout"],
                budget=job["budget"],
                limits=sandbox.Limits(**job["limits"]),
                sandboxed=job["sandboxed"],
            )
        except Exception:  # ours, never the student's: the row says so and the instructor gets the traceback
            logging.getLogger("course_lib.grading").error("grading failed:\n%s", traceback.format_exc())
            sub = Submission(student=job["student"], path=shown(job["path"]))
            sub.problems.append(
                f"not graded: the grader failed on this submission (see {job['log']}); tell your instructor"
            )
        results.write(json.dumps(asdict(sub)) + "\n")
        results.flush()
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        sys.exit(_worker())
    sys.exit("usage: course-lib grade ... (this module is the grader's worker)")
