"""Reproduce quickly, without the sandbox: run a notebook's answer cells through the grader's harness and judge
them as the grader does (``submission._verdict``). Run from the worktree:

    .venv/bin/python tests/outsider/issue33/drive_harness.py NOTEBOOK 02_backprop.ipynb
"""

import secrets
import sys
import time

import nbformat

from course_lib import checks
from course_lib.instructor import harness, sandbox, submission
from course_lib.instructor.release import _setup_cell, expected_exercises


def main(nb_path: str, release_name: str) -> None:
    release = nbformat.read(f"exercises/{release_name}", as_version=4)
    nb = nbformat.read(nb_path, as_version=4)
    exercises = submission.protocol(release_name[:2])
    todo = [e for e in expected_exercises(release) if e in exercises]
    cells = submission.answer_cells(nb, todo)
    argv = harness.command(str(sandbox._package_dir().parent))
    answers = harness.Answers(argv, submission._harness_env(), "/tmp", 5_000_000)
    answers.send({"lesson": release_name[:2], "setup": _setup_cell(release).source, "cells": cells})
    print("loaded", answers.receive(time.monotonic() + 60))
    for e in todo:
        drawn = exercises[e].draw(secrets.randbits(63))
        answers.send({"exercise": e, "cases": checks.to_plain(drawn)})
        refused, reply = [], None
        while True:
            m = answers.receive(time.monotonic() + 120)
            if m is None or m.get("exercise") != e:
                print("  no reply:", str(m)[:200])
                break
            if "refused" in m:
                refused.append(m["refused"])
            elif "reply" in m:
                reply = m["reply"]
                break
        outcome = (reply, refused, "" if reply else "no reply")
        v = submission._verdict(exercises[e], drawn, outcome, None, [s for _, _, s in cells])
        print(e, v["status"], v["message"][:200], refused[:3])
        if reply is None:
            break
    answers.kill()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
