"""The floors (ARCHITECTURE.md), enforced from the folders: imports run downward, lesson modules stay headless,
tensors are made on the right device."""

import ast
from pathlib import Path

import pytest

from course_lib.checks.borrowed import _parse  # ast.parse, again on CPython 3.11's spurious depth mismatch

PACKAGE = Path(__file__).resolve().parents[1] / "course_lib"
# The floors are the folders (ARCHITECTURE.md): course_lib/*.py teaches, notebook/ runs notebooks,
# checks/ checks exercises, instructor/ builds and grades. Imports run downward only.
FLOORS = ["", "notebook", "checks", "instructor"]
# Third-party packages a floor may not import: the lesson floor stays headless, and only the
# instructor floor may use what the instructor extra installs.
HEADLESS = {"matplotlib", "ipywidgets", "IPython"}
INSTRUCTOR_ONLY = {"jupytext", "nbformat", "nbclient", "nbconvert", "sphinx", "myst_nb", "pydata_sphinx_theme"}
FORBIDDEN_THIRD_PARTY = {"": HEADLESS | INSTRUCTOR_ONLY, "notebook": INSTRUCTOR_ONLY, "checks": INSTRUCTOR_ONLY}


def floor_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else ""


def modules_on(floor: str) -> list[Path]:
    return sorted((PACKAGE / floor).glob("*.py"))


LESSON_MODULES = [p.stem for p in modules_on("") if p.stem != "__init__"]
# course_lib/__init__.py is the package's front door: it re-exports setup lazily, on first use.
ALL_MODULES = [p for floor in FLOORS for p in modules_on(floor) if p != PACKAGE / "__init__.py"]


def imported_modules(path: Path) -> set[str]:
    tree = _parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names}
    return out


def floor_of_import(name: str) -> str | None:
    """The floor of a ``course_lib...`` import, None for anything else."""
    parts = name.split(".")
    if parts[0] != "course_lib":
        return None
    return parts[1] if len(parts) > 1 and parts[1] in FLOORS[1:] else ""


def test_every_module_sits_on_a_floor():
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(FLOORS[1:]), f"course_lib's subpackages are the floors {FLOORS[1:]}; found {sorted(folders)}"


@pytest.mark.parametrize("path", ALL_MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_run_downward_only(path):
    here = FLOORS.index(floor_of(path))
    bad = []
    for name in imported_modules(path):
        target = floor_of_import(name)
        if target is not None and FLOORS.index(target) > here:
            bad.append(name)
        top = name.split(".")[0]
        if top in FORBIDDEN_THIRD_PARTY.get(floor_of(path), set()):
            bad.append(name)
    assert not bad, (
        f"course_lib/{path.relative_to(PACKAGE)} imports {sorted(set(bad))}: imports run downward only "
        "(lessons -> notebook -> checks -> instructor); see ARCHITECTURE.md"
    )


def test_a_misplaced_import_is_caught():
    """The rule itself: a lesson module importing viz is flagged."""
    assert FLOORS.index(floor_of_import("course_lib.notebook.viz")) > FLOORS.index("")
    assert floor_of_import("course_lib.ngram") == "" and floor_of_import("torch") is None
    assert floor_of_import("course_lib.instructor") == "instructor"


# torch constructors that make a tensor on the CPU unless told otherwise
CONSTRUCTORS = {
    "zeros",
    "ones",
    "empty",
    "full",
    "arange",
    "linspace",
    "randn",
    "rand",
    "randint",
    "randperm",
    "eye",
    "tensor",
}


@pytest.mark.parametrize("module", LESSON_MODULES)
def test_tensor_constructors_say_which_device(module):
    """A tensor made without device= lands on the CPU and breaks the model on a GPU.

    A call passes ``device=`` (or ``**factory_kwargs``, torch.nn's idiom); a call that is
    CPU-only on purpose says so with a ``# cpu:`` comment on one of its lines.
    """
    source = (PACKAGE / f"{module}.py").read_text(encoding="utf-8")
    lines = source.splitlines()
    offenders = []
    for node in ast.walk(_parse(source)):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "torch"
            and node.func.attr in CONSTRUCTORS
        ):
            continue
        says_device = any(k.arg == "device" or k.arg is None for k in node.keywords)
        span = lines[node.lineno - 1 : node.end_lineno]
        if not says_device and not any("# cpu:" in line for line in span):
            offenders.append(f"{module}.py:{node.lineno}: {span[0].strip()}")
    assert not offenders, "tensor constructors without device=:\n" + "\n".join(offenders)
