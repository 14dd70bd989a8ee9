"""Reads the grader's CSVs against manifest.json: held/BROKE per submission, controls, rows, feedback files, leaks
and planted imports. Usage: python compare.py [CLASS] [OUTS]"""

from __future__ import annotations

import csv
import json
import os
import sys
from pathlib import Path

CLASS = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/tmp/hostile33n/class")
OUTS = Path(sys.argv[2]) if len(sys.argv) > 2 else Path("/tmp/hostile33n/out")
TAG = {
    "02": "02",
    "04": "04",
    "05": "05",
    "07": "07",
    "06": "06",
    "06_rows": "06_rows",
    "06_wave2": "06_wave2",
    "06_nbgrader/submitted": "06_nbgrader",
    "06_flatcourse": "06_flatcourse",
}


def shown(text: str) -> str:
    try:
        from course_lib.instructor.submission import shown as real

        return real(text)
    except Exception:  # noqa: BLE001
        return text


def rows_of(tag):
    path = OUTS / tag / "grades.csv"
    if not path.exists():
        return None, []
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], [dict(zip(rows[0], r)) for r in rows[1:]]


def main():
    manifest = json.loads((CLASS / "manifest.json").read_text())
    secret = (
        Path("/tmp/hostile33n/secret.txt").read_text().strip()
        if Path("/tmp/hostile33n/secret.txt").exists()
        else "HOSTILE33N_SECRET"
    )
    counts = {"graded": 0, "held": 0, "BROKE": 0, "controls right": 0, "controls": 0, "not graded yet": 0}
    breaks = []
    by_tag: dict[str, list] = {}
    for m in manifest:
        by_tag.setdefault(TAG[m["folder"]], []).append(m)
    for tag, entries in by_tag.items():
        header, rows = rows_of(tag)
        print(f"\n=== {tag}: {len(rows)} rows" + ("" if header else " (NOT GRADED)"))
        if header is None:
            err = OUTS / tag / "stderr.txt"
            refused = err.exists() and "course-lib grade" in err.read_text(errors="replace")
            if not refused:
                counts["not graded yet"] += len(entries)
                continue
            print(f"the run was refused, no student graded: {err.read_text(errors='replace').strip()[:300]}")
            for m in entries:
                counts["graded"] += 1
                counts["BROKE"] += 1
                breaks.append((tag, m["student"], m["intent"], ["0 rows (the whole run refused)"]))
                print(f"BROKE {m['student']!r:45.45} 0 rows")
            continue
        exercises = [h[3:] for h in header if h.startswith("ex ")]
        used = set()
        for m in entries:
            name = m["file"]
            if "\\x" in name:  # a name that is not UTF-8, written in the manifest with \xNN escapes
                name = os.fsdecode(name.encode().decode("unicode_escape").encode("latin-1"))
            want = shown(str(CLASS / m["folder"] / name))
            mine = [i for i, r in enumerate(rows) if r["file"] == want or r["file"].lstrip("'") == want]
            if not mine:  # nbgrader folders: the row's file is the student's folder when not graded
                base = shown(str(CLASS / m["folder"] / m["file"].split("/")[0]))
                mine = [i for i, r in enumerate(rows) if r["file"].lstrip("'") in (base,) and i not in used]
            used.update(mine)
            counts["graded"] += 1
            verdict, notes = "held", []
            if len(mine) != 1:
                verdict = "BROKE"
                notes.append(f"{len(mine)} rows")
            passed = set()
            for i in mine:
                passed |= {e for e in exercises if rows[i].get(f"ex {e}") == "passed"}
            undeserved = sorted(passed - set(m["deserves"]))
            missed = sorted(set(m["deserves"]) - passed)
            if undeserved:
                verdict = "BROKE"
                notes.append(f"passed {undeserved} undeserved")
            if missed:
                notes.append(f"missed deserved {missed}")
            if m["kind"] == "control":
                counts["controls"] += 1
                if not missed and not undeserved and len(mine) == 1:
                    counts["controls right"] += 1
            counts[verdict] += 1
            if verdict == "BROKE":
                breaks.append((tag, m["student"], m["intent"], notes))
            student = rows[mine[0]]["student"] if mine else "-"
            print(f"{verdict:5} {m['student']!r:45.45} row={student!r:30.30} {'; '.join(notes)}")
            if len(mine) == 1:
                why = rows[mine[0]].get("problems", "")
                hints = {e: rows[mine[0]].get(f"ex {e}") for e in exercises}
                print(f"      statuses {hints}  problems: {why[:300]!r}")
        extra = [r["student"] for i, r in enumerate(rows) if i not in used]
        if extra:
            print(f"rows matching no submission: {extra}")
        names = [r["student"] for r in rows]
        if len(set(names)) != len(names):
            print("BROKE: two rows share a student name")
            breaks.append((tag, "duplicate names", "", [str(names)]))
        fb = OUTS / tag / "fb"
        md = sorted(fb.glob("*.md")) if fb.exists() else []
        print(f"feedback .md files: {len(md)} for {len(rows)} rows")
        if len(md) != len(rows):
            breaks.append((tag, "feedback files", f"{len(md)} .md for {len(rows)} rows", []))
    leaks = []
    for path in OUTS.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            if secret.encode() in data or b"s3cr3t" in data:
                leaks.append(str(path))
    marks = sorted(os.listdir("/tmp/hostile33n/markers")) if os.path.isdir("/tmp/hostile33n/markers") else []
    print("\n=== summary")
    for k, v in counts.items():
        print(f"{k}: {v}")
    print(f"leaks of the secret: {leaks or 'none'}")
    print(f"planted imports (marker files): {marks or 'none'}")
    print("breaks:")
    for b in breaks:
        print("  ", b)


if __name__ == "__main__":
    main()
