"""Read the grader's CSVs against manifest.json: held/BROKE per submission, rows, feedback files, leaks, planted
imports. Run: .venv/bin/python tests/outsider/issue33h/compare.py"""

from __future__ import annotations

import csv
import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, "/work/wt/hostile33h")
from course_lib.instructor.submission import shown  # noqa: E402  (the grader's own escaping of names)

OUT = Path("/tmp/hostile33h")
RES = OUT / "results"


def rows_of(name):
    path = RES / f"{name}.csv"
    if not path.exists():
        return None
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def passed(row):
    return sorted(k[3:] for k, v in row.items() if k.startswith("ex ") and v == "passed")


def main():
    manifest = json.loads((OUT / "manifest.json").read_text())
    if (OUT / "manifest2.json").exists():
        manifest += json.loads((OUT / "manifest2.json").read_text())
    secret = (OUT / "secret.txt").read_text().strip() if (OUT / "secret.txt").exists() else "HOSTILE33H_SECRET"
    tables = {k: rows_of(k) for k in ("02", "03", "04", "05", "06", "07", "nbg", "r2_03", "r2_04", "r2_07")}
    used = {k: set() for k in tables}
    counts = dict(graded=0, held=0, broke=0, ambiguous=0, controls_right=0, controls=0, missing=0)
    lines = []
    for m in manifest:
        key = {"nbgrader": "nbg", "round2": "r2_" + m["lesson"]}.get(m["layout"], m["lesson"])
        table = tables[key]
        if table is None:
            lines.append(f"NOT GRADED  {m['student']!r}: no CSV for {key}")
            counts["missing"] += 1
            continue
        want = shown(m["path"])
        hits = [i for i, r in enumerate(table) if r["file"] == want or r["file"].startswith(want + "/")]
        if m["student"] == "carol/":
            hits = [i for i in hits]
        used[key].update(hits)
        verdict, why = "held", ""
        if len(hits) != m["expect_rows"]:
            verdict, why = "BROKE", f"{len(hits)} rows (expected {m['expect_rows']})"
        got = passed(table[hits[0]]) if hits else []
        extra = sorted(set(got) - set(m["deserves"]) - set(m["ignore"]))
        if extra and verdict != "BROKE":
            verdict, why = ("AMBIG" if m.get("ambiguous") else "BROKE"), f"passed {extra} undeserved"
        lost = sorted(set(m["deserves"]) - set(got))
        if m["student"].startswith("ctl_"):
            counts["controls"] += 1
            ok = not extra and not lost and len(hits) == 1
            counts["controls_right"] += ok
            verdict = "control ok" if ok else "CONTROL WRONG"
        elif verdict == "BROKE":
            counts["broke"] += 1
        elif verdict == "AMBIG":
            counts["ambiguous"] += 1
        else:
            counts["held"] += 1
        counts["graded"] += 1
        note = f" (lost {lost})" if lost else ""
        status = ""
        if hits:
            r = table[hits[0]]
            status = " ".join(f"{k[3:]}={v}" for k, v in r.items() if k.startswith("ex "))
        lines.append(f"{verdict:13} {m['lesson']} {m['layout']:8} {shown(m['student'])[:40]:40} {why}{note}")
        lines.append(f"{'':14}intent: {m['intent']}")
        lines.append(f"{'':14}got: {got} deserved: {m['deserves']} | {status[:150]}")
    for key, table in tables.items():
        for i, r in enumerate(table or []):
            if i not in used[key]:
                lines.append(
                    f"UNMATCHED ROW in {key}: {r['student']!r} {r['file']!r} problems={r.get('problems', '')[:120]!r}"
                )
    # feedback: one file per row; no injected line
    for key, table in tables.items():
        fb = RES / f"fb{key}"
        if table is None or not fb.exists():
            continue
        mds = sorted(p for p in fb.iterdir() if p.suffix == ".md")
        names = [p.name for p in mds]
        if len(mds) != len(table):
            lines.append(f"FEEDBACK COUNT {key}: {len(mds)} .md files for {len(table)} rows")
        lower = [n.lower() for n in names]
        if len(set(lower)) != len(lower):
            lines.append(f"FEEDBACK CASE COLLISION {key}")
        for n in names:
            stem = n[:-3].split(".")[0].lower()
            if stem in {"con", "prn", "aux", "nul", "com0", "lpt0"} | {f"com{i}" for i in range(10)} | {
                f"lpt{i}" for i in range(10)
            }:
                lines.append(f"FEEDBACK NAME RESERVED ON WINDOWS {key}: {n}")
            if len(n.encode()) > 120 or not re.fullmatch(r"[A-Za-z0-9._-]+", n):
                lines.append(f"FEEDBACK NAME ODD {key}: {n!r}")
        for p in mds:
            text = p.read_text(errors="replace")
            scores = [ln for ln in text.splitlines() if ln.startswith("Score")]
            if len(scores) != 1:
                lines.append(f"FEEDBACK SCORE LINES {key}/{p.name}: {scores}")
            if re.search(r"(?<!\\)\[click\]\(|(?<!\\)!\[img\]", text):
                lines.append(f"FEEDBACK INJECTED LINK {key}/{p.name}")
    # leaks: the secret anywhere in what the grader wrote
    leaks = []
    for root, _, files in os.walk(RES):
        for f in files:
            p = Path(root) / f
            data = p.read_bytes()
            if secret.encode() in data or b"HOSTILE33H_SECRET" in data or b"s3cr3t-" in data:
                leaks.append(str(p))
    lines.append(f"LEAKS of the secret: {leaks or 'none'}")
    markers = sorted(os.listdir(OUT / "markers")) if (OUT / "markers").exists() else []
    lines.append(f"PLANTED IMPORTS (markers): {markers or 'none'}")
    lines.append("COUNTS: " + ", ".join(f"{k}={v}" for k, v in counts.items()))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
