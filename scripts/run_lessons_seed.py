"""Execute every lesson with other seeds, as a student who changes them would (issue 23: no lesson
asserts what one seed happened to give).

Every seed a lesson sets is moved by ``--shift``: ``course_lib.setup(seed=...)``, each
``manual_seed(N)``, each ``seed=N`` argument and the ``SEEDS`` lists. The shifted lesson runs in a
fresh kernel in notebooks/ (as a student's would), with the course's kernel watchdog; a cell that
raises fails the lesson, naming the cell. A lesson whose kernel stops answering (the watchdog's
KernelStalled) runs once more in a fresh kernel, as the grader does, and the table says so.
Precomputed tables and checkpoints are read as usual: a different seed changes only what the
lesson trains or samples itself.

    python scripts/run_lessons_seed.py                 # every lesson, shift 7
    python scripts/run_lessons_seed.py --shift 1 03 04  # lessons 03 and 04, shift 1
"""

from __future__ import annotations

import argparse
import copy
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "notebooks"

_MANUAL = re.compile(r"manual_seed\((\d+)\)")
_KWARG = re.compile(r"\bseed=(\d+)")
_SEEDS = re.compile(r"^(\s*SEEDS\s*=\s*)(.+)$", re.MULTILINE)


def shift_seeds(source: str, shift: int) -> tuple[str, int]:
    """``source`` with every seed it sets moved by ``shift``, and how many were moved."""
    if shift < 1:
        raise ValueError(f"shift must be a positive integer, got {shift!r}")
    count = 0

    def bump(match: re.Match, template: str) -> str:
        nonlocal count
        count += 1
        return template.format(int(match.group(1)) + shift)

    source = _MANUAL.sub(lambda m: bump(m, "manual_seed({})"), source)
    source = _KWARG.sub(lambda m: bump(m, "seed={}"), source)

    def bump_list(match: re.Match) -> str:
        nonlocal count
        count += 1
        values = re.sub(r"\d+", lambda d: str(int(d.group()) + shift), match.group(2))
        return match.group(1) + values

    source = _SEEDS.sub(bump_list, source)
    return source, count


def run(lesson: Path, shift: int, timeout: int) -> tuple[bool, float, int, str]:
    from course_lib.instructor import build, watchdog

    shifted, count = shift_seeds(lesson.read_text(encoding="utf-8"), shift)
    nb = build.notebook_from_text(shifted, name=lesson.name)
    start = time.perf_counter()
    problem = ""
    for attempt in (1, 2):
        try:
            watchdog.execute(copy.deepcopy(nb), notebook_name=lesson.name, path=str(LESSONS), timeout=timeout)
            break
        except watchdog.KernelStalled as error:  # the kernel stopped answering: as the grader does, once more
            problem = f"{error} (attempt {attempt})"
            print(f"{lesson.name}: {problem}; {'running it again in a fresh kernel' if attempt == 1 else ''}")
        except Exception as error:  # a failing cell: nbclient's message names it and its traceback
            problem = str(error).strip().splitlines()[-1] if str(error).strip() else type(error).__name__
            return False, time.perf_counter() - start, count, problem
    else:
        return False, time.perf_counter() - start, count, problem
    return True, time.perf_counter() - start, count, "stalled once, passed on the second run" if problem else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lessons", nargs="*", help="two-digit lesson numbers (default: every lesson)")
    parser.add_argument("--shift", type=int, default=7, help="added to every seed (default 7)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    args = parser.parse_args(argv)
    lessons = sorted(LESSONS.glob("[0-9][0-9]*_*.py"))
    if args.lessons:
        lessons = [p for p in lessons if p.name[:2] in args.lessons or p.name.split("_")[0] in args.lessons]
        if not lessons:
            parser.error(f"no lesson matches {args.lessons}")
    failed = 0
    print(f"| lesson | seeds moved by {args.shift} | ran | seconds |")
    print("| --- | --- | --- | --- |")
    for lesson in lessons:
        ok, seconds, count, problem = run(lesson, args.shift, args.timeout)
        failed += not ok
        ran = ("yes" + (f" ({problem})" if problem else "")) if ok else "FAILED: " + problem
        print(f"| {lesson.stem} | {count} | {ran} | {seconds:.1f} |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
