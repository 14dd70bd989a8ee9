"""Build the course notebooks from their sources, and the exercises from the solutions.

Run ``python -m course_lib.instructor.build build`` (``make notebooks``) after editing a source, and
``python -m course_lib.instructor.build build --check`` (CI) to verify every built file is in sync.

Layout
------
Paths are relative to the repository root (the directory holding ``pyproject.toml``)::

    notebooks/NN_topic.py    lesson source (jupytext "percent" format)  -> notebooks/NN_topic.ipynb
    solutions/NN_topic.py    solution source, with markers               -> solutions/NN_topic.ipynb
                                                                          -> exercises/NN_topic.ipynb

``NN`` is two digits. Only files named ``NN_topic.py`` / ``NN_topic.ipynb`` in these three
folders are managed; anything else there is left alone. Only the ``.py`` files are edited by
hand. The ``.ipynb`` files are committed without outputs, and building them is deterministic:
fixed kernelspec (``python3``), nbformat 4.5, no outputs, ``execution_count`` None, and cell ids
derived from the cell's content, so rebuilding from unchanged sources gives byte-identical files.
Every built notebook also gets its launch badges (Colab, Binder) and the install cell that makes it run
outside a clone, from pyproject.toml's version and repository URL (:mod:`course_lib.instructor.launch`).

Sources
-------
Cells start with ``# %%`` (code) or ``# %% [markdown]`` (markdown, each line commented with
``# ``). No jupytext header is needed; if there is one it is ignored. Cell metadata written on
the marker line (``# %% tags=["raises-exception"]``) is kept; jupytext's own layout keys are not.

Solution markers, exercise ids and nbgrader metadata: see :mod:`course_lib.instructor.exercises`.

Never overwriting someone's work
--------------------------------
Each built notebook records, in ``metadata.course_lib``, the source it came from and two
hashes of what was written: ``generated_hash`` (everything: cells, outputs, metadata) and
``sources_hash`` (cell types and sources only). Before replacing an existing file the build
recomputes them from the file on disk:

- unchanged since it was built: replaced.
- ``exercises/``: any change at all (a student's code, or outputs saved after running it):
  **refused**, the file is left as it is, unless ``force=True`` (``--force``).
- ``notebooks/`` and ``solutions/``: if only outputs, execution counts or metadata changed
  (someone ran it in Jupyter and saved), it is rebuilt and the result line says that outputs
  were discarded (they come back by running it). If any cell's code or text changed, or a cell
  was added or removed: **refused** unless ``force=True``; edit the ``.py`` source instead.
- a file that was not written by this module, or is not valid JSON: refused unless forced.

Check mode writes nothing and reports as ``drift`` every built file that differs from what its
source gives (content compared as parsed JSON, so line endings do not matter), is missing, or
is an orphan (a managed ``.ipynb`` without its source). Build mode also reports orphans, and
deletes nothing. Either way the exit code is 1 when anything is not in order, so a build that
exits 0 is always followed by a passing check.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import jupytext
import nbformat
from nbformat import NotebookNode

from course_lib.instructor.exercises import exercise_ids, make_exercise, solution_notebook
from course_lib.instructor.launch import add_launch, release_of

__all__ = [
    "BuildResult",
    "build",
    "make_exercise",
    "solution_notebook",
    "exercise_ids",
    "read_source",
    "find_root",
    "main",
]

LESSONS, SOLUTIONS, EXERCISES = "notebooks", "solutions", "exercises"
NAME = re.compile(r"^\d{2}b?_[A-Za-z0-9_-]+$")  # a managed file's stem: NN_topic, or NNb_topic (going further)

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
LANGUAGE_INFO = {"name": "python"}

# Layout hints jupytext adds to cell metadata; they mean nothing in a notebook.
_JUPYTEXT_CELL_KEYS = {
    "lines_to_next_cell",
    "lines_to_end_of_cell_marker",
    "cell_marker",
    "region_name",
    "skipline",
    "noskipline",
}


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class BuildResult:
    """What happened to one built file. ``path`` is relative to the root, with ``/``."""

    path: str
    status: str  # "built" | "unchanged" | "refused" | "drift" | "orphan"
    detail: str = ""
    source: str | None = None

    @property
    def ok(self) -> bool:
        return self.status in ("built", "unchanged")

    def __str__(self) -> str:
        return f"{self.status:<9} {self.path}" + (f"  ({self.detail})" if self.detail else "")


# --------------------------------------------------------------------------- reading sources


def find_root(start: str | os.PathLike | None = None) -> Path:
    """The nearest directory at or above ``start`` (default: cwd) holding ``pyproject.toml``."""
    here = Path(start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        if (directory / "pyproject.toml").is_file():
            return directory
    raise FileNotFoundError(f"no pyproject.toml in {here} or above it; pass root= (--root DIR)")


def read_source(path: str | os.PathLike, name: str | None = None) -> NotebookNode:
    """Read a jupytext percent ``.py`` file into a clean notebook (no outputs, stable ids).

    ``name`` (default: the path) is recorded as ``metadata.course_lib.generated_from``.
    """
    path = Path(path)
    return notebook_from_text(path.read_text(encoding="utf-8"), name or path.as_posix())


def notebook_from_text(text: str, name: str) -> NotebookNode:
    """:func:`read_source` for a source already in memory (``name`` as its ``generated_from``)."""
    parsed = jupytext.reads(text, fmt="py:percent")
    cells = []
    for cell in parsed.cells:
        metadata = {k: v for k, v in cell.metadata.items() if k not in _JUPYTEXT_CELL_KEYS}
        if cell.cell_type == "code":
            cells.append(nbformat.v4.new_code_cell(cell.source, metadata=metadata))
        elif cell.cell_type == "markdown":
            cells.append(nbformat.v4.new_markdown_cell(cell.source, metadata=metadata))
        else:
            cells.append(nbformat.v4.new_raw_cell(cell.source, metadata=metadata))
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.nbformat, nb.nbformat_minor = 4, 5
    nb.metadata = {
        "kernelspec": dict(KERNELSPEC),
        "language_info": dict(LANGUAGE_INFO),
        "course_lib": {"generated_from": name},
    }
    _set_cell_ids(nb)
    return nb


def _set_cell_ids(nb: NotebookNode) -> None:
    """Ids from each cell's type and source, so they survive rebuilds and insertions elsewhere."""
    seen: dict[str, int] = {}
    for cell in nb.cells:
        digest = hashlib.sha256(f"{cell.cell_type}\0{cell.source}".encode()).hexdigest()[:12]
        seen[digest] = seen.get(digest, 0) + 1
        cell.id = digest if seen[digest] == 1 else f"{digest}-{seen[digest]}"


# --------------------------------------------------------------------------- fingerprints and files


def _hash(obj) -> str:
    return hashlib.sha256(
        json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()
    ).hexdigest()


def _fingerprints(nb) -> tuple[str, str]:
    """(hash of everything but ``metadata.course_lib``, hash of the cells' types and sources)."""
    plain = json.loads(json.dumps(nb))
    plain["metadata"] = {k: v for k, v in plain.get("metadata", {}).items() if k != "course_lib"}
    sources = [[cell.get("cell_type"), _text(cell.get("source", ""))] for cell in plain.get("cells", [])]
    return _hash(plain), _hash(sources)


def _text(source) -> str:
    return "".join(source) if isinstance(source, list) else source


def _finalize(nb: NotebookNode, generated_from: str) -> NotebookNode:
    """Stamp a built notebook with its source and the hashes of what is about to be written."""
    nb.metadata["course_lib"] = {"generated_from": generated_from}
    generated, sources = _fingerprints(nb)
    nb.metadata["course_lib"].update(generated_hash=generated, sources_hash=sources)
    return nb


def _serialize(nb: NotebookNode) -> bytes:
    text = nbformat.writes(nb, version=4)
    return (text if text.endswith("\n") else text + "\n").encode("utf-8")


def _parse(data: bytes) -> dict | None:
    """The notebook in ``data`` as plain JSON with sources joined, or None if it is not one."""
    try:
        nb = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return None
    for cell in nb["cells"]:
        if isinstance(cell, dict):
            cell["source"] = _text(cell.get("source", ""))
            for output in cell.get("outputs", []) or []:
                if isinstance(output, dict) and "text" in output:
                    output["text"] = _text(output["text"])
    return nb


def _state(existing: dict | None) -> str:
    """How a file on disk relates to what the build last wrote there.

    "pristine" (exactly as written), "ran" (same cell sources; outputs or metadata changed),
    "edited" (cell sources changed), or "foreign" (not written by this module / not a notebook).
    """
    stamp = (existing or {}).get("metadata", {}).get("course_lib", {})
    if not isinstance(stamp, dict) or "generated_hash" not in stamp:
        return "foreign"
    try:
        generated, sources = _fingerprints(existing)
    except (AttributeError, TypeError):  # mangled by hand beyond recognition
        return "edited"
    if generated == stamp["generated_hash"]:
        return "pristine"
    if sources == stamp.get("sources_hash"):
        return "ran"
    return "edited"


# --------------------------------------------------------------------------- build


@dataclass
class _Target:
    path: Path  # the .ipynb to write
    kind: str  # LESSONS, SOLUTIONS or EXERCISES
    source: str | None  # relative path of the source, None for an orphan
    notebook: NotebookNode | None = None


def _sources(root: Path, folder: str) -> list[Path]:
    directory = root / folder
    return sorted(p for p in directory.glob("*.py") if NAME.match(p.stem)) if directory.is_dir() else []


def _launchable(nb: NotebookNode, out: Path, root: Path, release) -> NotebookNode:
    """A copy of ``nb`` with its launch badges and install cell (course_lib.instructor.launch). Cell ids stay
    those of the source's cells, so a solutions notebook and its exercises keep corresponding ids."""
    return add_launch(copy.deepcopy(nb), out.relative_to(root).as_posix(), release)


def _targets(root: Path) -> list[_Target]:
    """Everything the sources give, computed in memory (so a bad source fails before any write)."""
    release = release_of(root)
    targets = []
    for path in _sources(root, LESSONS):
        rel = path.relative_to(root).as_posix()
        out = path.with_suffix(".ipynb")
        nb = _launchable(read_source(path, rel), out, root, release)
        targets.append(_Target(out, LESSONS, rel, _finalize(nb, rel)))
    for path in _sources(root, SOLUTIONS):
        rel = path.relative_to(root).as_posix()
        source_nb = read_source(path, rel)
        out, exercise_out = path.with_suffix(".ipynb"), root / EXERCISES / f"{path.stem}.ipynb"
        solution = _finalize(_launchable(solution_notebook(source_nb, rel), out, root, release), rel)
        exercise = _finalize(_launchable(make_exercise(source_nb, rel), exercise_out, root, release), rel)
        targets.append(_Target(out, SOLUTIONS, rel, solution))
        targets.append(_Target(exercise_out, EXERCISES, rel, exercise))
    expected = {t.path for t in targets}
    for folder in (LESSONS, SOLUTIONS, EXERCISES):
        directory = root / folder
        if directory.is_dir():
            for path in sorted(directory.glob("*.ipynb")):
                if NAME.match(path.stem) and path not in expected:
                    targets.append(_Target(path, folder, None))
    return targets


def _refusal(rel: str, kind: str, state: str, source: str) -> str:
    if kind == EXERCISES:
        return f"{rel} was changed since it was generated (by a student?); not overwriting. Move it away or use --force"
    if state == "foreign":
        return f"{rel} was not generated by course_lib.instructor.build; not overwriting. Move it away or use --force"
    return (
        f"{rel} has cells edited since it was built; not overwriting. "
        f"Edit {source} instead; move the notebook away or use --force"
    )


def _drift(state: str, source: str) -> str:
    return {
        "pristine": f"out of date: differs from what {source} gives",
        "ran": "saved with outputs or metadata from a run",
        "edited": f"edited by hand since it was built from {source}",
        "foreign": f"not generated from {source}",
    }[state]


def build(root: str | os.PathLike | None = None, check: bool = False, force: bool = False) -> list[BuildResult]:
    """Build every lesson, solutions and exercises notebook under ``root``; one result per file.

    ``check=True`` writes nothing and reports each file that is not what its source gives as
    ``drift``. ``force=True`` overwrites files changed since they were built (see the module
    docstring). Raises ``ValueError`` for a source with bad solution markers, before writing.
    """
    root = Path(root).resolve() if root is not None else find_root()
    results = []
    for target in _targets(root):
        rel = target.path.relative_to(root).as_posix()
        if target.source is None:
            folder_source = f"{LESSONS if target.kind == LESSONS else SOLUTIONS}/{target.path.stem}.py"
            detail = f"orphan: no source {folder_source}; delete it or restore its source"
            results.append(BuildResult(rel, "drift" if check else "orphan", detail))
            continue

        new = _serialize(target.notebook)
        old = target.path.read_bytes() if target.path.exists() else None
        if old is not None and (old == new or _parse(old) == _parse(new)):
            results.append(BuildResult(rel, "unchanged", source=target.source))
            continue

        state = _state(_parse(old)) if old is not None else None
        if check:
            detail = "missing" if old is None else _drift(state, target.source)
            results.append(BuildResult(rel, "drift", detail, target.source))
            continue

        if state in (None, "pristine"):  # new, or exactly as the build left it
            detail = ""
        elif state == "ran" and target.kind != EXERCISES:  # outputs come back by running it
            detail = "discarded the outputs it was saved with"
        elif force:
            detail = "forced: overwrote changes made since it was built"
        else:
            refusal = _refusal(rel, target.kind, state, target.source)
            results.append(BuildResult(rel, "refused", refusal, target.source))
            continue
        _write(target.path, new)
        results.append(BuildResult(rel, "built", detail, target.source))
    return results


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


# --------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    """``python -m course_lib.instructor.build build [--check] [--force] [--root DIR]``; 0 when all is well."""
    parser = argparse.ArgumentParser(prog="python -m course_lib.instructor.build", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build_cmd = commands.add_parser("build", help="build notebooks/, solutions/ and exercises/ from their sources")
    build_cmd.add_argument("--check", action="store_true", help="write nothing; fail if any built file is out of date")
    build_cmd.add_argument("--force", action="store_true", help="overwrite files changed since they were built")
    build_cmd.add_argument("--root", default=None, help="repository root (default: where pyproject.toml is)")
    args = parser.parse_args(argv)
    return run_build(args.root, check=args.check, force=args.force)


def run_build(root=None, check: bool = False, force: bool = False) -> int:
    """Build (or check) every notebook, print what happened; 0 when all is well (the command's body)."""
    try:
        results = build(root, check=check, force=force)
    except (ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for result in results:
        print(result)
    failed = [r for r in results if not r.ok]
    if not results:
        print("no notebook sources found", file=sys.stderr)
    elif failed and check:
        print(f"{len(failed)} file(s) out of date; run `python -m course_lib.instructor.build build`", file=sys.stderr)
    elif failed:
        print(f"{len(failed)} file(s) not built; see above", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
