"""Compare class 33j's grades with its manifest: per entry held / BROKE / ambiguous, then the counts.

Run after run_class.sh: .venv/bin/python tests/outsider/issue33j/compare.py [/tmp/hostile33j]
"""

from __future__ import annotations

import csv
import json
import os
import sys
from collections import Counter
from pathlib import Path

H = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/hostile33j")
OUT = H / "out"
CSV_OF = {"02": "l02", "03": "l03", "04": "l04", "05": "l05", "06": "l06", "07": "l07"}


def rows_of(name: str) -> list[dict]:
    path = OUT / f"{name}.csv"
    if not path.exists():
        return []
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        return list(csv.DictReader(f))


def every_output_text() -> str:
    parts = []
    for dirpath, _, files in os.walk(OUT):
        for f in files:
            if f == "secret.txt":
                continue
            try:
                parts.append(Path(dirpath, f).read_bytes().decode("utf-8", "replace"))
            except OSError:
                continue
    return "\n".join(parts)


def feedback(csv_name: str, student: str) -> str:
    folder = OUT / f"fb_{csv_name}"
    for cand in (folder / f"{student}.md",):
        if cand.exists():
            return cand.read_text(errors="replace")
    return ""


def _escaped(name: str) -> str:
    """A file name as the grader's CSV shows it: control characters and undecodable bytes as \\xNN."""
    out = []
    for ch in name:
        if 0xDC80 <= ord(ch) <= 0xDCFF:
            out.append(f"\\x{ord(ch) - 0xDC00:02x}")
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)


def passed(row: dict, ex: str) -> bool:
    return row.get(f"ex {ex}", "") == "passed"


def main() -> None:
    manifest = json.loads((H / "manifest.json").read_text())
    secret = (OUT / "secret.txt").read_text().strip() if (OUT / "secret.txt").exists() else "\0none"
    text = every_output_text()
    leaks = text.count(secret)
    planted = sorted(os.listdir(H / "planted")) if (H / "planted").exists() else []
    verdicts: Counter = Counter()
    graded = entries = controls_right = controls = 0
    lines = []
    for e in manifest["entries"]:
        if e["kind"] == "rows":
            continue
        entries += 1
        name = CSV_OF[e["lesson"]]
        found = [r for r in rows_of(name) if r["student"] == e["student"]]
        if len(found) != 1:
            verdict, why = "BROKE", f"{len(found)} rows"
        else:
            row = found[0]
            graded += 1
            status = {k[3:]: v for k, v in row.items() if k.startswith("ex ")}
            got = ", ".join(f"{k}:{v}" for k, v in status.items())
            deserved_ok = all(passed(row, ex) == bool(v) for ex, v in e["deserves"].items())
            broke = [ex for ex, v in e["must_not"].items() if ex[0].isdigit() and passed(row, ex)]
            fb = feedback(name, e["student"])
            if e["kind"] == "control":
                controls += 1
                controls_right += deserved_ok
                verdict, why = ("held" if deserved_ok else "BROKE"), got
            elif broke:
                verdict = "ambiguous" if e["kind"] == "ambiguous-by-design" else "BROKE"
                why = f"passed {broke} ({got}; points {row['points']}/{row['max points']})"
            else:
                verdict, why = "held", got
            if "secret" in e["must_not"] and secret in fb + text:
                verdict, why = "BROKE", "the secret is in the outputs"
            if "planted" in e["must_not"] and planted:
                verdict, why = "BROKE", f"planted modules ran: {planted}"
            if "forged" in e["must_not"]:
                forged = [
                    ln
                    for ln in (fb + "\n" + (OUT / f"{name}.csv").read_text(errors="replace")).splitlines()
                    if ln.startswith(("## Score: 99", "FORGED", "| 6.1 | passed", "![img]"))
                ]
                if forged:
                    verdict, why = "BROKE", f"forged lines: {forged[:3]}"
            if "max_points" in e["must_not"] and (row["max points"] != "7" or row["points"] not in ("0", "1")):
                verdict, why = "BROKE", f"points {row['points']}/{row['max points']}"
            if e["kind"] == "resource" and not deserved_ok:
                verdict, why = "ambiguous", f"its own deserved marks lost: {got}; problems: {row['problems'][:200]}"
        verdicts[verdict] += 1
        lines.append(f"{verdict:9} {e['lesson']} {e['student']:28} {e['kind']:20} {why}")
    # the rows: every name exactly one row (or, where the manifest allows it, a warning)
    for e in manifest["entries"]:
        if e["kind"] != "rows":
            continue
        csv_name = "rows" if "flat" in e["student"] else "nbgrader"
        rows = rows_of(csv_name)
        log = (OUT / f"{csv_name}.stderr").read_text(errors="replace") + (OUT / f"{csv_name}.stdout").read_text(
            errors="replace"
        )
        per_student = Counter(r["student"] for r in rows)
        dup = [s for s, n in per_student.items() if n > 1]
        fb_files = (
            [f for f in os.listdir(OUT / f"fb_{csv_name}") if f.endswith(".md")]
            if (OUT / f"fb_{csv_name}").exists()
            else []
        )
        for item, why in e["expect"].items():
            entries += 1
            if csv_name == "rows":
                key = _escaped(item)
                hits = [r for r in rows if r["file"].endswith("/" + key) or r["file"] == key]
            else:
                hits = [
                    r for r in rows if f"/submitted/{item}/" in r["file"] or r["file"].endswith(f"/submitted/{item}")
                ]
            optional = "or a warning" in why or ", or a row" in why
            if len(hits) == 1:
                verdict, got = "held", f"row: {hits[0]['student']} | {hits[0]['score']} | {hits[0]['problems'][:90]}"
                graded += 1
            elif not hits and optional and item.split("/")[-1].split(".")[0] in log:
                verdict, got = "held", "a warning"
            elif not hits and optional:
                verdict, got = "ambiguous", "no row and no warning found"
            else:
                verdict, got = "BROKE", f"{len(hits)} rows"
            verdicts[verdict] += 1
            lines.append(f"{verdict:9} 06 {csv_name}:{item[:40]!r:44} rows  {got}")
        lines.append(
            f"INFO      {csv_name}: {len(rows)} rows, {len(fb_files)} feedback files, students with >1 row: {dup}"
        )
        if dup:
            verdicts["BROKE"] += 1
    print("\n".join(lines))
    times = (OUT / "times.tsv").read_text() if (OUT / "times.tsv").exists() else ""
    print("\ntimes:\n" + times)
    print("counts:")
    print(f"  entries {entries}, graded (one row found) {graded}")
    print(f"  held {verdicts['held']}, BROKE {verdicts['BROKE']}, ambiguous {verdicts['ambiguous']}")
    print(f"  controls right {controls_right}/{controls}")
    print(f"  secret leaks {leaks} (occurrences of the secret in any output)")
    print(f"  planted imports {len(planted)} {planted}")
    all_rows = [r for n in list(CSV_OF.values()) + ["rows", "nbgrader"] for r in rows_of(n)]
    print(
        f"  rows {len(all_rows)}; rows per student: max {max(Counter((r['file']) for r in all_rows).values(), default=0)}"
    )


if __name__ == "__main__":
    main()
