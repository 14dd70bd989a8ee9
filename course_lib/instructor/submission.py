"""Grading one submission: run it in a sandboxed kernel for its problems, and decide its grade from the answer
cells alone, outside that kernel.

:func:`grade_submission` copies the notebook (a regular file only) into a private scratch folder, puts
back the released setup and check cells, runs it in a bubblewrap sandbox
(:mod:`course_lib.instructor.sandbox`; it refuses without one unless ``sandboxed=False``) with output and
widget caps enforced as messages arrive, timeouts that escalate from interrupt to kill, and the watchdog
(a kernel that stops answering is woken, else reported): that run only says what went wrong in the
notebook. The grade comes from :func:`_grade_answers`: a fresh sandboxed process
(:mod:`course_lib.instructor.harness`) loads only the released setup cell and the answer cells, the
grader draws each check's inputs with a seed that process never sees, the check's run path calls the
student's function there under an observer, only plain data comes back (read strictly, with a size cap),
and the comparison and the hints run here. Anything that fails on the grader's side fails the exercise,
its traceback in the log. Student text reaches the result only through :func:`shown` / :func:`quoted`
(one line, escaped). :mod:`course_lib.instructor.grading` grades a whole class with this, one worker per job.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import shutil
import signal
import stat
import subprocess
import tempfile
import time
import traceback
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from course_lib.checks import FAILED, NOT_IMPLEMENTED, PASSED
from course_lib.instructor import sandbox
from course_lib.instructor.harness import FORGED
from course_lib.instructor.ids import sort_key
from course_lib.instructor.kernel import MAX_MESSAGE_BYTES, _client_class, _kernel_manager
from course_lib.instructor.release import expected_exercises, lesson_of, release_notebook, restore_checks

NOT_RUN = "not run"
MAX_OUTPUT_BYTES = 2_000_000
MAX_NOTEBOOK_BYTES = 20_000_000
MAX_RECORD_BYTES = 5_000_000
STALL_SECONDS = 15  # a kernel silent this long, even when poked, has stopped answering (a cell it cannot run)
LOG = logging.getLogger("course_lib.grading")
MAX_FIELD = 500  # characters of any status / message / title kept from the kernel
STATUSES = (PASSED, NOT_IMPLEMENTED, FAILED)


@dataclass
class Submission:
    """The outcome of grading one student's notebook."""

    student: str
    path: str
    exercises: dict[str, dict] = field(default_factory=dict)  # id -> {"status", "message", "title"}
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def score(self) -> int:
        return sum(e["status"] == PASSED for e in self.exercises.values())


def grade_submission(
    path,
    release,
    *,
    lesson: str | None = None,
    student: str | None = None,
    cell_timeout: int = 120,
    budget: int = 900,
    limits: sandbox.Limits | None = None,
    max_output_bytes: int = MAX_OUTPUT_BYTES,
    sandboxed: bool = True,
) -> Submission:
    """Grade one submission against the released exercise notebook; never raises for a bad submission.

    ``sandboxed=True`` (the default) refuses to run anything without a working sandbox
    (:class:`sandbox.SandboxUnavailable`); ``False`` runs the student's code unconfined, with the limits only.
    """
    import nbformat

    limits = limits or sandbox.Limits()
    support = sandbox.detect()
    if sandboxed and not support.bwrap:
        raise sandbox.SandboxUnavailable(sandbox.refusal(support))
    path = Path(path)
    release_nb = nbformat.read(release, as_version=4)
    lesson = lesson or lesson_of(release_nb) or Path(release).name[:2]
    result = Submission(student=student or shown(path.stem), path=shown(str(path)))
    expected = expected_exercises(release_nb)
    for exercise in expected:
        result.exercises[exercise] = {"status": NOT_RUN, "message": "", "title": ""}
    started = time.monotonic()
    try:
        data = read_regular(path, MAX_NOTEBOOK_BYTES)
    except ValueError as exc:
        result.problems.append(f"not graded: the submission is {exc}")
        return result
    try:
        student_nb = nbformat.reads(data.decode("utf-8"), as_version=4)
        nbformat.validate(student_nb)
    except Exception as exc:  # any unreadable file: report and go on
        result.problems.append(f"not a notebook ({type(exc).__name__}: {quoted(str(exc)[:200])})")
        return result

    graded, notes = restore_checks(student_nb, release_nb)
    result.problems.extend(notes + duplicated_answers(graded, expected))
    run = dict(
        lesson=lesson,
        data=data,
        expected=expected,
        exercises=protocol(lesson),
        bwrap=support.bwrap if sandboxed else None,
        limits=limits,
        cell_timeout=cell_timeout,
        budget=budget,
        max_output_bytes=max_output_bytes,
        name=result.student,
    )
    before = list(result.problems)
    # 1. the whole notebook, as the student ran it, in a sandboxed kernel: only for the problems it shows
    # (a kernel that stops answering is reported, not run again: the grade does not depend on this run)
    stalled = _run_notebook(nbformat.from_dict(graded), result, **run)
    if stalled:
        result.problems = before + [f"{stalled}; the cells after it were not run (the answers are graded on their own)"]
    # 2. the grade: the answer cells alone, called in a process of their own, judged here
    _grade_answers(
        graded,
        release_nb,
        result,
        lesson=lesson,
        expected=expected,
        exercises=run["exercises"],
        bwrap=run["bwrap"],
        limits=limits,
        cell_timeout=cell_timeout,
        budget=budget,
    )
    result.seconds = time.monotonic() - started
    return result


def answer_cells(nb, exercises) -> list[tuple[str, str, str]]:
    """``(exercise, grade id, source)`` of every code answer cell (nbgrader id ``ex-N-M``), in notebook order."""
    from course_lib.instructor.ids import answer_exercise
    from course_lib.instructor.release import _grade_id

    cells = []
    for cell in nb.cells:
        gid = _grade_id(cell) if cell.get("cell_type") == "code" else None
        exercise = answer_exercise(gid)
        if exercise in exercises and isinstance(cell.get("source"), str):
            cells.append((exercise, gid, cell.source))
    return cells


def duplicated_answers(nb, exercises) -> list[str]:
    """A note for each answer id that more than one cell carries (a copied cell keeps its nbgrader id, and a cell
    can be given one): every such cell is loaded, in order, so the last definition is the one graded."""
    from collections import Counter

    counts = Counter(gid for _, gid, _ in answer_cells(nb, exercises))
    return [
        f"answer cell {gid} appears {n} times (a copied cell keeps its id): each was loaded in order, so the last "
        "definition is the one graded"
        for gid, n in counts.items()
        if n > 1
    ]


def _harness_env() -> dict:
    """The whole environment of the processes the grader starts for a submission (nothing of the instructor's)."""
    return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": sandbox.HOME}


def _grade_answers(nb, release_nb, result, *, lesson, expected, exercises, bwrap, limits, cell_timeout, budget):
    """The grade of every exercise: the answer cells loaded and called in a fresh sandboxed process
    (:mod:`course_lib.instructor.harness`) on cases drawn here, judged here. Whatever goes wrong on the
    grader's side fails the exercise (the traceback goes to the log): no pass is ever kept by a crash."""
    from course_lib import checks
    from course_lib.instructor import harness
    from course_lib.instructor.release import _setup_cell

    todo = [e for e in expected if e in exercises]
    cells = answer_cells(nb, todo)
    setup = _setup_cell(release_nb)
    drawn = {e: exercises[e].draw(secrets.randbits(63)) for e in todo}
    outcome: dict[str, tuple] = {}  # exercise -> (reply or None, refused names, why no reply)
    loaded: dict = {}
    deadline = time.monotonic() + budget
    pending = list(todo)
    while pending:
        if time.monotonic() >= deadline:
            for e in pending:
                outcome[e] = (None, [], f"not called: the notebook's time budget ({budget} s) was spent")
            break
        private = Path(tempfile.mkdtemp(prefix="course-lib-answers-"))
        cgroup = sandbox.new_cgroup(limits)
        answers = None
        try:
            if bwrap:
                # without the font list, importing pyplot in an answer cell builds it by starting fc-list, a
                # process, which the answers' process refuses (hostile class 33q's honest plot)
                box = sandbox.Box(private / "conn", _font_mounts(private), uid=sandbox.host_uid(), bwrap=bwrap)
                sandbox.prepare(private, box)
                parent, cwd = sandbox.PACKAGE_MOUNT, None
            else:
                box = sandbox.Box(conn=private / "conn", cwd=private)
                sandbox.prepare(private, box)
                parent, cwd = str(sandbox._package_dir().parent), str(private)
            argv = sandbox.kernel_command(harness.command(parent), box, limits, cgroup)
            answers = harness.Answers(argv, _harness_env(), cwd, MAX_RECORD_BYTES)
            setup_source = setup.source if setup is not None else ""
            answers.send({"lesson": lesson[:2], "setup": setup_source, "cells": cells, "max_line": MAX_RECORD_BYTES})
            said = answers.receive(min(deadline, time.monotonic() + max(cell_timeout, 60)))
            if not isinstance(said, dict) or not isinstance(said.get("loaded"), dict):
                why = _ended(answers, cgroup, limits, "loading the answer cells")
                for e in pending:
                    outcome[e] = (None, [], why)
                break
            loaded = {e: said["loaded"].get(e) for e in todo if isinstance(said["loaded"].get(e), str)} or loaded
            while pending:
                exercise = pending.pop(0)
                answers.send({"exercise": exercise, "cases": checks.to_plain(drawn[exercise])})
                end = min(deadline, time.monotonic() + cell_timeout)
                refused, reply = [], None
                while True:
                    message = answers.receive(end)
                    if message is None or message.get("exercise") != exercise:
                        break
                    if "refused" in message:
                        refused.append(str(message["refused"])[:200])
                    elif "reply" in message:
                        reply = message["reply"]
                        break
                if reply is None:
                    # a limit the cgroup saw is named first: a fork bomb or a memory hog is often also late
                    late = time.monotonic() >= end and not sandbox.limit_hits(cgroup)
                    why = (
                        f"your function ran past the time limit ({cell_timeout} s) and was stopped"
                        if late
                        else _ended(answers, cgroup, limits, "your function")
                    )
                    outcome[exercise] = (None, refused, why)
                    break  # a fresh process for the exercises left
                outcome[exercise] = (reply, refused, "")
        except Exception:
            LOG.error("calling the answer cells failed:\n%s", traceback.format_exc())
            for e in pending:
                outcome[e] = (
                    None,
                    [],
                    "the grader failed while calling your functions (your instructor has the details)",
                )
            break
        finally:
            if answers is not None:
                answers.kill()
            sandbox.remove_cgroup(cgroup)
            shutil.rmtree(private, ignore_errors=True)
    sources = [source for _, _, source in cells]
    for exercise in todo:
        result.exercises[exercise] = _verdict(
            exercises[exercise], drawn[exercise], outcome.get(exercise), loaded.get(exercise), sources
        )


def _ended(answers, cgroup, limits, what: str) -> str:
    """Why the harness stopped answering: a limit the cgroup saw, or the process ended (exit(), a crash)."""
    hits = sandbox.limit_hits(cgroup)
    code = answers.proc.poll()
    if "memory" in hits:
        return f"{what} reached the memory limit ({limits.memory_mb} MB)"
    if "processes" in hits:
        return f"{what} reached the limit on processes ({limits.processes})"
    if code is not None:
        return f"{what} ended the process that ran it (exit code {code}: exit(), os._exit, a crash or a limit)"
    return f"{what}: the process that ran it sent something that is not the grader's answer"


def _verdict(exercise, cases, outcome, load_problem, sources) -> dict:
    """One exercise's verdict from what the harness said; fails closed on anything unexpected."""
    title = exercise.title
    try:
        if load_problem:
            return {"status": FAILED, "message": _clip(load_problem), "title": title}
        reply, refused, why = outcome if outcome else (None, [], "not called")
        if refused:
            if refused[0].startswith(FORGED):  # not borrowed work: a line the grader did not write
                message = f"refused: while your function ran, {quoted(refused[0])}; only the grader's reply counts"
            else:
                message = (
                    f"Hint: write it yourself: while the grader ran your function it reached {quoted(refused[0])}, "
                    "which grading does not allow"
                )
            return {"status": FAILED, "message": _clip(message), "title": title}
        if reply is None:
            return {"status": FAILED, "message": _clip(why), "title": title}
        verdict = _judge(exercise, cases, json.dumps(reply).encode(), title)
        return _refuse_borrowed(exercise, verdict, sources)
    except Exception:
        LOG.error("judging exercise %s failed:\n%s", exercise.id, traceback.format_exc())
        return {
            "status": FAILED,
            "message": "the grader could not judge this exercise (your instructor has the details)",
            "title": title,
        }


def _run_notebook(
    graded,
    result: Submission,
    *,
    lesson,
    data,
    expected,
    exercises,
    bwrap,
    limits,
    cell_timeout,
    budget,
    max_output_bytes,
    name,
) -> str:
    """One run of the notebook in a fresh kernel, and the judging; "" or, when its kernel stopped answering
    (and could not be woken), what the watchdog said (the results are then not judged)."""
    from course_lib.instructor import watchdog

    private = Path(tempfile.mkdtemp(prefix="course-lib-grade-"))
    box, _ = _box(private, data, [], bwrap)
    cgroup = sandbox.new_cgroup(limits)
    n_student_cells = len(graded.cells)
    try:
        client = _client_class()(
            graded,
            km=_kernel_manager(box, limits, cgroup),
            deadline=time.monotonic() + budget,
            max_output_bytes=max_output_bytes,
            max_widget_bytes=limits.widget_mb * sandbox.MB,
            on_ready=lambda: sandbox.lock(box),
            notebook_name=name,
            stall_after=min(watchdog.STALL_AFTER, cell_timeout / 4),
            stall_timeout=min(STALL_SECONDS, cell_timeout),
            timeout=cell_timeout,
            allow_errors=True,
            interrupt_on_timeout=True,
            shutdown_kernel="immediate",
            resources={"metadata": {"path": str(box.cwd or private)}},
        )
        stalled = _execute(client, result, limits, cgroup)
        if stalled:
            return stalled
        _collect_problems(graded.cells[:n_student_cells], client, result, max_output_bytes, limits)
    finally:
        sandbox.remove_cgroup(cgroup)  # every process the kernel started, a stalled one too
        shutil.rmtree(private, ignore_errors=True)
    return ""


def _box(private: Path, data: bytes, exercises: list[str], bwrap: str | None):
    """The submission's sandbox, and for each exercise where the kernel writes its results (inside, on the host).

    In the sandbox the working folder is a size-limited tmpfs holding a read-only copy of the submission; the
    kernel can write on the host only into one results file per exercise, created here (the folder holding
    them is read-only to it). Without the sandbox (``--no-sandbox``) everything lives in ``private/home``."""
    if not bwrap:
        home = private / "home"
        home.mkdir()
        _seed_caches(home)
        (home / "submission.ipynb").write_bytes(data)
        secret = secrets.token_hex(16)
        box = sandbox.Box(conn=private / "conn", cwd=home)
        sandbox.prepare(private, box)
        files = {e: home / f".records-{secret}-{e}.json" for e in exercises}
        return box, {e: (str(host), host) for e, host in files.items()}
    results = private / "results"
    results.mkdir()
    (private / "submission.ipynb").write_bytes(data)
    read_only = {f"{sandbox.HOME}/submission.ipynb": private / "submission.ipynb", sandbox.RESULTS: results}
    read_only.update(_font_mounts(private))
    writable, records = {}, {}
    for exercise in exercises:
        host = results / f"{exercise}.json"
        host.write_bytes(b"")
        writable[f"{sandbox.RESULTS}/{exercise}.json"] = host
        records[exercise] = (f"{sandbox.RESULTS}/{exercise}.json", host)
    box = sandbox.Box(private / "conn", read_only, writable, uid=sandbox.host_uid(), bwrap=bwrap)
    sandbox.prepare(private, box)
    return box, records


def shown(text) -> str:
    """Text the student controls, made safe to show on one line of the grader's files: line breaks, control
    and format characters (including bidirectional overrides) and undecodable bytes of a file name become
    backslash escapes, so it can never start a line of its own or change how the rest reads."""
    if not isinstance(text, str):
        text = str(text)
    out = []
    for char in text:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (Python's surrogateescape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif char == "\\":
            out.append("\\\\")
        elif unicodedata.category(char)[0] in "CZ" and char != " ":
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(char)
    return "".join(out)


def quoted(text) -> str:
    """Student text inside the grader's sentences: on one line (:func:`shown`), between quotation marks."""
    return '"' + shown(text).replace('"', '\\"') + '"'


def feedback_text(sub: Submission, *, unsandboxed: bool = False) -> str:
    """What a student reads (markdown): every exercise with its status and hint, then any problem. Each
    varying part is kept on its line (line breaks escaped) with markdown's punctuation escaped, after the
    grader's own words: no student text can add a line such as a second "Score:", a link or an image."""
    score = f"Score: {sub.score} of {len(sub.exercises)} exercises passed."
    lines = [f"# Feedback for {_md(sub.student)}", "", score, ""]
    for exercise, info in sorted(sub.exercises.items(), key=lambda kv: sort_key(kv[0])):
        title = f" ({_md(info['title'])})" if info.get("title") else ""
        line = f"- Exercise {_md(exercise)}{title}: {_md(info['status'])}. {_md(info.get('message', ''))}"
        lines.append(line.rstrip())
    if sub.problems:
        lines += ["", "Problems found while running your notebook:"] + [f"- {_md(p)}" for p in sub.problems]
    if unsandboxed:
        lines += ["", "(graded without the sandbox)"]
    return "\n".join(lines) + "\n"


def _md(text) -> str:
    """One line of markdown that shows ``text`` as it is (CommonMark: any ASCII punctuation may be escaped)."""
    text = text if isinstance(text, str) else str(text)
    if any(unicodedata.category(c)[0] in "CZ" and c != " " for c in text):
        text = shown(text)
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~&=])", r"\\\1", text)


def find_release_for(path) -> Path:
    """For ``course-lib validate``: the released notebook of the lesson ``path`` belongs to, from the clone
    when there is one; otherwise the notebook itself (a student's install has no exercises/ folder)."""
    import nbformat

    try:
        nb = nbformat.reads(read_regular(path, MAX_NOTEBOOK_BYTES).decode("utf-8"), as_version=4)
    except Exception as exc:
        raise ValueError(f"{path}: not a notebook ({exc})") from None
    lesson = lesson_of(nb)
    if lesson is None:
        raise ValueError(f"{path}: no exercises in it (is it an exercises notebook?)")
    try:
        return release_notebook(lesson)
    except FileNotFoundError:
        return Path(path)


def read_regular(path, limit: int) -> bytes:
    """The bytes of a regular file, never through a symlink, never more than ``limit`` (ValueError)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if os.path.islink(path):
            raise ValueError("a symbolic link, not a file (not followed)") from None
        raise ValueError(f"cannot be read ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if info.st_size > limit:
            raise ValueError(f"{info.st_size / 1e6:.1f} MB, over the limit of {limit / 1e6:.1f} MB")
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise ValueError(f"over the limit of {limit / 1e6:.1f} MB")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _clip(value) -> str:
    return value[:MAX_FIELD] if isinstance(value, str) else ""


def protocol(lesson: str) -> dict:
    """``{exercise id: Exercise}`` of the lesson (ValueError when course_lib has no checks for it)."""
    from course_lib import checks

    return checks.exercises(lesson[:2])


def _judge(exercise, cases, data: bytes | None, title: str) -> dict:
    """The grade of one exercise, decided here from plain data only."""
    from course_lib import checks

    def result(status, message=""):
        return {"status": status, "message": _clip(message), "title": title}

    if data is None:
        return result(NOT_RUN, "the function was not called (the notebook stopped before the grader could)")
    try:
        reply = json.loads(data.decode("utf-8"))
        if not isinstance(reply, dict):
            raise ValueError("not an object")
        if "limit" in reply:  # a limit of the grader's own that the reply ran into (the harness's words)
            return result(FAILED, str(reply["limit"]))
        if "error" in reply:
            error = str(reply["error"])
            if error == "NotImplementedError":
                return result(NOT_IMPLEMENTED, "Replace `raise NotImplementedError(...)` with your code.")
            return result(FAILED, f"Your function raised {quoted(error)}")
        records = checks.from_plain(reply["records"])
    except Exception as exc:  # anything the kernel sent that is not plain data in the agreed shape
        return result(FAILED, f"the results of your function could not be read ({type(exc).__name__})")
    try:
        status, hint = exercise.judge(cases, records)
    except Exception:  # the check itself crashed on these records: the instructor gets the traceback
        LOG.error(
            "the check of exercise %s crashed on the records of this submission:\n%s",
            exercise.id,
            traceback.format_exc(),
        )
        return result(FAILED, "the check could not judge your function's results (your instructor has the details)")
    if status not in STATUSES:
        status = FAILED
    return result(status, hint if isinstance(hint, str) else "")


def _refuse_borrowed(exercise, verdict: dict, sources: list[str]) -> dict:
    """A pass stands only if the submission's code does not use what the exercise forbids: the kernel's own
    refusal runs where the student's code could undo it, this look at the text runs here."""
    if verdict["status"] != PASSED or not exercise.forbidden:
        return verdict
    try:
        hint = exercise.judge_source(sources)
    except Exception:  # fails closed: a crash of the grader's look never keeps a pass
        LOG.error("the look at the source of exercise %s crashed:\n%s", exercise.id, traceback.format_exc())
        return {
            **verdict,
            "status": FAILED,
            "message": "the grader's look at your code failed (your instructor has the details)",
        }
    return {**verdict, "status": FAILED, "message": _clip(hint)} if hint else verdict


def _font_mounts(private: Path) -> dict:
    """matplotlib's font list, to be bound read-only into a sandbox's home: {path inside: host file}."""
    fonts = private / "fonts"
    _seed_caches(fonts)
    return {
        f"{sandbox.HOME}/.cache/matplotlib/{font_list.name}": font_list
        for font_list in sorted((fonts / ".cache" / "matplotlib").glob("*.json"))
    }


def _seed_caches(home: Path) -> None:
    """Give the fresh home matplotlib's font list (else every kernel spends seconds rebuilding it)."""
    try:
        import matplotlib

        cache = Path(matplotlib.get_cachedir())
        fonts = sorted(cache.glob("fontlist-*.json"))
        if not fonts:
            import matplotlib.font_manager  # noqa: F401  (builds the list once, in the grader)

            fonts = sorted(cache.glob("fontlist-*.json"))
    except Exception:
        return
    target = home / ".cache" / "matplotlib"
    target.mkdir(parents=True, exist_ok=True)
    for font_list in fonts:
        shutil.copyfile(font_list, target / font_list.name)


_ENDED_PYTHON = (
    "cell {cell} ended Python (exit(), quit() or sys.exit()); the cells after it were not run (the answers are "
    "graded on their own)"
)


def _execute(client, result: Submission, limits: sandbox.Limits, cgroup: str | None) -> str:
    """Run the notebook; "" or, when its kernel stopped answering, the watchdog's words (without the name)."""
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    from course_lib.instructor.kernel import KernelExited
    from course_lib.instructor.watchdog import KernelStalled

    try:
        client.execute(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # the kernel's own chatter
    except KernelStalled as stall:
        LOG.warning("%s", shown(str(stall)))
        return shown(str(stall).removeprefix(f"{client.notebook_name}, "))
    except KernelExited as exited:
        result.problems.append(_ENDED_PYTHON.format(cell=exited.cell_index))
        return ""
    except DeadKernelError:
        hits = sandbox.limit_hits(cgroup)
        code = getattr(client.km, "exit_code", None)
        if code in (-signal.SIGXCPU, 128 + signal.SIGXCPU):  # the launcher's own signal, or bwrap's report of it
            why = f"it used up its CPU time ({limits.cpu_seconds} s)"
        elif "memory" in hits:
            why = f"it reached the memory limit ({limits.memory_mb} MB)"
        elif "processes" in hits:
            why = f"it reached the limit on processes ({limits.processes})"
        elif code == 0:  # a clean exit: exit(), quit() or sys.exit() in a cell
            result.problems.append(_ENDED_PYTHON.format(cell=client.cell_index))
            return ""
        else:
            why = (
                f"out of memory ({limits.memory_mb} MB), processes ({limits.processes}) or CPU time "
                f"({limits.cpu_seconds} s), or the notebook exited Python (exit code {code})"
            )
        result.problems.append(f"the kernel died in cell {client.cell_index}: {why}; the rest was not run")
    except CellTimeoutError:
        result.problems.append(f"the kernel was killed: {client.killed} (the rest was not run)")
    except CellExecutionError as exc:  # pragma: no cover - allow_errors makes this rare
        result.problems.append(f"execution stopped: {quoted(str(exc)[:200])}")
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        result.problems.append(f"could not execute: {type(exc).__name__}: {quoted(str(exc)[:200])}")
        LOG.error("executing the notebook failed:\n%s", traceback.format_exc())
    if "processes" in sandbox.limit_hits(cgroup) and not any("processes" in p for p in result.problems):
        result.problems.append(f"it reached the limit on processes ({limits.processes}); starting more failed")
    return ""


def _collect_problems(cells, client, result: Submission, max_output_bytes: int, limits: sandbox.Limits) -> None:
    for index, cell in enumerate(cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                name = _clip(output.get("ename", "Error"))
                evalue = _clip(output.get("evalue", ""))[:150]
                if name == "KeyboardInterrupt":
                    result.problems.append(f"cell {index} ran past the time limit and was interrupted")
                elif name in ("OSError", "IOError") and "No space left on device" in evalue:
                    result.problems.append(
                        f"cell {index} filled its disk: the working folder, /tmp and /dev/shm hold "
                        f"{limits.disk_mb} MB each (and one file at most {limits.file_mb} MB)"
                    )
                elif name != "NotImplementedError":
                    result.problems.append(f"cell {index} raised {quoted(name)}: {quoted(evalue)}")
    if client.widgets_dropped:
        result.problems.append(
            f"the notebook sent more than {limits.widget_mb} MB of widget messages; "
            f"{client.widgets_dropped} message(s) after that were dropped"
        )
    silent = [i for i in client.silent_cells if 0 <= i < len(cells)]  # the student's cells, not the grader's
    if silent:
        result.problems.append(
            f"the output of cell {silent[0]} (and of {len(silent) - 1} cell(s) after it) "
            f"never reached the grader: one output over {MAX_MESSAGE_BYTES // 1_000_000} MB, such as a huge print, "
            "cuts the output off; errors in those cells are not listed"
        )
    if client.dropped:
        result.problems.append(
            f"the notebook printed {client.output_bytes / 1e6:.1f} MB of output or more "
            f"(limit {max_output_bytes / 1e6:.1f} MB); the rest was dropped"
        )
