"""Make a release: check it, build its wheel and sdist from the committed tree, and tag it ``vX.Y.Z``.

    .venv/bin/python scripts/release.py --dry-run   # every check and both files in dist/, no tag (make release-check)
    .venv/bin/python scripts/release.py             # the same, then an annotated tag vX.Y.Z (make release)

The version is pyproject.toml's (its one home). Before building, the script refuses: uncommitted changes
(the release is what the tag points at), an existing tag, a version with no section in CHANGELOG.md, a
CITATION.cff of another version, notebooks out of step with their sources (their badges and install cells
name the version), model cards out of step with the checkpoints. The wheel and sdist are built from
``git archive HEAD`` in a temporary folder, so nothing left in the clone (build/, egg-info) gets in.
Then push the tag and attach dist/* to the GitHub release; notebooks opened from their badges install
``course-lib @ git+URL@vX.Y.Z``, which needs only the tag.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from course_lib import _project  # noqa: E402


def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def problems(root: Path = ROOT, version: str | None = None, require_clean: bool = True) -> list[str]:
    """What stops the release of ``root`` at ``version`` (default: its pyproject's), one line each."""
    version = version or _project.read_pyproject(root / "pyproject.toml")["version"]
    found = []
    if require_clean and git("status", "--porcelain", cwd=root).strip():
        found.append("uncommitted changes: commit them first (the release is what the tag points at)")
    if git("tag", "--list", _project.tag(version), cwd=root).strip():
        found.append(f"the tag {_project.tag(version)} exists already: raise the version in pyproject.toml")
    changelog = (root / "CHANGELOG.md").read_text(encoding="utf-8") if (root / "CHANGELOG.md").exists() else ""
    if not re.search(rf"^## {re.escape(version)}\b", changelog, re.MULTILINE):
        found.append(f"CHANGELOG.md has no section '## {version}'")
    citation = (root / "CITATION.cff").read_text(encoding="utf-8") if (root / "CITATION.cff").exists() else ""
    if f'version: "{version}"' not in citation:
        found.append(f'CITATION.cff does not say version: "{version}"')
    return found


def build_dists(source: Path, out: Path) -> list[Path]:
    """The sdist and the wheel of the project in ``source``, written to ``out`` (setuptools, no isolation)."""
    out.mkdir(parents=True, exist_ok=True)
    names = []
    for hook in ("build_sdist", "build_wheel"):  # one process each: setuptools keeps state between them
        code = f"import sys; from setuptools import build_meta as b; print('BUILT', b.{hook}(sys.argv[1]))"
        done = subprocess.run(
            [sys.executable, "-c", code, str(out)], cwd=source, capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"{hook} failed:\n{done.stderr[-3000:]}")
        names.append(next(line for line in done.stdout.splitlines() if line.startswith("BUILT ")).split()[1])
    return [out / name for name in names]


def committed_tree(into: Path) -> Path:
    """HEAD's files (``git archive``) unpacked in ``into``."""
    archive = into / "head.tar"
    subprocess.run(["git", "archive", "--format=tar", "-o", str(archive), "HEAD"], cwd=ROOT, check=True)
    tree = into / "tree"
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data") if sys.version_info >= (3, 12) else tar.extractall(tree)
    return tree


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="check and build, but do not tag")
    parser.add_argument("--out", default=str(ROOT / "dist"), help="where the wheel and sdist go (default dist/)")
    args = parser.parse_args(argv)
    version = _project.read_pyproject(ROOT / "pyproject.toml")["version"]
    found = problems(ROOT, version, require_clean=not args.dry_run)
    for command, what in (
        ([sys.executable, "-m", "course_lib.instructor.build", "build", "--check"], "notebooks out of date"),
        ([sys.executable, str(ROOT / "scripts" / "model_cards.py"), "--check"], "model cards out of date"),
    ):
        if subprocess.run(command, cwd=ROOT, capture_output=True).returncode != 0:
            found.append(f"{what}: run `{' '.join(Path(c).name if i == 0 else c for i, c in enumerate(command))}`")
    if found:
        print(f"not releasing {version}:\n  " + "\n  ".join(found), file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        dists = build_dists(committed_tree(Path(tmp)), Path(args.out))
    for dist in dists:
        print(f"built {dist}")
    tag = _project.tag(version)
    if args.dry_run:
        print(f"dry run: not tagging {tag}")
        return 0
    git("tag", "-a", tag, "-m", f"course-lib {version}")
    repo = _project.read_pyproject(ROOT / "pyproject.toml")["urls"]["Repository"]
    attach = ", ".join(d.name for d in dists)
    print(f"tagged {tag}. Next: git push origin {tag}, and attach {attach} to {repo}/releases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
