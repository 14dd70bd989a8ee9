"""Run outsider entries as a student would: the exercises notebook's setup cell (with a seed),
the student's answer cell (and right answers of earlier exercises it builds on), then the check cell.

Usage: python runner.py entries_lessonNN.py [more files] [--only ID,ID] --out results.jsonl
One subprocess per entry (3 seeds inside it, each in a fresh namespace)."""

import importlib.util
import json
import os
import subprocess
import sys
import time

import nbformat

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
SEEDS = (11, 22, 33)


def load_entries(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def notebook_cells(lesson):
    name = [f for f in os.listdir(os.path.join(ROOT, "exercises")) if f.startswith(lesson + "_")][0]
    nb = nbformat.read(os.path.join(ROOT, "exercises", name), as_version=4)
    setup = nb.cells[1].source
    checks = {}
    for c in nb.cells:
        gid = c.metadata.get("nbgrader", {}).get("grade_id", "")
        if gid.startswith("check-"):
            checks[gid[len("check-") :].replace("-", ".")] = c.source
    return setup, checks


CHILD = r"""
import io, json, linecache, sys, contextlib, traceback, re
payload = json.loads(sys.stdin.read())
out = []
for seed in payload["seeds"]:
    import types
    main_mod = types.ModuleType("__main__")  # a notebook's namespace is __main__: the student's code may rely on it
    sys.modules["__main__"] = main_mod
    ns = main_mod.__dict__
    buf = io.StringIO()
    rec = {"seed": seed}
    n = [0]
    def run(src, n=n, ns=ns):
        n[0] += 1
        fname = f"<ipython-input-{seed}-{n[0]}>"
        linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
        exec(compile(src, fname, "exec"), ns)
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            run(re.sub(r"seed=0", f"seed={seed}", payload["setup"]))
            for src in payload["prereq"]:
                run(src)
            run(payload["code"])
            try:
                run(payload["check"])
                rec["result_repr"] = repr(ns.get("result", ns.get("result_5_2", ns.get("result_5_3", ns.get("result_6_3", ns.get("result_6_4"))))))[:2000]
            except Exception as e:
                rec["check_exception"] = f"{type(e).__name__}: {e}"[:2000]
    except Exception as e:
        rec["cell_exception"] = f"{type(e).__name__}: {e}"[:2000]
    rec["stdout"] = buf.getvalue()[-4000:]
    out.append(rec)
print("@@RESULT@@" + json.dumps(out))
"""


def classify(rec):
    import re

    m = re.search(r"status='([a-z_ ]+)'", rec.get("result_repr", ""))
    if m and "cell_exception" not in rec:
        return m.group(1)
    text = (rec.get("stdout", "") + " " + rec.get("result_repr", "")).lower()
    if "cell_exception" in rec:
        return "cell_error"
    if "check_exception" in rec:
        return "check_raised"
    if "not implemented" in text and "passed" not in text:
        return "not_implemented"
    if "failed" in text or "refused" in text:
        return "failed"
    if "passed" in text:
        return "passed"
    return "unknown"


def main():
    args = sys.argv[1:]
    out = os.path.join(HERE, "results.jsonl")
    only = None
    files = []
    i = 0
    while i < len(args):
        if args[i] == "--out":
            out = args[i + 1]
            i += 2
        elif args[i] == "--only":
            only = set(args[i + 1].split(","))
            i += 2
        else:
            files.append(args[i])
            i += 1
    py = os.path.join(ROOT, ".venv", "bin", "python")
    for f in files:
        mod = load_entries(f)
        setup, checks = notebook_cells(mod.LESSON)
        for e in mod.ENTRIES:
            if only and e["id"] not in only:
                continue
            ex = e["ex"]
            payload = {
                "seeds": list(SEEDS),
                "setup": setup,
                "prereq": [mod.RIGHT[p] for p in mod.PREREQ.get(ex, [])],
                "code": e["code"],
                "check": checks[ex],
            }
            t0 = time.time()
            try:
                p = subprocess.run(
                    [py, "-c", CHILD],
                    input=json.dumps(payload),
                    capture_output=True,
                    text=True,
                    timeout=240,
                    cwd=os.path.join(ROOT, "exercises"),
                )
                marker = p.stdout.rfind("@@RESULT@@")
                recs = json.loads(p.stdout[marker + len("@@RESULT@@") :]) if marker >= 0 else []
                err = "" if marker >= 0 else (p.stdout[-1500:] + p.stderr[-1500:])
            except subprocess.TimeoutExpired:
                recs, err = [], "timeout"
            for r in recs:
                r["status"] = classify(r)
            row = {
                "id": e["id"],
                "lesson": mod.LESSON,
                "ex": ex,
                "kind": e["kind"],
                "desc": e["desc"],
                "draws": recs,
                "runner_error": err,
                "seconds": round(time.time() - t0, 1),
            }
            with open(out, "a") as fh:
                fh.write(json.dumps(row) + "\n")
            print(e["id"], [r["status"] for r in recs], err[:200], row["seconds"], "s", flush=True)


if __name__ == "__main__":
    main()
