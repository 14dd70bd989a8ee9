"""The design's floors, enforced: lesson modules stay headless, tensors are made on the right device."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "course_lib"
LESSON_MODULES = ["device", "corpora", "ngram", "backprop", "parentheses", "rnn", "memory", "attention", "seq2seq", "dates",
                  "transformer", "train"]
# What each floor may not import (never upward).
FORBIDDEN = {"matplotlib", "ipywidgets", "IPython.display", "course_lib.viz", "course_lib.quiz", "course_lib.checks",
             "course_lib.notebooks", "course_lib.grading", "course_lib.cli"}


def existing(names):
    return [n for n in names if (PACKAGE / f"{n}.py").exists()]


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names}
    return out


@pytest.mark.parametrize("module", existing(LESSON_MODULES))
def test_lesson_modules_import_nothing_from_higher_floors(module):
    imports = imported_modules(PACKAGE / f"{module}.py")
    bad = sorted(i for i in imports if any(i == f or i.startswith(f + ".") for f in FORBIDDEN))
    assert not bad, f"course_lib/{module}.py imports {bad}: lesson modules must stay headless (see DESIGN.md)"


# torch constructors that make a tensor on the CPU unless told otherwise
CONSTRUCTORS = {"zeros", "ones", "empty", "full", "arange", "linspace", "randn", "rand", "randint", "randperm", "eye",
                "tensor"}


@pytest.mark.parametrize("module", existing(LESSON_MODULES))
def test_tensor_constructors_say_which_device(module):
    """A tensor made without device= lands on the CPU and breaks the model on a GPU.

    A call passes ``device=`` (or ``**factory_kwargs``, torch.nn's idiom); a call that is
    CPU-only on purpose says so with a ``# cpu:`` comment on one of its lines.
    """
    source = (PACKAGE / f"{module}.py").read_text(encoding="utf-8")
    lines = source.splitlines()
    offenders = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "torch"
                and node.func.attr in CONSTRUCTORS):
            continue
        says_device = any(k.arg == "device" or k.arg is None for k in node.keywords)
        span = lines[node.lineno - 1:node.end_lineno]
        if not says_device and not any("# cpu:" in line for line in span):
            offenders.append(f"{module}.py:{node.lineno}: {span[0].strip()}")
    assert not offenders, "tensor constructors without device=:\n" + "\n".join(offenders)
