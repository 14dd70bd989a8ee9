"""Dry check before grading: each submission's attacked (or replaced) exercises only, through the real harness,
unsandboxed and without the notebook's kernel run (seconds each, one at a time). Not the grade: run_class.sh is.

Usage: .venv/bin/python tests/outsider/issue33r/dry_check.py [NAME ...]
"""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE))

from attacks_src import ATTACKS  # noqa: E402

CLASS = Path("/tmp/hostile33r/class")


def main() -> None:
    logging.basicConfig(level=logging.ERROR)
    from course_lib import checks
    from course_lib.instructor import sandbox, submission

    sandbox.new_cgroup = lambda limits: None  # no cgroup for a dry check
    manifest = json.loads((CLASS / "manifest.json").read_text())
    names = sys.argv[1:] or list(ATTACKS)
    for name in names:
        attack = ATTACKS[name]
        lesson = attack["lesson"]
        todo = sorted({gid[3:].replace("-", ".") for gid in attack["cells"]} | set(attack["undeserved"]))
        todo = [e for e in todo if e in checks.exercises(lesson)]
        nb = nbformat.read(manifest[name]["path"], as_version=4)
        release = nbformat.read(sorted((ROOT / "exercises").glob(f"{lesson}_*.ipynb"))[0], as_version=4)

        class Result:
            exercises: dict = {}

        result = Result()
        start = time.monotonic()
        submission._grade_answers(
            nb,
            release,
            result,
            lesson=lesson,
            expected=todo,
            exercises=checks.exercises(lesson),
            bwrap=None,
            limits=sandbox.Limits(),
            cell_timeout=60,
            budget=300,
        )
        got = {e: v["status"] for e, v in result.exercises.items()}
        seconds = time.monotonic() - start
        print(f"{name:28} {attack['expect']:15} {got} ({seconds:.0f} s)")
        for e, v in result.exercises.items():
            if v["message"]:
                print(f"{'':30}{e}: {v['message'][:160]}")


if __name__ == "__main__":
    main()
