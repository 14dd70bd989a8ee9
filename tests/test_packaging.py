"""The package as pip installs it (a wheel): everything it needs is in it, and the instructor's commands work
from the installed package in a folder that is not a clone (release, validate, grade)."""

import csv
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import nbformat
import pytest

from course_lib.instructor.ids import answer_exercise

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "course_lib"

pytestmark = pytest.mark.slow


spec = importlib.util.spec_from_file_location("release_script", ROOT / "scripts" / "release.py")
release_script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(release_script)


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict[str, Path]:
    """The sdist and the wheel, built as `make release` builds them, from a copy of the working tree (with
    what is not committed yet; setuptools' build/ folder would otherwise keep stale files)."""
    source = tmp_path_factory.mktemp("source") / "course-lib"
    skip = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache")
    shutil.copytree(ROOT, source, ignore=skip)
    sdist, wheel = release_script.build_dists(source, tmp_path_factory.mktemp("dist"))
    return {"sdist": sdist, "wheel": wheel}


@pytest.fixture(scope="module")
def wheel(dists) -> Path:
    return dists["wheel"]


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """The wheel installed into a folder of its own, named like a site-packages (the sandbox mounts those)."""
    target = tmp_path_factory.mktemp("install") / "site-packages"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    return target


def run_installed(installed: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """``python -m course_lib.instructor.cli ARGS`` with the installed copy first on the path, outside the clone."""
    env = {**os.environ, "PYTHONPATH": str(installed)}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def test_the_wheel_holds_every_module_the_weights_and_the_released_exercises_but_no_solution(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    on_disk = {
        p.relative_to(ROOT).as_posix()
        for p in PACKAGE.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix in (".py", ".safetensors", ".json")
    }
    assert on_disk and on_disk <= names, f"not packaged: {sorted(on_disk - names)}"
    released = sorted(n for n in names if n.startswith("course_lib/released/"))
    assert released == [f"course_lib/released/{p.name}" for p in sorted((ROOT / "exercises").glob("*.ipynb"))]
    archive = zipfile.ZipFile(wheel)
    for name in released:
        assert archive.read(name) == (ROOT / "exercises" / Path(name).name).read_bytes()
        assert b"BEGIN SOLUTION" not in archive.read(name)
    assert not [n for n in names if n.startswith(("solutions/", "tests/", "notebooks/", "scripts/"))]


def test_wheel_and_sdist_carry_the_licence_the_notices_and_a_card_per_checkpoint_but_no_solution(dists):
    wheel_names = zipfile.ZipFile(dists["wheel"]).namelist()
    sdist_names = [n.split("/", 1)[1] for n in tarfile.open(dists["sdist"]).getnames() if "/" in n]
    checkpoints = sorted(p.name for p in (PACKAGE / "weights").glob("*.safetensors"))
    assert len(checkpoints) >= 12
    for names, where in ((wheel_names, "wheel"), (sdist_names, "sdist")):
        for term in ("LICENSE", "NOTICE.md"):
            assert any(n == term or n.endswith(f".dist-info/licenses/{term}") for n in names), (term, where)
        cards = {n.rsplit("/", 1)[1] for n in names if n.startswith("course_lib/weights/") and n.endswith(".md")}
        assert cards == {c.replace(".safetensors", ".md") for c in checkpoints}, where
        assert not [n for n in names if n.startswith(("solutions/", "tests/"))], where
    sdist = tarfile.open(dists["sdist"])
    for member in sdist.getmembers():
        if member.isfile() and member.name.endswith(".ipynb"):  # the exercises, as released
            assert b"### BEGIN SOLUTION" not in sdist.extractfile(member).read(), member.name
    # the metadata pip reads: the version and repository of pyproject.toml, the MIT licence
    meta = zipfile.ZipFile(dists["wheel"]).read(next(n for n in wheel_names if n.endswith(".dist-info/METADATA")))
    pyproject = (ROOT / "pyproject.toml").read_text()
    version = re.search(r'^version = "([^"]+)"', pyproject, re.MULTILINE).group(1)
    repository = re.search(r'^Repository = "([^"]+)"', pyproject, re.MULTILINE).group(1)
    assert f"Version: {version}\n".encode() in meta and f"Project-URL: Repository, {repository}".encode() in meta
    assert b"License-Expression: MIT" in meta


def test_release_validate_and_grade_work_from_the_installed_package_outside_a_clone(installed, tmp_path):
    where = run_installed(installed, tmp_path, "-c", "import course_lib; print(course_lib.__file__)")
    assert where.stdout.strip().startswith(str(installed)), where  # the installed copy, not the clone's

    released = run_installed(installed, tmp_path, "-m", "course_lib.instructor.cli", "release", "01", "handout")
    assert released.returncode == 0, released.stderr
    handout = tmp_path / "handout" / "01_ngrams.ipynb"
    # the handout is the exercises notebook, cell for cell (release adds the version and the checks' fingerprints)
    assert (
        json.loads(handout.read_bytes())["cells"]
        == json.loads((ROOT / "exercises" / "01_ngrams.ipynb").read_bytes())["cells"]
    )

    # a student validates the untouched notebook: every exercise is reported as not done, exit status 1
    validated = run_installed(installed, tmp_path, "-m", "course_lib.instructor.cli", "validate", str(handout))
    assert validated.returncode == 1, validated.stdout + validated.stderr
    assert "not implemented yet" in validated.stdout

    # the instructor grades a class of two in nbgrader's layout: one solved notebook, one untouched
    solution = nbformat.read(ROOT / "solutions" / "01_ngrams.ipynb", as_version=4)
    answers = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in solution.cells
        if (c.metadata.get("nbgrader") or {}).get("solution")
    }
    solved = nbformat.read(handout, as_version=4)
    for cell in solved.cells:
        gid = (cell.metadata.get("nbgrader") or {}).get("grade_id")
        cell.source = answers.get(gid, cell.source)
    for student, nb in (("ada", solved), ("bob", nbformat.read(handout, as_version=4))):
        folder = tmp_path / "submitted" / student / "ps01"
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / "01_ngrams.ipynb")
    out = tmp_path / "grades.csv"
    graded = run_installed(
        installed,
        tmp_path,
        "-m",
        "course_lib.instructor.cli",
        "grade",
        "submitted",
        "--lesson",
        "01",
        "--out",
        str(out),
    )
    assert graded.returncode == 0, graded.stdout + graded.stderr
    rows = {row["student"]: row for row in csv.DictReader(out.open(encoding="utf-8"))}
    total = len({answer_exercise(gid) for gid in answers})
    assert rows["ada"]["score"] == rows["ada"]["total"] == str(total), rows["ada"]
    assert rows["bob"]["score"] == "0" and all(
        rows["bob"][k] == "not implemented yet" for k in rows["bob"] if k.startswith("ex ")
    )


def test_the_installed_package_reads_its_version_and_install_command_from_its_metadata(installed, tmp_path):
    pyproject = (ROOT / "pyproject.toml").read_text()
    version = re.search(r'^version = "([^"]+)"', pyproject, re.MULTILINE).group(1)
    repository = re.search(r'^Repository = "([^"]+)"', pyproject, re.MULTILINE).group(1)
    code = "import course_lib; from course_lib import _project; print(course_lib.__version__); print(_project.install_command())"
    done = run_installed(installed, tmp_path, "-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [version, f'pip install "course-lib @ git+{repository}@v{version}"']
