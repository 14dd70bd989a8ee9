"""The design's floors, enforced: lesson modules stay headless, tensors are made on the right device."""

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "course_lib"
LESSON_MODULES = ["device", "corpora", "ngram", "backprop", "parentheses", "rnn", "attention", "seq2seq", "dates",
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
CONSTRUCTOR = re.compile(r"torch\.(zeros|ones|empty|full|arange|linspace|randn|rand|randint|eye|tensor)\(")


@pytest.mark.parametrize("module", existing(LESSON_MODULES))
def test_tensor_constructors_say_which_device(module):
    """A tensor made without device= lands on the CPU and breaks the model on a GPU.

    Lines that are CPU-only on purpose say so with a `# cpu:` comment.
    """
    offenders = []
    for number, line in enumerate((PACKAGE / f"{module}.py").read_text(encoding="utf-8").splitlines(), 1):
        code = line.split("#")[0]
        says_device = "device=" in line or "**factory" in line  # torch.nn's factory_kwargs idiom counts
        if CONSTRUCTOR.search(code) and not says_device and "# cpu:" not in line:
            offenders.append(f"{module}.py:{number}: {line.strip()}")
    assert not offenders, "tensor constructors without device=:\n" + "\n".join(offenders)
