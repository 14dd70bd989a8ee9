"""Reads the grader's CSVs against manifest.json: held/BROKE per submission, rows, leaks, planted imports.

python compare.py [/tmp/hostile33k]
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

BASE = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/hostile33k")


# how the grader shows a name (escaped) or names a folder-like notebook entry
ALIAS = {"new\nline": "new\\x0aline", "dora": "dora.ipynb"}


def rows_of(folder: Path):
    f = folder / "grades.csv"
    if not f.exists():
        return None
    with open(f, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def passed(row):
    return sorted(k[3:] for k, v in row.items() if k.startswith("ex ") and v == "passed")


def main():
    manifest = json.loads((BASE / "manifest.json").read_text())
    secret = (BASE / "secret.txt").read_text().strip() if (BASE / "secret.txt").exists() else None
    counts = dict(graded=0, held=0, broke=0, controls_ok=0, controls=0, row_problems=0, missing_lessons=0)
    breaks, missed = [], []
    by_lesson = {}
    for m in manifest["flat"]:
        by_lesson.setdefault(m["lesson"], []).append(m)
    for lesson, subs in sorted(by_lesson.items()):
        rows = rows_of(BASE / "out" / lesson)
        if rows is None:
            print(f"lesson {lesson}: no CSV (not graded)")
            counts["missing_lessons"] += 1
            continue
        names = [r["student"] for r in rows]
        print(f"\n=== lesson {lesson}: {len(rows)} rows")
        for m in subs:
            m = dict(m, student=ALIAS.get(m["student"], m["student"]))
            mine = [r for r in rows if r["student"] == m["student"] or r["student"].startswith(m["student"] + "#")]
            if m.get("row_only") and m["student"] == "\\xff\\xfe-bytes":
                mine = [r for r in rows if "-bytes" in r["student"]]
            if m["student"] in ("Case", "case"):
                mine = [r for r in rows if r["student"] == m["student"]]
            if len(mine) != 1:
                if m.get("optional_row") and not mine:
                    print(f"  note  {m['student']!r}: no row ({m['intent']})")
                    continue
                counts["row_problems"] += 1
                print(f"  ROWS  {m['student']!r}: {len(mine)} rows  -- {m['intent']}")
                breaks.append((lesson, m["student"], f"{len(mine)} rows", m["intent"]))
                continue
            r = mine[0]
            counts["graded"] += 1
            got = passed(r)
            extra = [e for e in got if e not in m["deserve"]]
            lost = [e for e in m["deserve"] if e not in got]
            is_control = m["student"].startswith("ctl")
            if is_control:
                counts["controls"] += 1
                ok = not extra and not lost
                counts["controls_ok"] += ok
            verdict = "BROKE" if extra else "held"
            counts["broke" if extra else "held"] += 1
            if extra:
                breaks.append((lesson, m["student"], f"passed {extra} undeserved (score {r['score']})", m["intent"]))
            if lost:
                missed.append((lesson, m["student"], lost))
            status = {k[3:]: v for k, v in r.items() if k.startswith("ex ")}
            why = " | ".join(f"{e}: {status.get(e)}" for e in m.get("attacked", []))
            print(
                f"  {verdict:5} {m['student'][:40]!r:44} passed={got} deserve={m['deserve']}"
                + (f" lost={lost}" if lost else "")
                + (f"  [{why}]" if why else "")
            )
        known = {ALIAS.get(m["student"], m["student"]) for m in subs}
        stray = [
            n for n in names if n not in known and not any(n.startswith(k + "#") for k in known) and "-bytes" not in n
        ]
        if stray:
            print(f"  rows not in the manifest: {stray}")
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            counts["row_problems"] += 1
            print(f"  DUPLICATE rows: {dup}")
            breaks.append((lesson, str(dup), "duplicate rows", ""))
        fb = BASE / "out" / lesson / "fb"
        mds = sorted(p.name for p in fb.glob("*.md")) if fb.exists() else []
        if len(mds) != len(rows):
            print(f"  feedback files: {len(mds)} .md for {len(rows)} rows")
    # nbgrader layout
    rows = rows_of(BASE / "out" / "nbgrader")
    if rows is not None:
        print(f"\n=== nbgrader layout (lesson 06): {len(rows)} rows")
        names = [r["student"] for r in rows]
        for m in manifest["nbgrader"]:
            mine = [r for r in rows if r["student"] == m["student"] or r["student"].startswith(m["student"] + "#")]
            want = m.get("count", 1)
            flag = "ok  " if len(mine) == want else "ROWS"
            if len(mine) != want:
                counts["row_problems"] += 1
                breaks.append(("nbgrader", m["student"], f"{len(mine)} rows (want {want})", m["intent"]))
            for r in mine:
                print(
                    f"  {flag} {r['student']!r}: score {r['score']} passed={passed(r)} problems={r['problems'][:140]!r}"
                )
            if not mine:
                print(f"  {flag} {m['student']!r}: NO ROW -- {m['intent']}")
        print(f"  all rows: {names}")
    # leaks: the secret anywhere in the outputs
    leaks = []
    if secret:
        for p in (BASE / "out").rglob("*"):
            if p.is_file():
                try:
                    if secret.encode() in p.read_bytes():
                        leaks.append(str(p))
                except OSError:
                    pass
    markers = sorted(p.name for p in (BASE / "markers").glob("*")) if (BASE / "markers").exists() else []
    print("\n=== counts")
    print(json.dumps(counts))
    print(f"leaks of the secret: {len(leaks)} {leaks[:5]}")
    print(f"planted imports (markers): {len(markers)} {markers[:10]}")
    print("\n=== breaks")
    for b in breaks:
        print("  ", b)
    print("\n=== deserved but not passed (not breaks)")
    for m in missed:
        print("  ", m)


if __name__ == "__main__":
    main()
