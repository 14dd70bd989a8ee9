"""The clouds, stood in for offline: fresh virtual environments that know nothing of the clone.

- Colab: a fresh venv with what Colab preinstalls that matters here (torch, ipywidgets 7.7, ipykernel,
  matplotlib, numpy, pandas, tqdm; kept installed in build/launch-envs/, outside the fresh venv, as Colab
  keeps them outside what a notebook installs) and nothing of the course; one lesson copied alone into an empty folder;
  its first cell, pointed at a locally built wheel by COURSE_LIB_WHEEL (the notebook is not edited),
  installs the course; the lesson runs headless and its explorers print their static result.
- Binder: binder/requirements.txt installed into a fresh venv (pip with the constraints, no index: the
  CPU torch of the local wheels, never CUDA), then a lesson runs in place, its install cell doing nothing.

Both install from a wheelhouse (build/launch-wheelhouse/, filled once with `pip download`, the only step
that may need the network; afterwards everything is offline) and run on Python 3.11: the only CPU build
of torch 2.13.0 this machine can install offline is for 3.11 (PyPI's for 3.12 is the CUDA build, with
several GB of NVIDIA libraries). Each test takes a minute or two (venv, torch, the lesson).
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


def offline_env(**extra: str) -> dict:
    """The environment of every install and kernel here: pip reads the wheelhouse and /opt/wheels only."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PIP_CONSTRAINT")}
    links = " ".join(filter(None, [str(WHEELHOUSE), os.environ.get("PIP_FIND_LINKS", "")]))
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=links, PIP_DISABLE_PIP_VERSION_CHECK="1", **extra)
    return env


@pytest.fixture(scope="session")
def wheelhouse() -> Path:
    """Every distribution both environments need, downloaded once (the stamp names what was asked for)."""
    if not Path(PYTHON).exists():
        pytest.skip(f"no Python 3.11 at {PYTHON} (set COURSE_LIB_LAUNCH_PYTHON)")
    binder = (ROOT / "binder" / "requirements.txt").read_text()
    wanted = "\n".join([*COLAB, binder, (ROOT / "pyproject.toml").read_text(), (ROOT / "constraints.txt").read_text()])
    stamp = WHEELHOUSE / f".{hashlib.sha256(wanted.encode()).hexdigest()[:16]}"
    if stamp.exists():
        return WHEELHOUSE
    WHEELHOUSE.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "PIP_NO_INDEX"}
    # Binder's requirements without their index options (PyTorch's CPU index is not reachable from every
    # machine; the local CPU torch is found through PIP_FIND_LINKS)
    binder_lines = [line for line in binder.splitlines() if line.strip() and not line.startswith(("#", "-"))]
    downloads = [
        ["-d", str(WHEELHOUSE), *COLAB],  # Colab's side, unconstrained (as Colab is)
        # Binder's side (the course's dependencies with the constraints), and what builds the course from source
        ["-d", str(WHEELHOUSE), "-c", str(ROOT / "constraints.txt"), *binder_lines],
        ["-d", str(WHEELHOUSE), "setuptools>=77", "wheel"],
    ]
    for args in downloads:
        done = pip(PYTHON, "download", "--quiet", *args, cwd=ROOT, env=env, timeout=1200)
        if done.returncode != 0:
            pytest.fail(f"could not fill the wheelhouse (needs PyPI once): pip download {args}\n{done.stderr[-2000:]}")
    for old in WHEELHOUSE.glob(".*"):
        old.unlink()
    stamp.touch()
    return WHEELHOUSE


def fresh_venv(where: Path) -> str:
    subprocess.run([PYTHON, "-m", "venv", str(where)], check=True, capture_output=True)
    return str(where / "bin" / "python")


def site_packages(python: str) -> Path:
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    return Path(subprocess.run([python, "-I", "-c", code], capture_output=True, text=True, check=True).stdout.strip())


def colab_preinstalled() -> Path:
    """A venv holding what Colab preinstalls (COLAB), made once and kept in build/launch-envs/ (it takes
    minutes: torch and the Jupyter stack ipywidgets 7.7 pulls in); its site-packages folder."""
    key = hashlib.sha256("\n".join([PYTHON, *COLAB]).encode()).hexdigest()[:12]
    base = ROOT / "build" / "launch-envs" / f"colab-{key}"
    if not (base / ".complete").exists():
        shutil.rmtree(base, ignore_errors=True)
        done = pip(fresh_venv(base), "install", "--quiet", NO_COMPILE, *COLAB, env=offline_env(), timeout=2400)
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


def test_colab_like_a_lesson_alone_installs_the_course_and_runs_with_ipywidgets_7(wheelhouse, course_wheel, tmp_path):
    python = fresh_venv(tmp_path / "venv")
    # Colab's packages are preinstalled outside the environment the course goes into, as in Colab: a .pth
    # puts them on the path (pip counts them as installed and leaves them alone)
    (site_packages(python) / "colab_preinstalled.pth").write_text(f"{colab_preinstalled()}\n")
    assert installed_version(python, "torch").startswith("2.13.0")
    assert installed_version(python, "course-lib") is None  # nothing of the course
    alone = tmp_path / "content"
    alone.mkdir()
    shutil.copy(ROOT / "notebooks" / f"{LESSON}.ipynb", alone)

    nb = run_notebook(alone / f"{LESSON}.ipynb", python, offline_env(COURSE_LIB_WHEEL=str(course_wheel)), tmp_path)

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
        env=offline_env(),
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr
    listed = pip(python, "list", "--format=freeze", env=offline_env()).stdout
    assert not [line for line in listed.splitlines() if line.lower().startswith(("nvidia", "triton"))], listed
    assert installed_version(python, "torch").endswith("+cpu")
    assert installed_version(python, "ipykernel").startswith("6.")

    # the install cell would fail here (no index, no COURSE_LIB_WHEEL): it must find the release installed
    nb = run_notebook(repo / "notebooks" / f"{LESSON}.ipynb", python, offline_env(), tmp_path)

    assert not [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert "course_lib " in texts(nb)
