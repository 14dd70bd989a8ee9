"""Run every entry of checks_set.py as a student would, and write results.md.

For each entry a fresh Python process (an IPython shell, so cells land in linecache as in Jupyter) runs the
exercises notebook's setup cell, the right answers of the earlier exercises the answer needs, the answer
cell, then the exercise's check cell exactly as the notebook has it, DRAWS times (the checks draw their sizes
anew at each call). One process at a time, each under a timeout.

    .venv/bin/python outsider/run_set.py            # all entries -> outsider/raw_results.jsonl, results.md
    .venv/bin/python outsider/run_set.py --only 7.3 # the entries of one exercise
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DRAWS = 5
NOTEBOOKS = {
    "02": "02_backprop",
    "03": "03_parentheses",
    "04": "04_lstm_gru",
    "05": "05_attention",
    "06": "06_masked_attention",
    "07": "07_transformer",
}

CHILD = r'''
import json, sys
from IPython.core.interactiveshell import InteractiveShell
sys.path.insert(0, {here!r})
import checks_set as S

entry = S.ENTRIES[{index}]
nb = json.load(open({notebook!r}))
by_id = {{c["metadata"].get("nbgrader", {{}}).get("grade_id", ""): "".join(c["source"]) for c in nb["cells"]}}
setup = "".join(nb["cells"][1]["source"])
shell = InteractiveShell.instance()
out = {{"answer_error": None, "draws": []}}
shell.run_cell(setup, silent=True)
for need in S.NEEDS.get(entry["exercise"], []):
    shell.run_cell(S.CORRECT[need], silent=True)
r = shell.run_cell(entry["source"], silent=True)
if not r.success:
    err = r.error_in_exec or r.error_before_exec
    out["answer_error"] = f"{{type(err).__name__}}: {{err}}"
check = by_id["check-" + entry["exercise"].replace(".", "-")]
for _ in range({draws}):
    r = shell.run_cell(check, silent=True)
    res = shell.user_ns.get(check.split("=")[0].strip())
    if not r.success:
        err = r.error_in_exec or r.error_before_exec
        out["draws"].append({{"status": "check raised", "message": f"{{type(err).__name__}}: {{err}}"}})
    else:
        out["draws"].append({{"status": res.status, "message": res.message}})
print("@@RESULT@@" + json.dumps(out))
'''


def run_entry(index: int, entry: dict) -> dict:
    notebook = ROOT / "exercises" / f"{NOTEBOOKS[entry['lesson']]}.ipynb"
    code = CHILD.format(here=str(HERE), index=index, notebook=str(notebook), draws=DRAWS)
    try:
        proc = subprocess.run(
            ["timeout", "300", sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=320
        )
    except subprocess.TimeoutExpired:
        return {"answer_error": "runner timeout", "draws": []}
    for line in proc.stdout.splitlines():
        if line.startswith("@@RESULT@@"):
            return json.loads(line[len("@@RESULT@@") :])
    return {"answer_error": f"no result (rc {proc.returncode}): {proc.stderr[-300:]}", "draws": []}


def main() -> None:
    sys.path.insert(0, str(HERE))
    import checks_set as S

    ap = argparse.ArgumentParser()
    ap.add_argument("--only", help="one exercise id, e.g. 7.3")
    ap.add_argument("--out", default=str(HERE / "raw_results.jsonl"))
    args = ap.parse_args()
    done = {}
    out = Path(args.out)
    if out.exists():
        for line in out.read_text().splitlines():
            rec = json.loads(line)
            done[rec["index"]] = rec
    with out.open("a") as f:
        for index, entry in enumerate(S.ENTRIES):
            if args.only and entry["exercise"] != args.only:
                continue
            if index in done:
                continue
            res = run_entry(index, entry)
            rec = {"index": index, **{k: entry[k] for k in ("lesson", "exercise", "kind", "what")}, **res}
            f.write(json.dumps(rec) + "\n")
            f.flush()
            statuses = [d["status"] for d in res["draws"]]
            print(index, entry["exercise"], entry["kind"], statuses, (res["draws"] or [{}])[0].get("message", "")[:100],
                  res["answer_error"] or "", flush=True)


if __name__ == "__main__":
    main()
