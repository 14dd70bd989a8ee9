"""The clouds, stood in for offline: fresh virtual environments that know nothing of the clone.

- Colab: a fresh venv on Python 3.12 (Colab's) with what Colab preinstalls that matters here (torch as PyPI
  builds it, with CUDA, as Colab has it: it runs on the CPU here; ipywidgets 7.7, ipykernel, matplotlib, numpy,
  pandas, tqdm; kept installed in build/launch-envs/, outside the fresh venv, as Colab keeps them outside what a
  notebook installs) and nothing of the course; one lesson copied alone into an empty folder; its first cell,
  pointed at a locally built wheel by COURSE_LIB_WHEEL (the notebook is not edited), installs the course; the
  lesson runs headless and its explorers print their static result.
- Binder: binder/requirements.txt installed into a fresh venv on Python 3.11 (binder/runtime.txt; pip with the
  constraints, no index: the CPU torch of the local wheels, never CUDA), then a lesson runs in place, its install
  cell doing nothing.

Both install from wheelhouses (build/launch-wheelhouse/, one per Python, filled once with `pip download`, the only
step that needs the network, PyPI; afterwards everything is offline). Each test takes a few minutes (venv, torch,
the lesson; the Colab side's torch is several GB with its NVIDIA libraries).
"""

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
WHEELHOUSE = ROOT / "build" / "launch-wheelhouse"
PYTHON = os.environ.get("COURSE_LIB_LAUNCH_PYTHON", str(Path.home() / ".pyenv/versions/3.11.7/bin/python3"))


def _python_312() -> str:
    """Colab's Python: COURSE_LIB_COLAB_PYTHON, else pyenv's newest 3.12, else python3.12 on the PATH; "" if none."""
    if os.environ.get("COURSE_LIB_COLAB_PYTHON"):
        return os.environ["COURSE_LIB_COLAB_PYTHON"]
    found = sorted(Path.home().glob(".pyenv/versions/3.12.*/bin/python3"), key=lambda p: int(p.parts[-3].split(".")[2]))
    return str(found[-1]) if found else (shutil.which("python3.12") or "")


COLAB_PYTHON = _python_312()
LESSON = "06_masked_attention"  # the quickest lesson with an explorer and a quiz (about 30 s)
TORCH = "torch==2.13.0"
COLAB = [TORCH, "ipywidgets==7.7.1", "ipykernel>=6.25,<7", "matplotlib", "numpy", "pandas", "tqdm"]
STATIC_NOTE = "(Widgets are not available here: showing the result for the default settings.)"

pytestmark = pytest.mark.slow


def pip(python: str, *args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([python, "-m", "pip", *args], capture_output=True, text=True, **kwargs)


# pip byte-compiles every file it installs; for torch's thousands of files that was two thirds of an install
# here (117 s against 35 s). What these environments check (what installs, offline, without CUDA, and that a
# lesson runs) does not depend on it: Python compiles each module it imports anyway.
NO_COMPILE = "--no-compile"


def offline_env(house: Path, **extra: str) -> dict:
    """The environment of every install and kernel here: pip reads ``house`` and /opt/wheels only."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PIP_CONSTRAINT")}
    links = " ".join(filter(None, [str(house), os.environ.get("PIP_FIND_LINKS", "")]))
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=links, PIP_DISABLE_PIP_VERSION_CHECK="1", **extra)
    return env


def _fill(house: Path, python: str, wanted: str, downloads: list) -> Path:
    """``house`` holding every distribution ``downloads`` asks ``python``'s pip for, downloaded once (the stamp
    names what was asked for)."""
    stamp = house / f".{hashlib.sha256(wanted.encode()).hexdigest()[:16]}"
    if stamp.exists():
        return house
    house.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "PIP_NO_INDEX"}
    for args in downloads:
        done = pip(python, "download", "--quiet", "-d", str(house), *args, cwd=ROOT, env=env, timeout=2400)
        if done.returncode != 0:
            pytest.fail(f"could not fill {house} (needs PyPI once): pip download {args}\n{done.stderr[-2000:]}")
    for old in house.glob(".*"):
        old.unlink()
    stamp.touch()
    return house


@pytest.fixture(scope="session")
def wheelhouse() -> Path:
    """Binder's side: the course's dependencies with the constraints, on Python 3.11."""
    if not Path(PYTHON).exists():
        pytest.skip(f"no Python 3.11 at {PYTHON} (set COURSE_LIB_LAUNCH_PYTHON)")
    binder = (ROOT / "binder" / "requirements.txt").read_text()
    wanted = "\n".join([PYTHON, binder, (ROOT / "pyproject.toml").read_text(), (ROOT / "constraints.txt").read_text()])
    # Binder's requirements without their index options (PyTorch's CPU index is not reachable from every
    # machine; the local CPU torch is found through PIP_FIND_LINKS)
    binder_lines = [line for line in binder.splitlines() if line.strip() and not line.startswith(("#", "-"))]
    downloads = [
        ["-c", str(ROOT / "constraints.txt"), *binder_lines],  # the course with the constraints, and what builds it
        ["setuptools>=77", "wheel"],
    ]
    return _fill(WHEELHOUSE / "binder", PYTHON, wanted, downloads)


@pytest.fixture(scope="session")
def colab_wheelhouse(course_wheel) -> Path:
    """Colab's side, on Python 3.12: what Colab preinstalls and what the course's wheel asks for, unconstrained
    (as in Colab, where pip resolves the course's dependencies against what is there)."""
    if not COLAB_PYTHON or not Path(COLAB_PYTHON).exists():
        pytest.skip("no Python 3.12 on this machine (Colab's; set COURSE_LIB_COLAB_PYTHON)")
    wanted = "\n".join([COLAB_PYTHON, *COLAB, (ROOT / "pyproject.toml").read_text()])
    return _fill(WHEELHOUSE / "colab", COLAB_PYTHON, wanted, [[*COLAB, str(course_wheel)]])


def fresh_venv(where: Path, python: str = PYTHON) -> str:
    subprocess.run([python, "-m", "venv", str(where)], check=True, capture_output=True)
    return str(where / "bin" / "python")


def site_packages(python: str) -> Path:
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    return Path(subprocess.run([python, "-I", "-c", code], capture_output=True, text=True, check=True).stdout.strip())


def colab_preinstalled(house: Path) -> Path:
    """A venv on Colab's Python holding what Colab preinstalls (COLAB), made once and kept in build/launch-envs/
    (it takes minutes: torch with its NVIDIA libraries, and the Jupyter stack ipywidgets 7.7 pulls in); its
    site-packages folder."""
    key = hashlib.sha256("\n".join([COLAB_PYTHON, *COLAB]).encode()).hexdigest()[:12]
    base = ROOT / "build" / "launch-envs" / f"colab-{key}"
    if not (base / ".complete").exists():
        shutil.rmtree(base, ignore_errors=True)
        python = fresh_venv(base, COLAB_PYTHON)
        done = pip(python, "install", "--quiet", NO_COMPILE, *COLAB, env=offline_env(house), timeout=2400)
        assert done.returncode == 0, done.stderr
        (base / ".complete").touch()
    return site_packages(str(base / "bin" / "python"))


@pytest.fixture(scope="session")
def course_wheel(tmp_path_factory) -> Path:
    """The course's wheel, built from a copy of the working tree (no deps, no index)."""
    source = tmp_path_factory.mktemp("source") / "course-lib"
    skip = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache")
    shutil.copytree(ROOT, source, ignore=skip)
    out = tmp_path_factory.mktemp("wheel")
    done = pip(sys.executable, "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(out), str(source))
    assert done.returncode == 0, done.stderr
    (wheel,) = out.glob("course_lib-*.whl")
    return wheel


def run_notebook(path: Path, python: str, env: dict, tmp_path: Path) -> nbformat.NotebookNode:
    """Execute ``path`` in its folder with a kernel of ``python`` (the fresh venv) and ``env``; return it run."""
    from nbclient import NotebookClient

    kernels = tmp_path / "jupyter" / "kernels" / "fresh"
    kernels.mkdir(parents=True)
    spec = {"argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"], "language": "python"}
    spec |= {"display_name": "fresh venv", "env": env}
    (kernels / "kernel.json").write_text(__import__("json").dumps(spec))
    nb = nbformat.read(path, as_version=4)
    old = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = str(tmp_path / "jupyter")
    try:
        NotebookClient(
            nb, kernel_name="fresh", timeout=300, resources={"metadata": {"path": str(path.parent)}}
        ).execute()
    finally:
        os.environ.pop("JUPYTER_PATH") if old is None else os.environ.__setitem__("JUPYTER_PATH", old)
    return nb


def texts(nb) -> str:
    out = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            out.append(output.get("text", "") or output.get("data", {}).get("text/plain", ""))
    return "\n".join(out)


def installed_version(python: str, name: str) -> str | None:
    code = f"import importlib.metadata as m\ntry: print(m.version({name!r}))\nexcept m.PackageNotFoundError: print('-')"
    # -I: not the current folder (a clone's course_lib.egg-info would count as installed)
    found = subprocess.run([python, "-I", "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    return None if found == "-" else found


def test_colab_like_a_lesson_alone_installs_the_course_and_runs_with_ipywidgets_7(
    colab_wheelhouse, course_wheel, tmp_path
):
    python = fresh_venv(tmp_path / "venv", COLAB_PYTHON)
    # Colab's packages are preinstalled outside the environment the course goes into, as in Colab: a .pth
    # puts them on the path (pip counts them as installed and leaves them alone)
    (site_packages(python) / "colab_preinstalled.pth").write_text(f"{colab_preinstalled(colab_wheelhouse)}\n")
    version = subprocess.run([python, "-I", "-c", "import sys; print(sys.version_info[:2])"], capture_output=True)
    assert version.stdout.decode().strip() == "(3, 12)", version  # Colab's Python
    assert installed_version(python, "torch").startswith("2.13.0")
    assert "+cpu" not in installed_version(python, "torch")  # PyPI's build, as Colab's, not the local CPU one
    assert installed_version(python, "course-lib") is None  # nothing of the course
    alone = tmp_path / "content"
    alone.mkdir()
    shutil.copy(ROOT / "notebooks" / f"{LESSON}.ipynb", alone)

    nb = run_notebook(
        alone / f"{LESSON}.ipynb", python, offline_env(colab_wheelhouse, COURSE_LIB_WHEEL=str(course_wheel)), tmp_path
    )

    assert installed_version(python, "course-lib") == course_wheel.name.split("-")[1]
    assert installed_version(python, "ipywidgets") == "7.7.1"  # Colab's widgets, not upgraded under its kernel
    out = texts(nb)
    assert "course_lib " in out and "running in: jupyter" in out
    assert STATIC_NOTE in out  # the explorer printed its static result
    assert not [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert sorted(p.name for p in alone.iterdir()) == [f"{LESSON}.ipynb"]  # it wrote nothing beside itself


def test_binder_requirements_install_offline_without_cuda_and_run_a_lesson(wheelhouse, tmp_path):
    python = fresh_venv(tmp_path / "venv")
    repo = tmp_path / "repo"
    skip = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache")
    shutil.copytree(ROOT, repo, ignore=skip)
    done = pip(
        python,
        "install",
        "--quiet",
        NO_COMPILE,
        "-r",
        "binder/requirements.txt",
        cwd=repo,
        env=offline_env(wheelhouse),
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr
    listed = pip(python, "list", "--format=freeze", env=offline_env(wheelhouse)).stdout
    assert not [line for line in listed.splitlines() if line.lower().startswith(("nvidia", "triton"))], listed
    assert installed_version(python, "torch").endswith("+cpu")
    assert installed_version(python, "ipykernel").startswith("6.")

    # the install cell would fail here (no index, no COURSE_LIB_WHEEL): it must find the release installed
    nb = run_notebook(repo / "notebooks" / f"{LESSON}.ipynb", python, offline_env(wheelhouse), tmp_path)

    assert not [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert "course_lib " in texts(nb)
