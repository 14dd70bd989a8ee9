"""Reproduce quickly, without the sandbox: run a notebook's answer cells through the grader's harness and judge
them as the grader does (submission._verdict). Run from the worktree:
    .venv/bin/python outsider/drive_harness.py NOTEBOOK 02_backprop.ipynb
"""
import sys, time, secrets, json, nbformat
from pathlib import Path
from course_lib.instructor import harness, sandbox, submission
from course_lib.instructor.release import _setup_cell, release_notebook, expected_exercises
from course_lib import checks
nbpath, lesson = sys.argv[1], sys.argv[2]
rel = nbformat.read(f"exercises/{lesson}", as_version=4)
nb = nbformat.read(nbpath, as_version=4)
exs = submission.protocol(lesson[:2])
todo=[e for e in expected_exercises(rel) if e in exs]
cells = submission.answer_cells(nb, todo)
setup=_setup_cell(rel)
argv = harness.command(str(sandbox._package_dir().parent))
a = harness.Answers(argv, submission._harness_env(), "/tmp", 5_000_000)
a.send({"lesson": lesson[:2], "setup": setup.source, "cells": cells})
print("loaded", a.receive(time.monotonic()+60))
for e in todo:
    drawn = exs[e].draw(secrets.randbits(63))
    a.send({"exercise": e, "cases": checks.to_plain(drawn)})
    refused, reply = [], None
    while True:
        m = a.receive(time.monotonic()+120)
        if m is None or m.get("exercise") != e: print("  break", str(m)[:200]); break
        if "refused" in m: refused.append(m["refused"])
        elif "reply" in m: reply = m["reply"]; break
    v = submission._verdict(exs[e], drawn, (reply, refused, "" if reply else "noreply"), None, [s for _,_,s in cells])
    print(e, v["status"], v["message"][:200], refused[:3])
    if reply is None: break
a.kill()
