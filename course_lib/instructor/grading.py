"""Grade a folder of exercise submissions so that the grade cannot be forged and no student reaches another.

    course-lib grade submissions/ --lesson 01 --out grades.csv --jobs 2

For each submission the grader

1. copies it (a regular file only: a symlink, a FIFO or a folder is reported, never followed) into a
   scratch folder of its own, which is all the student's kernel can see: the kernel runs in a
   bubblewrap sandbox (:mod:`course_lib.instructor.sandbox`) with limits on memory, processes, CPU time
   and file size, and everything it started is killed afterwards;
2. puts back the setup cell and every locked check cell from the released exercise notebook;
3. executes the notebook (a cell past its time limit is interrupted, a cell that ignores the interrupt
   gets the kernel killed; the whole notebook has a total budget; output is capped as it streams);
4. decides the grade itself: when ``course_lib.checks`` offers ``exercises(lesson)``, the grader draws
   each check's inputs with a seed the notebook never sees, the student's function runs on them in the
   sandboxed kernel, only plain data (numbers, strings, arrays) comes back, read strictly with a size
   cap, and the comparison and the hints run here, in the grader. Without that protocol the grader falls
   back to the results the checks wrote from inside the kernel, and says that those can be forged;
5. appends the student's row to the CSV as soon as the submission is done, so an interrupted run keeps
   what it graded, and running the same command again resumes after the last row.

Problems of the instructor's own making (no kernel, no exercises for the lesson, an output path that
cannot be written) stop the run with a clear message before any student is graded.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from course_lib.checks import FAILED, NOT_IMPLEMENTED, PASSED
from course_lib.instructor import sandbox
from course_lib.instructor.ids import answer_exercise, sort_key

NOT_RUN = "not run"
MAX_OUTPUT_BYTES = 2_000_000
MAX_NOTEBOOK_BYTES = 20_000_000
MAX_RECORD_BYTES = 5_000_000
MAX_MESSAGE_BYTES = 64_000_000  # one message from the kernel (its output is capped at MAX_OUTPUT_BYTES anyway)
MAX_FIELD = 500  # characters of any status / message / title kept from the kernel
STATUSES = (PASSED, NOT_IMPLEMENTED, FAILED)


class InstructorError(Exception):
    """A problem with the grading set-up, not with a student's work: stop before grading anyone."""


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


# --------------------------------------------------------------------------- the release


def find_root(start=None) -> Path | None:
    """The clone this package runs from, if any (a folder with ``exercises/`` beside ``course_lib/``)."""
    import course_lib

    candidates = [Path(start)] if start else [Path(course_lib.__file__).resolve().parents[1], Path.cwd()]
    for folder in candidates:
        if (folder / "exercises").is_dir():
            return folder
    return None


def release_notebook(lesson: str, root=None) -> Path:
    """The exercise notebook as released for ``lesson`` ("01" or "01_ngrams")."""
    if not isinstance(lesson, str) or not re.fullmatch(r"\d\d(_\w+)?", lesson):
        raise ValueError(f"lesson must be two digits such as '01' (or '01_ngrams'), got {lesson!r}")
    folder = Path(root) if root else find_root()
    if folder is None:
        raise FileNotFoundError(
            "no exercises/ folder: run from a clone of the course, pass --root CLONE, "
            "or pass --release path/to/NN_topic.ipynb (the exercise notebook you handed out)"
        )
    matches = sorted((folder / "exercises").glob(f"{lesson[:2]}_*.ipynb"))
    if not matches:
        raise FileNotFoundError(f"no exercise notebook for lesson {lesson!r} in {folder / 'exercises'}")
    return matches[0]


def _nbgrader(cell) -> dict:
    meta = cell.get("metadata") or {}
    grader = meta.get("nbgrader") if isinstance(meta, dict) else None
    return grader if isinstance(grader, dict) else {}  # a student's metadata may say null, or anything


def _grade_id(cell) -> str | None:
    gid = _nbgrader(cell).get("grade_id")
    return gid if isinstance(gid, str) else None


def _is_locked_check(cell) -> bool:
    meta = _nbgrader(cell)
    return bool(meta.get("locked")) and bool(meta.get("grade")) and not meta.get("solution")


def _setup_cell(release_nb):
    """The release's first code cell (imports and ``course_lib.setup``), when it is not an exercise."""
    for cell in release_nb.cells:
        if cell.cell_type == "code":
            return None if _grade_id(cell) else cell
    return None


def lesson_of(nb) -> str | None:
    """The lesson an exercise notebook belongs to, from its answer cells' grade ids ("ex-1-2" -> "01")."""
    for exercise in expected_exercises(nb):
        return f"{int(exercise.split('.')[0]):02d}"
    return None


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


def expected_exercises(release_nb) -> list[str]:
    return list(dict.fromkeys(e for e in (answer_exercise(_grade_id(c)) for c in release_nb.cells) if e))


def restore_checks(student_nb, release_nb) -> tuple[object, list[str]]:
    """The student's notebook with the setup cell and every locked check cell as released; and the notes."""
    import nbformat

    released = {_grade_id(c): c for c in release_nb.cells if _is_locked_check(c)}
    order = [_grade_id(c) for c in release_nb.cells if _grade_id(c)]
    notes: list[str] = []
    cells = []
    for cell in student_nb.cells:
        gid = _grade_id(cell)
        if gid in released:
            if cell.get("source") != released[gid].source:
                notes.append(f"check cell {gid} was edited; graded with the released version")
            cell = nbformat.from_dict(dict(released[gid]))
        cells.append(cell)
    present = {_grade_id(c) for c in cells}
    for gid in released:
        if gid in present:
            continue
        notes.append(f"check cell {gid} was deleted; put back for grading")
        # right after the last cell that precedes it in the release (at the end if none is left)
        earlier = set(order[: order.index(gid)])
        positions = [i for i, c in enumerate(cells) if _grade_id(c) in earlier]
        cells.insert(positions[-1] + 1 if positions else len(cells), nbformat.from_dict(dict(released[gid])))
    setup = _setup_cell(release_nb)
    if setup is not None and not any(c.get("source") == setup.source for c in cells):
        notes.append("the setup cell was changed or deleted; the released one was run first")
        cells.insert(0, nbformat.from_dict(dict(setup)))
    submitted = [g for g in (_grade_id(c) for c in student_nb.cells) if g in order]
    if submitted != sorted(submitted, key=order.index):
        notes.append("cells were reordered: graded in the submitted order, which may break later cells")
    out = nbformat.from_dict(dict(student_nb))
    out.cells = cells
    return out, notes


# --------------------------------------------------------------------------- reading files safely


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


def parse_results(data: bytes, expected: list[str]) -> tuple[dict[str, dict], list[str]]:
    """Check results written from the kernel (the fallback path): only well-formed lines count."""
    found, bad = {}, 0
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            record = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            bad += 1
            continue
        if (
            not isinstance(record, dict)
            or record.get("exercise") not in expected
            or record.get("status") not in STATUSES
        ):
            bad += 1
            continue
        found[record["exercise"]] = {k: _clip(record.get(k)) for k in ("status", "message", "title")}
    return found, ([f"{bad} malformed line(s) in the check results were ignored"] if bad else [])


# --------------------------------------------------------------------------- the plain-data protocol


def protocol(lesson: str):
    """``{exercise id: Exercise}`` from ``course_lib.checks.exercises``, or None when checks lack it."""
    from course_lib import checks

    if not hasattr(checks, "exercises"):
        return None
    found = checks.exercises(lesson[:2])
    return dict(found) if found else None


_RUN_CELL = """\
def _course_lib_grade():
    import json
    from course_lib import checks as _checks

    exercise = _checks.exercises({lesson!r})[{exercise!r}]
    fn = globals().get(exercise.function)
    try:
        if not callable(fn):
            raise NameError(f"{{exercise.function}} is not defined (run its cell)")
        cases = _checks.from_plain(json.loads({cases!r}))
        records = {{"records": _checks.to_plain(exercise.run(fn, cases))}}
    except NotImplementedError:
        records = {{"error": "NotImplementedError"}}
    except BaseException as exc:
        records = {{"error": f"{{type(exc).__name__}}: {{exc}}"[:300]}}
    with open({path!r}, "w", encoding="utf-8") as f:
        json.dump(records, f)


_course_lib_grade()
del _course_lib_grade
"""


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
        if "error" in reply:
            error = str(reply["error"])
            if error == "NotImplementedError":
                return result(NOT_IMPLEMENTED, "Replace `raise NotImplementedError(...)` with your code.")
            return result(FAILED, f"Your function raised {error}")
        records = checks.from_plain(reply["records"])
    except Exception as exc:  # anything the kernel sent that is not plain data in the agreed shape
        return result(FAILED, f"the results of your function could not be read ({type(exc).__name__})")
    status, hint = exercise.judge(cases, records)
    if status not in STATUSES:
        status = FAILED
    return result(status, hint or "")


# --------------------------------------------------------------------------- executing one notebook


def _client_class():
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError

    class GuardedClient(NotebookClient):
        """nbclient with an output cap enforced as output streams, and interrupt-then-kill on timeouts."""

        def __init__(self, nb, *, deadline: float, max_output_bytes: int, **kw):
            super().__init__(nb, **kw)
            self.deadline = deadline
            self.max_output_bytes = max_output_bytes
            self.output_bytes = 0
            self.dropped = False
            self.interrupted_cells: list[int] = []
            self.killed = ""
            self.first_cell = 0  # cells the grader put before the student's, not counted in messages
            self.timeout_func = self._timeout_for

        def _timeout_for(self, cell):
            return max(1, min(self.timeout, int(self.deadline - time.monotonic())))

        def output(self, outs, msg, display_id, cell_index):
            self.output_bytes += len(json.dumps(msg.get("content", {}), default=str))
            if self.output_bytes > self.max_output_bytes:
                self.dropped = True
                return None
            return super().output(outs, msg, display_id, cell_index)

        async def _async_handle_timeout(self, timeout, cell=None):
            index = self.nb.cells.index(cell) if cell in self.nb.cells else -1
            if index in self.interrupted_cells or time.monotonic() >= self.deadline:
                # it ignored the interrupt, or the notebook's budget is spent: kill the kernel
                why = "ignored the interrupt" if index in self.interrupted_cells else "used up the notebook's budget"
                self.killed = f"cell {index - self.first_cell} {why}"
                await self.km.shutdown_kernel(now=True)
                raise CellTimeoutError.error_from_timeout_and_cell("killed", timeout, cell)
            self.interrupted_cells.append(index)
            await self.km.interrupt_kernel()
            return None

    return GuardedClient


def _kernel_manager(home: Path, conn: Path, limits: sandbox.Limits, cgroup: str | None):
    from jupyter_client.manager import AsyncKernelManager

    class SandboxedKernelManager(AsyncKernelManager):
        def format_kernel_cmd(self, extra_arguments=None):
            argv = [sys.executable, "-m", "ipykernel_launcher", "-f", self.connection_file]
            return sandbox.kernel_command(argv, home, conn, limits, cgroup)

        def client(self, **kwargs):
            # a message bigger than this drops the connection instead of being read into our memory
            # (one print of 1 GB): set on the client's context before its sockets exist
            import zmq

            kc = super().client(**kwargs)
            kc.context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
            return kc

    from jupyter_client.kernelspec import KernelSpec

    km = SandboxedKernelManager(transport="ipc", ip=str(conn / "kernel"))
    km.connection_file = str(conn / "kernel.json")
    # our own spec: the grader's Python, and interrupts as messages (a signal would stop bwrap, not the kernel)
    km._kernel_spec = KernelSpec(
        argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        display_name="course-lib sandbox",
        language="python",
        interrupt_mode="message",
    )
    return km


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
) -> Submission:
    """Grade one submission against the released exercise notebook; never raises for a bad submission."""
    import nbformat

    limits = limits or sandbox.Limits()
    path = Path(path)
    release_nb = nbformat.read(release, as_version=4)
    lesson = lesson or lesson_of(release_nb) or Path(release).name[:2]
    result = Submission(student=student or path.stem, path=str(path))
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
        result.problems.append(f"not a notebook ({type(exc).__name__}: {str(exc)[:200]})")
        return result

    graded, notes = restore_checks(student_nb, release_nb)
    result.problems.extend(notes)
    exercises = protocol(lesson)
    private = Path(tempfile.mkdtemp(prefix="course-lib-grade-"))
    home, conn = private / "home", private / "conn"
    home.mkdir()
    _seed_caches(home)
    conn.mkdir()
    os.chmod(private, 0o700)
    cgroup = sandbox.new_cgroup(limits)
    secret = secrets.token_hex(16)
    n_student_cells = len(graded.cells)
    drawn = {}
    first_cell = 0
    try:
        (home / "submission.ipynb").write_bytes(data)  # the student's own copy, all the kernel can see
        if exercises:
            for exercise_id in expected:
                if exercise_id not in exercises:
                    continue
                cases = exercises[exercise_id].draw(secrets.randbits(63))
                drawn[exercise_id] = cases
                from course_lib import checks

                source = _RUN_CELL.format(
                    lesson=lesson[:2],
                    exercise=exercise_id,
                    cases=json.dumps(checks.to_plain(cases)),
                    path=f"{sandbox.HOME}/.records-{secret}-{exercise_id}.json"
                    if sandbox.detect().bwrap
                    else str(home / f".records-{secret}-{exercise_id}.json"),
                )
                graded.cells.append(nbformat.v4.new_code_cell(source))
        else:
            results_path = f"{sandbox.HOME if sandbox.detect().bwrap else home}/.results-{secret}.jsonl"
            from course_lib.checks import RESULTS_ENV

            graded.cells.insert(
                0, nbformat.v4.new_code_cell(f"import os\nos.environ[{RESULTS_ENV!r}] = {results_path!r}")
            )
            n_student_cells += 1
            first_cell = 1
        client = _client_class()(
            graded,
            km=_kernel_manager(home, conn, limits, cgroup),
            deadline=time.monotonic() + budget,
            max_output_bytes=max_output_bytes,
            timeout=cell_timeout,
            allow_errors=True,
            interrupt_on_timeout=True,
            shutdown_kernel="immediate",
            resources={"metadata": {"path": str(home)}},
        )
        client.first_cell = first_cell
        _execute(client, result)
        _collect_problems(graded.cells[:n_student_cells], client, result, max_output_bytes, exercises is None)
        if exercises:
            for exercise_id, cases in drawn.items():
                title = getattr(exercises[exercise_id], "title", "")
                try:
                    reply = read_regular(home / f".records-{secret}-{exercise_id}.json", MAX_RECORD_BYTES)
                except ValueError as exc:
                    reply = None if "cannot be read" in str(exc) else b"!"
                    if reply is not None:
                        result.problems.append(f"exercise {exercise_id}: the results file was {exc}")
                result.exercises[exercise_id] = _judge(exercises[exercise_id], cases, reply, title)

        else:
            try:
                data = read_regular(home / f".results-{secret}.jsonl", MAX_RECORD_BYTES)
            except ValueError as exc:
                data = b""
                if "cannot be read" not in str(exc):
                    result.problems.append(f"the check results were {exc}")
            found, bad = parse_results(data, expected)
            result.exercises.update(found)
            result.problems.extend(bad)
    finally:
        sandbox.remove_cgroup(cgroup)
        shutil.rmtree(private, ignore_errors=True)
    result.seconds = time.monotonic() - started
    return result


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


def _execute(client, result: Submission) -> None:
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    try:
        client.execute(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # the kernel's own chatter
    except DeadKernelError:
        result.problems.append("the kernel died (out of memory, too many processes, or the notebook exited Python)")
    except CellTimeoutError:
        result.problems.append(f"the kernel was killed: {client.killed} (the rest was not run)")
    except CellExecutionError as exc:  # pragma: no cover - allow_errors makes this rare
        result.problems.append(f"execution stopped: {str(exc)[:200]}")
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        result.problems.append(f"could not execute: {type(exc).__name__}: {str(exc)[:200]}")


def _collect_problems(cells, client, result: Submission, max_output_bytes: int, skip_first: bool) -> None:
    for index, cell in enumerate(cells):
        if skip_first and index == 0:
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                name = _clip(output.get("ename", "Error"))
                if name == "KeyboardInterrupt":
                    result.problems.append(f"cell {index} ran past the time limit and was interrupted")
                elif name != "NotImplementedError":
                    result.problems.append(f"cell {index} raised {name}: {_clip(output.get('evalue', ''))[:150]}")
    if client.dropped:
        result.problems.append(
            f"the notebook printed {client.output_bytes / 1e6:.1f} MB of output or more "
            f"(limit {max_output_bytes / 1e6:.1f} MB); the rest was dropped"
        )


def feedback_text(sub: Submission) -> str:
    """What a student reads: every exercise with its status and hint, then any problem."""
    lines = [f"# Feedback for {sub.student}", "", f"Score: {sub.score} of {len(sub.exercises)} exercises passed.", ""]
    for exercise, info in sorted(sub.exercises.items(), key=lambda kv: sort_key(kv[0])):
        title = f" ({info['title']})" if info.get("title") else ""
        lines.append(f"- Exercise {exercise}{title}: {info['status']}. {info.get('message', '')}".rstrip())
    if sub.problems:
        lines += ["", "Problems found while running your notebook:"] + [f"- {p}" for p in sub.problems]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- finding submissions


@dataclass
class Entry:
    student: str
    path: Path


def collect(submissions) -> tuple[list[Entry], list[str]]:
    """Every submission: a notebook path, a flat folder of ``<student>.ipynb``, or nbgrader's
    ``submitted/<student>/<assignment>/<notebook>.ipynb`` (also ``<student>/<notebook>.ipynb``).
    Nothing is followed through a symbolic link. Returns the entries and warnings for the instructor."""
    entries, warnings = [], []
    for item in submissions:
        item = Path(item)
        if item.is_symlink() or not item.exists():
            entries.append(Entry(item.stem, item)) if item.suffix == ".ipynb" else warnings.append(
                f"{item}: not found (or a symbolic link); skipped"
            )
            continue
        if not item.is_dir():
            entries.append(Entry(item.stem, item))
            continue
        for child in sorted(item.iterdir()):
            if child.suffix == ".ipynb" and not child.is_dir():
                entries.append(Entry(child.stem, child))
            elif child.is_dir() and not child.is_symlink():  # nbgrader: one folder per student
                found = sorted(
                    p
                    for p in child.rglob("*.ipynb")
                    if ".ipynb_checkpoints" not in p.parts and len(p.parts) - len(child.parts) <= 2
                )
                if len(found) == 1:
                    entries.append(Entry(child.name, found[0]))
                elif len(found) > 1:
                    warnings.append(f"{child}: {len(found)} notebooks for one student; grading none, pass one")
                deeper = [p for p in child.rglob("*.ipynb") if len(p.parts) - len(child.parts) > 2]
                warnings += [f"{p}: too deep to be a submission; skipped" for p in deeper]
            elif child.is_symlink() and child.suffix != ".ipynb":
                warnings.append(f"{child}: a symbolic link; not followed")
    return entries, warnings


# --------------------------------------------------------------------------- the CSV


def safe_cell(value) -> str:
    """A CSV cell a spreadsheet shows as text: a leading = + - @ (or tab, CR) gets a quote before it."""
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _header(exercises: list[str]) -> list[str]:
    return ["student", "file", "score", "total"] + [f"ex {e}" for e in exercises] + ["problems"]


def _row(sub: Submission, exercises: list[str]) -> list[str]:
    cells = [sub.student, sub.path, sub.score, len(exercises)]
    cells += [sub.exercises.get(e, {}).get("status", NOT_RUN) for e in exercises]
    return [safe_cell(c) for c in cells + ["; ".join(sub.problems)]]


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


# --------------------------------------------------------------------------- the run


def preflight(lesson: str, release, out: Path, feedback_dir: Path) -> list[str]:
    """Everything that is the instructor's to fix, checked before any student is graded."""
    import importlib.util

    import nbformat

    if importlib.util.find_spec("ipykernel") is None:
        raise InstructorError(
            f"no Jupyter kernel: ipykernel is not installed for {sys.executable} "
            "(pip install 'course-lib[instructor]' or pip install ipykernel)"
        )
    try:
        release_nb = nbformat.read(release, as_version=4)
    except Exception as exc:
        raise InstructorError(f"cannot read the released notebook {release}: {exc}") from None
    expected = expected_exercises(release_nb)
    if not expected:
        raise InstructorError(f"{release} has no exercises (no ex-N-M answer cells): is it the exercise notebook?")
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
) -> list[Submission]:
    """Grade every submission; append one CSV row each to ``out`` as it finishes, and a feedback file each.

    Raises :class:`InstructorError` (nothing graded) for set-up problems. Ctrl-C stops the run: rows
    already written stay, the students in progress get no row, and the same call resumes.
    """
    from course_lib._validate import positive_int

    jobs = positive_int("jobs", jobs)
    cell_timeout = positive_int("cell_timeout", cell_timeout)
    budget = positive_int("budget", budget)
    limits = limits or sandbox.Limits()
    release = Path(release) if release else release_notebook(lesson, root)
    lesson = lesson[:2] if lesson else release.name[:2]
    out = Path(out)
    feedback_dir = Path(feedback_dir) if feedback_dir else out.with_name(out.stem + "_feedback")
    entries, warnings = collect(submissions)
    if not entries:
        raise ValueError("submissions: no notebooks found")
    names = [e.student for e in entries]
    duplicates = sorted({s for s in names if names.count(s) > 1})
    if duplicates:
        raise ValueError(f"submissions: two files would share the student name(s) {duplicates}; rename them")
    expected = preflight(lesson, release, out, feedback_dir)
    exercises = protocol(lesson)
    header = _header(sorted(expected, key=sort_key))
    done = _previous_rows(out, header)
    say = progress or (lambda *a: None)
    for warning in warnings:
        say(f"warning: {warning}")
    say(f"isolation: {sandbox.detect().describe()}")
    sandbox.sweep_cgroups()
    if exercises is None:
        say(
            "warning: course_lib.checks has no exercises() protocol; grades come from check results written "
            "inside the student's kernel, which a determined student can forge"
        )
    inside = [e for e, ex in (exercises or {}).items() if not getattr(ex, "trusted", True)]
    if inside:
        say(
            f"warning: exercise(s) {', '.join(inside)} are judged inside the student's kernel (their checks are not "
            "yet split into draw / run / judge), so a determined student can forge those"
        )
    if done:
        say(f"resuming: {len(done)} student(s) already in {out}")
    todo = [e for e in entries if safe_cell(e.student) not in done]
    new_file = not out.exists() or out.stat().st_size == 0
    results: list[Submission] = []
    with open(out, "a", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        if new_file:
            writer.writerow(header)
            f.flush()
        job = {
            "release": str(release),
            "lesson": lesson,
            "cell_timeout": cell_timeout,
            "budget": budget,
            "limits": asdict(limits),
        }
        for sub in _run_all(todo, job, jobs, budget):
            writer.writerow(_row(sub, sorted(expected, key=sort_key)))
            f.flush()
            os.fsync(f.fileno())
            (feedback_dir / f"{_file_name(sub.student)}.md").write_text(feedback_text(sub), encoding="utf-8")
            results.append(sub)
            say(
                f"{sub.student}: {sub.score}/{len(sub.exercises)} passed"
                + (f"; {len(sub.problems)} problem(s)" if sub.problems else "")
                + f" ({sub.seconds:.0f} s)"
            )
    return results


def _file_name(student: str) -> str:
    name = re.sub(r"[^\w.-]", "_", student).lstrip(".-") or "student"
    return name[:100]


class _Worker:
    """A grader process of our own (a new session, so Ctrl-C reaches only the main process) that grades
    one submission at a time: a job as a JSON line on its stdin, the Submission as a JSON line on its stdout.
    Kept for many submissions, so its imports (nbclient, torch) are paid once."""

    def __init__(self):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "course_lib.instructor.grading", "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
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
            sub = Submission(student=entry.student, path=str(entry.path))
            why = "ran past the total time budget" if late else "the grader's worker failed"
            sub.problems.append(f"not graded: {why}; tell your instructor")
            return sub

    def kill(self) -> None:
        import signal

        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()


def _run_all(entries: list[Entry], job: dict, jobs: int, budget: int):
    """Grade every entry with ``jobs`` workers; yield each Submission as it finishes. A worker past the
    budget (plus a margin for starting the kernel) is killed with everything it started, and replaced."""
    import select

    pending = list(entries)
    workers: list[_Worker] = []
    try:
        while pending or any(w.entry for w in workers):
            for worker in workers:
                if worker.entry is None and pending:
                    worker.give(pending.pop(0), job)
            while pending and len(workers) < jobs:
                workers.append(_Worker())
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
                if worker.entry and time.monotonic() - worker.started > budget + 120:
                    worker.kill()
                    workers.remove(worker)
                    yield worker.result(late=True)
    finally:  # Ctrl-C, or any error of ours: no worker outlives the run
        for worker in workers:
            worker.kill()


def _worker() -> int:
    # our stdout carries the results; the kernels inherit 1 and 2, so point those at /dev/null
    results = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    for line in sys.stdin:
        job = json.loads(line)
        sub = grade_submission(
            job["path"],
            job["release"],
            lesson=job["lesson"],
            student=job["student"],
            cell_timeout=job["cell_timeout"],
            budget=job["budget"],
            limits=sandbox.Limits(**job["limits"]),
        )
        results.write(json.dumps(asdict(sub)) + "\n")
        results.flush()
    return 0


def release(lesson: str, dest, root=None) -> Path:
    """Copy the exercise notebook of ``lesson`` into ``dest`` to hand out; never overwrite a file there."""
    source = release_notebook(lesson, root)
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / source.name
    if target.exists():
        raise FileExistsError(f"{target} exists already (a student's work?); not overwriting it")
    shutil.copyfile(source, target)
    return target


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


__all__ = [
    "grade",
    "grade_submission",
    "release",
    "restore_checks",
    "feedback_text",
    "collect",
    "safe_cell",
    "read_regular",
    "parse_results",
    "Submission",
    "InstructorError",
    "PASSED",
    "FAILED",
    "NOT_IMPLEMENTED",
    "NOT_RUN",
]

if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        sys.exit(_worker())
    sys.exit("usage: course-lib grade ... (this module is the grader's worker)")
