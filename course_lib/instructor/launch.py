"""Opening a notebook anywhere: its launch links (Colab, Binder, the file itself) and its install cell.

The builder adds both to every lesson, solutions and exercises notebook it writes, from the repository's
pyproject.toml (``[project] version`` and ``[project.urls] Repository``), so the sources in notebooks/ and
solutions/ stay as they are and a new release changes every notebook by one rebuild:

- the first markdown cell starts with an "Open in Colab" and a "launch Binder" badge, each opening this
  notebook at the release's tag (``vX.Y.Z``), so what opens is the notebook the release was written for;
- the first code cell starts with the install guard: where ``course_lib`` is missing or of another version
  (Colab, Binder, a bare Jupyter) it installs the release (``pip install "course-lib @ git+URL@vX.Y.Z"``)
  quietly, then the cell goes on as written (``import course_lib``, ``course_lib.setup(...)``). In a clone
  or any environment with the release installed it does nothing. ``COURSE_LIB_WHEEL`` (an environment
  variable) names a wheel to install instead, so tests point it at a locally built one.

A pyproject.toml without a version or a Repository URL (a test's miniature course) gets neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from course_lib import _project

COLAB_BADGE = "https://colab.research.google.com/assets/colab-badge.svg"
BINDER_BADGE = "https://mybinder.org/badge_logo.svg"
WHEEL_VARIABLE = "COURSE_LIB_WHEEL"


@dataclass(frozen=True)
class Release:
    """The release a notebook is built for: its version and the repository it is tagged in."""

    version: str
    repository: str  # https://github.com/OWNER/NAME

    @property
    def tag(self) -> str:
        return _project.tag(self.version)

    @property
    def github(self) -> tuple[str, str] | None:
        """(owner, name) when the repository is on GitHub (Colab and Binder open GitHub repositories)."""
        url = urlparse(self.repository)
        parts = [p for p in url.path.split("/") if p]
        if url.netloc != "github.com" or len(parts) != 2:
            return None
        return parts[0], parts[1]

    def requirement(self) -> str:
        return _project.requirement(self.version, self.repository)

    def colab_url(self, path: str) -> str | None:
        """Colab opening ``path`` (relative to the repository root) as tagged in this release."""
        if self.github is None:
            return None
        owner, name = self.github
        return f"https://colab.research.google.com/github/{owner}/{name}/blob/{self.tag}/{path}"

    def binder_url(self, path: str) -> str | None:
        """mybinder.org building this release (binder/) and opening ``path`` in JupyterLab."""
        if self.github is None:
            return None
        owner, name = self.github
        return f"https://mybinder.org/v2/gh/{owner}/{name}/{self.tag}?urlpath=lab/tree/{path}"

    def file_url(self, path: str) -> str:
        """The notebook file itself, as tagged in this release (a download link)."""
        if self.github is None:
            return f"{self.repository}/{path}"
        owner, name = self.github
        return f"https://raw.githubusercontent.com/{owner}/{name}/{self.tag}/{path}"


def release_of(root: str | Path) -> Release | None:
    """The release described by ``root/pyproject.toml``; None without one, or without a version or a
    Repository URL."""
    if not (Path(root) / "pyproject.toml").is_file():
        return None
    found = _project.read_pyproject(Path(root) / "pyproject.toml")
    repository = found.get("urls", {}).get("Repository")
    if not found.get("version") or not repository:
        return None
    return Release(found["version"], repository.rstrip("/").removesuffix(".git"))


def badges(release: Release, path: str) -> str:
    """One markdown line: the Colab and Binder badges for ``path`` (empty off GitHub)."""
    links = []
    colab, binder = release.colab_url(path), release.binder_url(path)
    if colab:
        links.append(f"[![Open In Colab]({COLAB_BADGE})]({colab})")
    if binder:
        links.append(f"[![Launch Binder]({BINDER_BADGE})]({binder})")
    return " ".join(links)


def install_guard(release: Release) -> str:
    """The lines that start a notebook's first code cell (see the module docstring)."""
    return f"""\
# Colab, Binder or a bare Jupyter: install the course release this notebook was written for, only where
# course_lib is missing or of another version ({WHEEL_VARIABLE}, if set, names a wheel to install instead).
import importlib, os, subprocess, sys

COURSE_RELEASE = "{release.version}"
try:
    import course_lib
except ImportError:
    course_lib = None
if course_lib is None or course_lib.__version__ != COURSE_RELEASE:
    wheel = os.environ.get("{WHEEL_VARIABLE}") or "{release.requirement()}"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", wheel], check=True)
    importlib.invalidate_caches()
    for module in [m for m in sys.modules if m.split(".")[0] == "course_lib"]:
        del sys.modules[module]  # so that the import below reads the release just installed
"""


def add_launch(nb, path: str, release: Release | None):
    """Put the badges on top of ``nb``'s first markdown cell and the install guard on top of its first code
    cell (``path``: the built notebook's path relative to the repository root). Returns ``nb``."""
    if release is None:
        return nb
    line = badges(release, path)
    markdown = next((c for c in nb.cells if c.cell_type == "markdown"), None)
    if line and markdown is not None:
        markdown.source = f"{line}\n\n{markdown.source}"
    code = next((c for c in nb.cells if c.cell_type == "code"), None)
    if code is not None:
        code.source = f"{install_guard(release)}\n{code.source}"
    return nb
