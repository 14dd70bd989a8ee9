"""Read the grader's CSVs against the manifest: held/BROKE per submission, controls, rows, feedback files, leaks and
planted imports. Usage: compare.py [results folder]  (default /tmp/hostile33l/results)"""

from __future__ import annotations

import csv
import json
import os
import sys
from collections import defaultdict
from pathlib import Path

OUT = Path("/tmp/hostile33l")
RES = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT / "results"


def rows_of(folder: str) -> list[dict]:
    path = RES / folder / "grades.csv"
    if not path.exists():
        return []
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def main() -> int:
    manifest = json.load(open(OUT / "class" / "manifest.json", encoding="utf-8"))
    secret = (OUT / "secret.txt").read_text().strip() if (OUT / "secret.txt").exists() else "HOSTILE33L-s3cr3t"
    by_folder = defaultdict(list)
    for entry in manifest:
        by_folder[entry["folder"]].append(entry)
    counts = defaultdict(int)
    lines = []
    for folder, entries in by_folder.items():
        rows = rows_of(folder)
        graded_folder = (RES / folder / "grades.csv").exists()
        refused_run = not graded_folder and (RES / folder / "run.log").exists()
        names = [r.get("student") for r in rows]
        shared = {n for n in names if names.count(n) > 1}  # two students, one name in the CSV
        used = set()
        for e in entries:
            matches = [i for i, r in enumerate(rows) if r.get("file") == e["path"]]
            claimed = {x["path"] for x in entries}
            if not matches:
                shown_name = e["student"].replace("\\", "\\\\").replace("\n", "\\x0a")
                matches = [
                    i
                    for i, r in enumerate(rows)
                    if r.get("file") not in claimed
                    and (
                        r.get("student", "").lstrip("'") == shown_name
                        or r.get("student", "").lstrip("'").split("#")[0] == shown_name
                    )
                ]
            used |= set(matches)
            passed = sorted(
                ex for ex in e["exercises"] for r in [rows[i] for i in matches[:1]] if r.get(f"ex {ex}") == "passed"
            )
            undeserved = sorted(set(passed) - set(e["deserves"]))
            denied = sorted(set(e["deserves"]) - set(passed))
            if refused_run:
                verdict = "BROKE (rows: 0: the grader refused the whole folder)"
            elif not graded_folder:
                verdict = "NOT GRADED"
            elif e["expect_rows"] == 0 and len(matches) == 1:
                verdict = "PHANTOM ROW (not a student; not counted as a break)"
            elif len(matches) != e["expect_rows"]:
                verdict = f"BROKE (rows: {len(matches)}, expected {e['expect_rows']})"
            elif undeserved:
                verdict = f"BROKE (got {','.join(undeserved)} undeserved)"
            elif any(rows[i].get("student") in shared for i in matches):
                verdict = f"BROKE (its CSV name {rows[matches[0]].get('student')!r} is another student's too)"
            elif e["kind"] == "control":
                verdict = "control right" if not denied else f"control WRONG (denied {','.join(denied)})"
            else:
                verdict = "held"
            counts[verdict.split(" (")[0]] += 1
            problems = rows[matches[0]].get("problems", "")[:160] if matches else ""
            msg = ""
            if matches:
                r = rows[matches[0]]
                msg = f"passed={','.join(passed) or '-'}; deserved={','.join(e['deserves']) or '-'}"
                if denied and e["kind"] != "control":
                    msg += f"; denied(deserved, not passed)={','.join(denied)}"
            lines.append(
                f"{verdict:<40} {folder}/{e['student'][:40]!r}: {e['intent'][:110]}\n{'':<40}   {msg} {problems!r}"
            )
        for i, r in enumerate(rows):
            if i not in used:
                lines.append(f"{'EXTRA ROW':<40} {folder}: {r.get('student')!r} {r.get('file')!r}")
                counts["EXTRA ROW"] += 1
        fb = RES / folder / "fb"
        if fb.exists():
            mds = sorted(p.name for p in fb.glob("*.md"))
            if len(mds) != len(rows):
                lines.append(f"FEEDBACK MISMATCH {folder}: {len(mds)} .md files for {len(rows)} rows")
                counts["FEEDBACK MISMATCH"] += 1
        log = RES / folder / "run.log"
        if log.exists() and graded_folder is False:
            lines.append(f"{folder}: no CSV; run.log says: {log.read_text()[-400:]!r}")
    # leaks: the secret anywhere the grader wrote
    leaks = []
    for root, _, files in os.walk(RES):
        for name in files:
            p = Path(root) / name
            try:
                data = p.read_bytes()
            except OSError:
                continue
            if secret.encode() in data or b"HOSTILE33L-s3cr3t" in data:
                leaks.append(str(p))
            if b"SOLUTIONS-READABLE" in data:
                leaks.append(f"{p} (solutions read)")
    markers = sorted(os.listdir(OUT / "markers")) if (OUT / "markers").exists() else []
    print("\n".join(lines))
    print()
    print("counts:", dict(counts))
    print("leaks:", leaks or "none")
    print("planted imports (markers):", markers or "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
