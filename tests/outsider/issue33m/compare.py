"""Read the class's CSVs against its manifest: held / BROKE per submission, the controls, the rows, leaks, markers.

python tests/outsider/issue33m/compare.py [/tmp/hostile33m]
"""

from __future__ import annotations

import csv
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from course_lib.instructor.submission import shown  # noqa: E402  the grader's own escaping of paths

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/hostile33m")


def unquote(cell: str) -> str:
    return cell[1:] if cell[:1] == "'" else cell


def main() -> int:
    manifest = json.loads((OUT / "class" / "manifest.json").read_text())
    secret = (OUT / "secret.txt").read_text().strip() if (OUT / "secret.txt").exists() else None
    rows: dict[str, list[dict]] = {}
    graded_folders = set()
    for csv_path in sorted((OUT / "results").glob("*/grades.csv")):
        graded_folders.add(csv_path.parent.name)
        with open(csv_path, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                row["_folder"] = csv_path.parent.name
                rows.setdefault(unquote(row["file"]), []).append(row)
    counts = Counter()
    breaks, notes = [], []
    for m in manifest:
        if m["folder"] not in graded_folders or not Path(m["file"]).exists() and not m["file"].endswith(".IPYNB"):
            print(f"-- not graded  {m['folder']}/{m['student']!r}")
            counts["not graded"] += 1
            continue
        found = rows.get(shown(m["file"]), [])
        if not found:
            # a student folder's row names the folder when it was not graded
            folder = shown(str(Path(m["file"]).parent.parent))
            found = rows.get(folder, [])
        if len(found) != 1:
            verdict = "BROKE" if m["expect_row"] else "held"
            what = f"{len(found)} rows"
            print(f"{verdict:5} {m['folder']}/{m['student']!r}: {what} (expected exactly one) - {m['intent']}")
            counts[verdict] += 1
            counts["graded"] += 1
            if verdict == "BROKE":
                breaks.append((m, what))
            continue
        row = found[0]
        passed = {k[3:] for k, v in row.items() if k.startswith("ex ") and v == "passed"}
        deserved = set(m["deserves"])
        undeserved = sorted(passed - deserved)
        missed = sorted(deserved - passed)
        counts["graded"] += 1
        if m["student"].startswith("ctl_"):
            ok = passed == deserved
            counts["controls right" if ok else "controls WRONG"] += 1
            print(
                f"{'ctl ok' if ok else 'CTL!!'} {m['folder']}/{m['student']}: passed {sorted(passed)} deserved {sorted(deserved)}"
            )
            continue
        verdict = "BROKE" if undeserved else "held"
        counts[verdict] += 1
        line = f"{verdict:5} {m['folder']}/{m['student']!r}: passed {sorted(passed)}"
        if undeserved:
            line += f" UNDESERVED {undeserved}"
            breaks.append((m, f"passed {undeserved} undeserved; row problems: {row.get('problems', '')[:200]}"))
        if missed:
            line += f" (missed deserved {missed})"
            notes.append((m, missed, row))
        print(line + f" - {m['intent'][:110]}")
    # duplicated rows: one file graded twice, or a student name twice in one CSV
    for folder in sorted(graded_folders):
        with open(OUT / "results" / folder / "grades.csv", newline="", encoding="utf-8") as f:
            names = [r["student"] for r in csv.DictReader(f)]
        dup = [n for n, c in Counter(names).items() if c > 1]
        fb = sorted(p.name for p in (OUT / "results" / folder / "fb").glob("*.md"))
        print(
            f"rows {folder}: {len(names)} rows, {len(fb)} feedback .md files"
            + (f", DUPLICATE names {dup}" if dup else "")
        )
        if len(fb) != len(names):
            print(f"  BROKE: {len(names)} rows but {len(fb)} feedback files")
            counts["BROKE"] += 1
    if secret:
        leaked = [
            str(p) for p in (OUT / "results").rglob("*") if p.is_file() and secret in p.read_text(errors="replace")
        ]
        print("secret leaked into:", leaked or "nothing")
        counts["leaks"] = len(leaked)
    markers = sorted(p.name for p in (OUT / "markers").glob("*"))
    print("planted imports (markers):", markers or "none")
    counts["planted imports"] = len(markers)
    print("\nmissed deserved exercises (over-refusal or a wrong answer of ours):")
    for m, missed, row in notes:
        print(f"  {m['folder']}/{m['student']}: {missed}: {row.get('problems', '')[:160]}")
    print("\ncounts:", dict(counts))
    print("breaks:")
    for m, what in breaks:
        print(f"  {m['folder']}/{m['student']!r}: {what} - {m['intent']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
