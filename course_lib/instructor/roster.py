"""Who submitted what, and under which name: the submissions folder read without following a link, and a
feedback file name for each student that no other student's can collide with.

Every name gets a row or a warning (:func:`collect`); names are shown escaped (:func:`shown`), so one that
is not UTF-8 or that holds a line break is still graded and never ends the run.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from course_lib.instructor.submission import shown


@dataclass
class Entry:
    student: str
    path: Path
    problem: str = ""  # set when the submission cannot be graded at all: its row says why


def collect(submissions, notebook: str | None = None) -> tuple[list[Entry], list[str]]:
    """Every submission: a notebook path, a flat folder of ``<student>.ipynb``, or nbgrader's
    ``submitted/<student>/<assignment>/<notebook>.ipynb`` (also ``<student>/<notebook>.ipynb``).
    Nothing is followed through a symbolic link. Every name in a submissions folder gets a row or a warning:
    a link (named like a notebook, or perhaps a student's folder) or a special file named like a notebook gets a
    row that says what it is; any other special file or stray file gets a warning. Names are shown escaped (a
    name that is not UTF-8 too).
    ``notebook``, the released notebook's file name, picks a student's notebook among several in nbgrader's layout
    (a course with several assignments: one folder per assignment, each its own notebook).
    Returns the entries and warnings for the instructor."""
    entries, warnings = [], []
    for item in submissions:
        item = Path(item)
        if item.is_symlink() or not item.exists():
            if _notebook_named(item):
                entries.append(Entry(shown(item.stem), item))
            else:
                warnings.append(f"{shown(item)}: not found (or a symbolic link); skipped")
            continue
        if not item.is_dir():
            entries.append(Entry(shown(item.stem), item))
            continue
        for child in sorted(item.iterdir()):
            kind = _kind(child)
            # a file, a link or a special file named like a notebook (.IPYNB too: saved where case does not count)
            if kind != "folder" and child.name.lower() == ".ipynb":  # no name before its suffix (Path: no suffix)
                entries.append(Entry(shown(child.name), child, "not graded: the notebook has no name before .ipynb"))
            elif kind != "folder" and _notebook_named(child):  # its row says what it is
                entries.append(Entry(shown(child.stem), child))
            elif kind == "folder" and child.name == ".ipynb_checkpoints" and not _holds_folders(child):
                # Jupyter's autosave of this folder's own notebooks (files only; a student so named has folders)
                warnings.append(f"{shown(child)}: Jupyter's autosaved copies (not a student); skipped")
            elif kind == "folder":  # nbgrader: one folder per student
                entries_here, warnings_here = _student_folder(child, notebook)
                if not entries_here and _notebook_named(child):  # a folder named like a notebook: a row says so
                    why = "not graded: a folder named like a notebook, with no notebook in it"
                    entries_here = [Entry(shown(child.stem), child, why)]
                entries += entries_here
                warnings += warnings_here
            elif kind == "link":  # perhaps a student's folder (nbgrader's layout): a row says why it is not graded
                why = "not graded: a symbolic link (links are not followed); hand in the folder or the notebook itself"
                entries.append(Entry(shown(child.name), child, why))
                warnings.append(f"{shown(child)}: a symbolic link; not followed")
            elif kind != "file":
                warnings.append(f"{shown(child)}: {kind}; skipped")
            elif not child.name.startswith("."):
                warnings.append(f"{shown(child)}: not a notebook (.ipynb); skipped")
    return entries, warnings


def _kind(path: Path) -> str:
    """What a name is, without following a link: file, folder, link, or the special file it is."""
    try:
        mode = path.lstat().st_mode
    except OSError:
        return "gone"
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISREG(mode):
        return "file"
    return "a special file (FIFO, socket or device)"


def _notebook_named(path: Path) -> bool:
    """Named like a notebook: ``NAME.ipynb``, or only ``.ipynb`` (which pathlib gives no suffix at all), in any
    case (``.IPYNB``: saved or unpacked where case does not count). In a student's folder the folder names the
    student, so a notebook with no name before ``.ipynb`` is graded too."""
    return path.name.lower().endswith(".ipynb")


def _holds_folders(path: Path) -> bool:
    """Does this folder hold a folder (not through a link)? Jupyter's autosave folder holds files only."""
    try:
        return any(_kind(child) == "folder" for child in path.iterdir())
    except OSError:
        return False


def _student_folder(folder: Path, notebook: str | None = None) -> tuple[list[Entry], list[str]]:
    """One nbgrader student folder: its one notebook (at most two levels down), and a warning for every link,
    special file, extra notebook or notebook too deep in it. Links are never followed. A folder with
    notebooks in it always gives its student one row: the notebook, or (a link or special file named like
    a notebook, several notebooks, a folder that cannot be read, a link or a notebook too deep where the notebook
    belongs, only Jupyter's autosaved copy in .ipynb_checkpoints) a row that says why it was not graded."""
    found, odd, warnings, unreadable, links, deep, autosaved = [], [], [], [], [], [], []
    for parent, dirs, files in os.walk(folder, onerror=unreadable.append):  # os.walk does not follow links
        depth = len(Path(parent).parts) - len(folder.parts)
        for name in sorted(dirs + files):
            path = Path(parent) / name
            kind = _kind(path)
            if ".ipynb_checkpoints" in path.parts[len(folder.parts) :]:  # below the student's folder (its name)
                if kind == "file" and _notebook_named(path):
                    autosaved.append(path)  # Jupyter's autosave, never graded: the row says so if it is all there is
                continue
            if kind not in ("file", "folder") and _notebook_named(path) and depth + 1 <= 2:
                odd.append(path)  # graded only if it is all there is: read_regular then names what it is
                warnings.append(f"{shown(path)}: {'a symbolic link; not followed' if kind == 'link' else kind}")
            elif kind == "link":
                if depth + 1 <= 2:  # where the notebook or its assignment folder belongs
                    links.append(path)
                warnings.append(f"{shown(path)}: a symbolic link; not followed")
            elif kind not in ("file", "folder"):
                warnings.append(f"{shown(path)}: {kind}; skipped")
            elif kind == "file" and _notebook_named(path):
                if depth + 1 <= 2:
                    found.append(path)
                else:
                    deep.append(path)
                    warnings.append(f"{shown(path)}: too deep to be a submission; skipped")
            elif kind == "folder" and _notebook_named(path):
                warnings.append(f"{shown(path)}: a folder named like a notebook; skipped")
    student = shown(folder.name)
    named = [p for p in found if p.name == notebook]
    if len(found) > 1 and len(named) == 1:  # one per assignment: the one released as this lesson's notebook
        others = ", ".join(shown(p.relative_to(folder)) for p in found if p != named[0])
        return [Entry(student, named[0])], [*warnings, f"{shown(folder)}: graded {shown(named[0].name)}; not {others}"]
    if len(found) == 1:
        return [Entry(student, found[0])], warnings
    if len(found) > 1:
        why = f"not graded: {len(found)} notebooks for one student ({', '.join(shown(p.name) for p in found[:5])})"
        return [Entry(student, folder, why + "; tell your instructor which one to grade")], warnings
    if odd:
        return [Entry(student, odd[0])], warnings
    if unreadable:
        error = unreadable[0]
        why = f"not graded: the folder could not be read ({getattr(error, 'strerror', None) or error})"
        return [Entry(student, folder, why)], warnings
    # no notebook where one belongs, but the student handed in something: the row says what (a gradebook without
    # the student would say nothing)
    if links:
        why = f"not graded: {shown(links[0].relative_to(folder))} is a symbolic link (links are not followed)"
        return [Entry(student, folder, why + "; hand in the folder or the notebook itself")], warnings
    if deep:
        why = f"not graded: the notebook {shown(deep[0].relative_to(folder))} is too deep in the folder"
        return [Entry(student, folder, why + " (<student>/<assignment>/<notebook>.ipynb at most)")], warnings
    if autosaved:
        why = f"not graded: only Jupyter's autosaved copy {shown(autosaved[0].relative_to(folder))} was handed in"
        return [Entry(student, folder, why + " (hand in the notebook itself)")], warnings
    warnings.append(f"{shown(folder)}: no notebook in it; skipped")
    return [], warnings


def unique_names(entries: list[Entry]) -> list[Entry]:
    """Two submissions with one student name (alice/ and alice.ipynb) both get graded: each gets the name with
    a short hash of its path added, longer if that name is taken too (a student may be named alice#1a2b3c4d)."""
    names = [e.student for e in entries]
    taken = {n for n in names if names.count(n) == 1}
    out = []
    for e in entries:
        name = e.student
        if names.count(name) > 1:
            size = 8
            name = f"{e.student}#{_digest(str(e.path), size)}"
            while name in taken:
                size += 8
                name = f"{e.student}#{_digest(str(e.path) + chr(0) * (size // 8), size)}"
        taken.add(name)
        out.append(Entry(name, e.path, e.problem))
    return out


def _digest(text: str, size: int = 8) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:size]


# names Windows refuses whatever the extension (an LMS upload or a zip opened there)
_RESERVED = {"con", "prn", "aux", "nul"} | {f"{p}{i}" for p in ("com", "lpt") for i in range(10)}  # COM0, LPT0 too
MAX_NAME = 100  # bytes of the plain part of a feedback file name (ext4 allows 255 bytes in all)


def feedback_names(students: list[str]) -> dict[str, str]:
    """A feedback file name for each student (``<name>.md``), unique even where a file system ignores case,
    at most 120 bytes with ``.md``, only ASCII letters, digits, ``.``, ``_`` and ``-`` (valid on ext4, Windows,
    macOS and the usual LMS uploads): the student name when it is such a name already, else its plain
    version with a short hash of the real name (o'neil -> o_neil-1a2b3c4d, so it never collides with o_neil),
    with a longer hash where even that is taken."""
    plain = {s: _file_name(s) for s in students}
    as_is = [s for s in plain if plain[s] == s]
    lowered = [s.lower() for s in as_is]
    names: dict[str, str] = {s: s for s in as_is if lowered.count(s.lower()) == 1}
    taken = {n.lower() for n in names.values()}
    for s in plain:
        if s in names:
            continue
        size, name = 8, f"{plain[s][:80]}-{_digest(s)}"
        while name.lower() in taken:
            size += 8
            name = f"{plain[s][:80]}-{_digest(s + chr(0) * (size // 8), size)}"
        names[s] = name
        taken.add(name.lower())
    return names


def _file_name(student: str) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]", "_", student).lstrip(".-").rstrip(". ") or "student"
    if name.split(".")[0].lower() in _RESERVED:
        name = "_" + name
    return name[:MAX_NAME]
