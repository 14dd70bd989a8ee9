"""The course's version and repository URL, read from their one home: pyproject.toml.

A source checkout (pyproject.toml beside the package) reads pyproject.toml itself: the metadata of an
editable install, or a ``course_lib.egg-info`` left in the clone, keeps the values of the day it was made.
An installed course (a wheel) reads its metadata: ``Version`` and the ``Project-URL`` lines pip wrote from
``[project]`` and ``[project.urls]``. Every install instruction is built here from them: the course is
installed from its tagged release in the repository, never by the bare name ``course-lib`` (no package of
that name is published, and whoever registered it later would be installed instead).
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

DIST = "course-lib"
PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def read_pyproject(path: str | Path = PYPROJECT) -> dict:
    """``{"version": ..., "urls": {label: url}}`` from a pyproject.toml (missing keys are left out).

    Python 3.10 has no tomllib; the two keys are simple enough to read line by line there.
    """
    text = Path(path).read_text(encoding="utf-8")
    try:
        import tomllib
    except ImportError:  # Python 3.10
        return _read_plainly(text)
    project = tomllib.loads(text).get("project", {})
    found = {}
    if "version" in project:
        found["version"] = project["version"]
    if project.get("urls"):
        found["urls"] = dict(project["urls"])
    return found


def _read_plainly(text: str) -> dict:
    found: dict = {}
    table = None
    for line in text.splitlines():
        header = re.match(r"^\s*\[([^\]]+)\]\s*$", line)
        if header:
            table = header.group(1).strip()
            continue
        pair = re.match(r'^\s*("?[\w .-]+"?)\s*=\s*"([^"]*)"\s*$', line)
        if not pair:
            continue
        key, value = pair.group(1).strip().strip('"'), pair.group(2)
        if table == "project" and key == "version":
            found["version"] = value
        elif table == "project.urls":
            found.setdefault("urls", {})[key] = value
    return found


def _installed() -> dict | None:
    try:
        meta = metadata.metadata(DIST)
    except metadata.PackageNotFoundError:
        return None
    urls = {}
    for line in meta.get_all("Project-URL") or []:
        label, _, url = line.partition(",")
        urls[label.strip()] = url.strip()
    return {"version": meta["Version"], "urls": urls}


def _checkout() -> dict | None:
    if not PYPROJECT.is_file():
        return None
    if not re.search(rf'^name\s*=\s*"{DIST}"', PYPROJECT.read_text(encoding="utf-8"), re.MULTILINE):
        return None  # some other project's pyproject.toml beside an installed course_lib
    return read_pyproject(PYPROJECT)


def info() -> dict:
    """The version and URLs of the course that is running: its checkout's pyproject.toml, or its metadata."""
    found = _checkout() or _installed()
    if not found or "version" not in found:
        raise RuntimeError(f"course_lib's version is unknown: {PYPROJECT} is missing and {DIST} is not installed")
    return found


def version() -> str:
    """The course's version ("0.1.0")."""
    return info()["version"]


def repository(urls: dict | None = None) -> str:
    """The repository's URL (``[project.urls] Repository``), without a trailing slash or ``.git``."""
    urls = info().get("urls", {}) if urls is None else urls
    url = urls.get("Repository")
    if not url:
        raise RuntimeError("pyproject.toml has no [project.urls] Repository")
    return url.rstrip("/").removesuffix(".git")


def tag(version_: str) -> str:
    """The git tag of a release: ``v`` and its version."""
    return f"v{version_}"


def requirement(version_: str | None = None, repo: str | None = None, extra: str = "") -> str:
    """What pip installs for the release ``version_``: ``course-lib @ git+URL@vX.Y.Z``."""
    version_ = version_ or version()
    repo = repo or repository()
    return f"{DIST}{f'[{extra}]' if extra else ''} @ git+{repo}@{tag(version_)}"


def install_command(extra: str = "") -> str:
    """The shell command that installs this release: ``pip install "course-lib @ git+URL@vX.Y.Z"``."""
    return f'pip install "{requirement(extra=extra)}"'
