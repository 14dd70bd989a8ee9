"""Grade chosen entries of checks_set.py with the instructor's grader, as an instructor would.

Each entry becomes one "student": a copy of the lesson's exercises notebook with the entry in its exercise's
answer cell (and the right answers of the earlier exercises it needs; every other exercise left as the stub).
One folder per lesson, one `course-lib grade` run per lesson (--jobs 1), then the CSV rows are read back.

    .venv/bin/python tests/outsider/issue34/grade_set.py --entries 120,121 --work /tmp/outsider34_grade
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]  # the worktree (the set lives in tests/outsider/issue34)
sys.path.insert(0, str(HERE))

import checks_set as S  # noqa: E402
from run_set import NOTEBOOKS  # noqa: E402


def _lines(source: str) -> list[str]:
    return source.splitlines(keepends=True)


def submission(entry: dict) -> dict:
    nb = json.loads((ROOT / "exercises" / f"{NOTEBOOKS[entry['lesson']]}.ipynb").read_text())
    nb = copy.deepcopy(nb)
    fill = {need: S.CORRECT[need] for need in S.NEEDS.get(entry["exercise"], [])}
    fill[entry["exercise"]] = entry["source"]
    for cell in nb["cells"]:
        gid = cell["metadata"].get("nbgrader", {}).get("grade_id", "")
        for ex, src in fill.items():
            if gid == "ex-" + ex.replace(".", "-"):
                cell["source"] = _lines(src)
    return nb


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", required=True, help="comma-separated indices into checks_set.ENTRIES")
    ap.add_argument("--work", default="/tmp/outsider34_grade")
    ap.add_argument("--out", default=str(HERE / "grades.jsonl"))
    args = ap.parse_args()
    indices = [int(i) for i in args.entries.split(",")]
    work = Path(args.work)
    by_lesson = defaultdict(list)
    for i in indices:
        by_lesson[S.ENTRIES[i]["lesson"]].append(i)
    with open(args.out, "a") as out:
        for lesson, idx in sorted(by_lesson.items()):
            folder = work / f"lesson{lesson}"
            folder.mkdir(parents=True, exist_ok=True)
            for i in idx:
                (folder / f"entry{i:03d}.ipynb").write_text(json.dumps(submission(S.ENTRIES[i]), indent=1))
            csv_path = work / f"grades{lesson}.csv"
            cmd = [str(ROOT / ".venv/bin/course-lib"), "grade", str(folder), "--lesson", lesson, "--out", str(csv_path),
                   "--root", str(ROOT), "--jobs", "1"]  # fmt: skip
            proc = subprocess.run(["timeout", "1800", *cmd], capture_output=True, text=True)
            print(f"lesson {lesson}: rc {proc.returncode}; {proc.stderr[-500:]}", flush=True)
            with open(csv_path, newline="") as f:
                rows = list(csv.DictReader(f))
            for row in rows:
                name = row.get("student", "")
                if not name.startswith("entry"):
                    continue
                i = int(name[5:8])
                rec = {"index": i, "exercise": S.ENTRIES[i]["exercise"], "kind": S.ENTRIES[i]["kind"], "row": row}
                out.write(json.dumps(rec) + "\n")
                print(json.dumps(rec)[:600], flush=True)


if __name__ == "__main__":
    main()
