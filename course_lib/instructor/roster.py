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


def collect(submissions) -> tuple[list[Entry], list[str]]:
    """Every submission: a notebook path, a flat folder of ``<student>.ipynb``, or nbgrader's
    ``submitted/<student>/<assignment>/<notebook>.ipynb`` (also ``<student>/<notebook>.ipynb``).
    Nothing is followed through a symbolic link. Every name in a submissions folder gets a row or a warning:
    a link or special file named like a notebook gets a row that says what it is; any other link, special
    file or stray file gets a warning. Names are shown escaped (a name that is not UTF-8 too).
    Returns the entries and warnings for the instructor."""
    entries, warnings = [], []
    for item in submissions:
        item = Path(item)
        if item.is_symlink() or not item.exists():
            if item.suffix == ".ipynb":
                entries.append(Entry(shown(item.stem), item))
            else:
                warnings.append(f"{shown(item)}: not found (or a symbolic link); skipped")
            continue
        if not item.is_dir():
            entries.append(Entry(shown(item.stem), item))
            continue
        for child in sorted(item.iterdir()):
            kind = _kind(child)
            if child.suffix == ".ipynb" and kind != "folder":  # a file, a link or a special file: its row says
                entries.append(Entry(shown(child.stem), child))
            elif kind == "folder":  # nbgrader: one folder per student
                entries_here, warnings_here = _student_folder(child)
                entries += entries_here
                warnings += warnings_here
            elif kind == "link":
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


def _student_folder(folder: Path) -> tuple[list[Entry], list[str]]:
    """One nbgrader student folder: its one notebook (at most two levels down), and a warning for every link,
    special file, extra notebook or notebook too deep in it. Links are never followed."""
    found, warnings = [], []
    for parent, dirs, files in os.walk(folder):  # os.walk does not follow links to folders
        depth = len(Path(parent).parts) - len(folder.parts)
        for name in sorted(dirs + files):
            path = Path(parent) / name
            kind = _kind(path)
            if name == ".ipynb_checkpoints" or ".ipynb_checkpoints" in path.parts:
                continue
            if kind == "link":
                warnings.append(f"{shown(path)}: a symbolic link; not followed")
            elif kind not in ("file", "folder"):
                warnings.append(f"{shown(path)}: {kind}; skipped")
            elif kind == "file" and path.suffix == ".ipynb":
                if depth + 1 <= 2:
                    found.append(path)
                else:
                    warnings.append(f"{shown(path)}: too deep to be a submission; skipped")
            elif kind == "folder" and path.suffix == ".ipynb":
                warnings.append(f"{shown(path)}: a folder named like a notebook; skipped")
    if len(found) == 1:
        return [Entry(shown(folder.name), found[0])], warnings
    if len(found) > 1:
        warnings.append(f"{shown(folder)}: {len(found)} notebooks for one student; grading none, pass one")
    elif not warnings:
        warnings.append(f"{shown(folder)}: no notebook in it; skipped")
    return [], warnings


def unique_names(entries: list[Entry]) -> list[Entry]:
    """Two submissions with one student name (alice/ and alice.ipynb) both get graded: each gets the name
    with a short hash of its path added."""
    names = [e.student for e in entries]
    return [
        Entry(f"{e.student}#{_digest(str(e.path))}" if names.count(e.student) > 1 else e.student, e.path)
        for e in entries
    ]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:8]


def feedback_names(students: list[str]) -> dict[str, str]:
    """A feedback file name for each student, unique even where a file system ignores case: the student name
    when it is a plain file name, else its plain version with a short hash of the real name (o'neil ->
    o_neil-1a2b3c4d, so it never collides with o_neil)."""
    plain = {s: _file_name(s) for s in students}
    count: dict[str, int] = {}
    for student, name in plain.items():
        if name == student:  # names that are plain already: two alike but for case collide
            count[name.lower()] = count.get(name.lower(), 0) + 1
    names = {s: p if p == s and count[p.lower()] == 1 else f"{p[:90]}-{_digest(s)}" for s, p in plain.items()}
    seen: dict[str, int] = {}
    for name in names.values():
        seen[name.lower()] = seen.get(name.lower(), 0) + 1
    return {
        s: n if seen[n.lower()] == 1 else f"{plain[s][:80]}-{_digest(s + chr(0))}{_digest(s)}" for s, n in names.items()
    }


def _file_name(student: str) -> str:
    name = re.sub(r"[^\w.-]", "_", student).lstrip(".-") or "student"
    return name[:100]
