"""Opening the course anywhere: the badges and install cell of every notebook, the one home of the version
and repository URL, the model cards, and the ipywidgets 7 fallback (fast). The clouds themselves are
stood in for by tests/test_launch_envs.py (slow: fresh virtual environments)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from safetensors import safe_open

from course_lib import _project
from course_lib.instructor import launch
from course_lib.notebook import setup as nbsetup

tomllib = pytest.importorskip("tomllib")  # Python 3.11+
ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
VERSION, REPOSITORY = PYPROJECT["version"], PYPROJECT["urls"]["Repository"]
OWNER_NAME = REPOSITORY.removeprefix("https://github.com/")
BUILT = sorted(p for folder in ("notebooks", "solutions", "exercises") for p in (ROOT / folder).glob("[0-9]*.ipynb"))


def test_the_version_and_repository_have_one_home():
    import course_lib

    assert course_lib.__version__ == VERSION
    assert _project.install_command() == f'pip install "course-lib @ git+{REPOSITORY}@v{VERSION}"'
    citation = (ROOT / "CITATION.cff").read_text()
    assert f'version: "{VERSION}"' in citation and f'repository-code: "{REPOSITORY}"' in citation
    assert re.search(rf"^## {re.escape(VERSION)}\b", (ROOT / "CHANGELOG.md").read_text(), re.MULTILINE)


def test_pyproject_is_read_alike_with_and_without_tomllib():
    text = (ROOT / "pyproject.toml").read_text()
    assert _project._read_plainly(text) == {"version": VERSION, "urls": PYPROJECT["urls"]}


@pytest.mark.parametrize(
    "path",
    [
        "README.md",
        *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")),
        *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "course_lib").rglob("*.py")),
    ],
)
def test_no_placeholder_url_and_no_install_of_the_unpublished_name(path):
    text = (ROOT / path).read_text()
    assert not re.search(r"<[^<>]*(repository|repo)[^<>]*URL>", text, re.IGNORECASE), path
    # `pip install course-lib` (or course-lib[extra]) without `@ git+...` installs whoever registers the name
    bare = re.findall(r"pip install ['\"]?course-lib(?:\[\w+\])?['\"]?(?!\S*\s*@)", text)
    assert not bare, (path, bare)


@pytest.mark.parametrize("path", BUILT, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_notebook_opens_from_its_badges_and_installs_its_release_first(path):
    nb = nbformat.read(path, as_version=4)
    rel = path.relative_to(ROOT).as_posix()
    first_markdown = next(c for c in nb.cells if c.cell_type == "markdown").source
    colab = f"https://colab.research.google.com/github/{OWNER_NAME}/blob/v{VERSION}/{rel}"
    binder = f"https://mybinder.org/v2/gh/{OWNER_NAME}/v{VERSION}?urlpath=lab/tree/{rel}"
    assert first_markdown.startswith(f"[![Open In Colab]({launch.COLAB_BADGE})]({colab})"), first_markdown[:300]
    assert f"[![Launch Binder]({launch.BINDER_BADGE})]({binder})" in first_markdown.splitlines()[0]
    code = next(c for c in nb.cells if c.cell_type == "code").source
    guard, _, rest = code.partition("\n\n" + "import ")  # the guard, then the cell as its source wrote it
    assert f'COURSE_RELEASE = "{VERSION}"' in guard
    assert f'"course-lib @ git+{REPOSITORY}@v{VERSION}"' in guard
    assert "course_lib.setup(" in rest and guard.index("pip") < code.index("course_lib.setup(")


def run_guard(tmp_path, installed_version: str | None) -> subprocess.CompletedProcess:
    """The install cell in a fresh Python where course_lib is ``installed_version`` (None: missing); its
    COURSE_LIB_WHEEL names a file that does not exist, so an install, if tried, fails naming it."""
    site = tmp_path / "site"
    if installed_version is not None:
        (site / "course_lib").mkdir(parents=True)
        (site / "course_lib" / "__init__.py").write_text(f"__version__ = {installed_version!r}\n")
    release = launch.Release(VERSION, REPOSITORY)
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")},
        "PYTHONPATH": str(site),
        "COURSE_LIB_WHEEL": str(tmp_path / "no-such-course.whl"),
        "PIP_NO_INDEX": "1",
    }
    code = launch.install_guard(release) + "print('imported', course_lib and course_lib.__version__)\n"
    # -S: not the test venv's site-packages (where the real course_lib is), only PYTHONPATH and the stdlib
    return subprocess.run(
        [sys.executable, "-S", "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_install_cell_does_nothing_where_the_release_is_installed(tmp_path):
    done = run_guard(tmp_path, VERSION)
    assert done.returncode == 0 and done.stdout == f"imported {VERSION}\n", done.stderr


@pytest.mark.parametrize("installed", [None, "0.0.1"], ids=["missing", "another version"])
def test_the_install_cell_installs_the_named_wheel_where_course_lib_is_missing_or_another(tmp_path, installed):
    done = run_guard(tmp_path, installed)
    assert done.returncode != 0
    assert "no-such-course.whl" in done.stderr and "CalledProcessError" in done.stderr


def test_a_miniature_course_without_a_release_gets_no_launch_cells(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert launch.release_of(tmp_path) is None
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# T"), nbformat.v4.new_code_cell("x = 1")])
    assert [c.source for c in launch.add_launch(nb, "notebooks/01_t.ipynb", None).cells] == ["# T", "x = 1"]


def test_colab_is_told_the_release_install_command():
    (note,) = [n for n in nbsetup.environment_notes("colab") if n.startswith("Colab")]
    assert f"git+{REPOSITORY}@v{VERSION}" in note


def test_ipywidgets_7_counts_as_no_widgets_so_explorers_print_their_static_result(monkeypatch):
    ipywidgets = pytest.importorskip("ipywidgets")
    from course_lib.notebook import viz

    monkeypatch.setattr(ipywidgets, "__version__", "7.7.1")
    assert not nbsetup.ipywidgets_is_8() and not nbsetup.widgets_available()
    assert any("ipywidgets 7" in n for n in nbsetup.environment_notes("jupyter"))
    import ipywidgets as w

    calls = []
    assert viz.interactive(lambda k: calls.append(k) or k * 2, k=w.IntSlider(value=3)) == 6 and calls == [3]
    monkeypatch.setattr(ipywidgets, "__version__", "8.1.9")
    assert nbsetup.ipywidgets_is_8()


def checkpoints():
    return sorted((ROOT / "course_lib" / "weights").glob("*.safetensors"))


@pytest.mark.parametrize("path", checkpoints(), ids=lambda p: p.stem)
def test_every_checkpoint_has_a_card_with_its_provenance(path):
    card = path.with_suffix(".md").read_text()
    with safe_open(str(path), "pt") as f:
        info = json.loads((f.metadata() or {}).get("info", "{}"))
    for field in ("What", "Data", "Training", "Seed", "torch", "Commit", "Licence"):
        assert f"- **{field}**" in card, (path.name, field)
    recorded_torch = info.get("torch_version") or info.get("torch")
    torch_line = next(line for line in card.splitlines() if line.startswith("- **torch**"))
    assert (recorded_torch in torch_line) if recorded_torch else ("unknown" in torch_line)
    seed_line = next(line for line in card.splitlines() if line.startswith("- **Seed**"))
    assert (f"Seed**: {info['seed']}." in seed_line) if "seed" in info else ("unknown" in seed_line)
    assert "MIT" in card


@pytest.mark.parametrize("path", ["README.md", "docs/students.md", "docs/instructors.md"])
def test_the_readme_badges_and_commands_name_the_release_of_pyproject(path):
    readme = (ROOT / path).read_text()
    found = set(re.findall(r"github\.com/([\w.-]+/[\w.-]+)/(?:blob/)?(v[\d.]+)", readme))
    found |= set(re.findall(r"/gh/([\w.-]+/[\w.-]+)/(v[\d.]+)", readme))
    found |= set(re.findall(r"git\+https://github\.com/([\w.-]+/[\w.-]+)@(v[\d.]+)", readme))
    assert found == {(OWNER_NAME, f"v{VERSION}")}
