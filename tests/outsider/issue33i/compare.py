"""Compare the grader's CSVs and feedback with /tmp/hostile33i/manifest.json (written by make_class.py).

    python tests/outsider/issue33i/compare.py [--out /tmp/hostile33i/out]

For each entry: its row (found by the tag in the row's file column: exactly one row per entry), the exercises it
deserves (must pass) and those it must not get (must not pass). Verdicts: "control right" / "CONTROL WRONG" for the
honest controls; "held", "BROKE" (an exercise it must not get passed), "ambiguous" / "admitted" (a pass the
manifest calls arguable, or a hole the threat model admits), "UNDER-GRADED" (a deserved exercise refused). Then the
rows (every entry one row, no extra row, one feedback file per row whose header and score are that row's, file
names plain), the secret (HOSTILE33I_SECRET's value anywhere in the outputs), and the planted-import markers."""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
import unicodedata
from pathlib import Path

TMP = Path("/tmp/hostile33i")
RESERVED = {"con", "prn", "aux", "nul"} | {f"{p}{i}" for p in ("com", "lpt") for i in range(10)}


def md(text: str) -> str:  # how the feedback shows a student's name (markdown punctuation escaped)
    if any(unicodedata.category(c)[0] in "CZ" and c != " " for c in text):
        return text  # already shown escaped in the CSV; compared loosely below
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~&=])", r"\\\1", text)


def folder_key(folder: str) -> str:
    p = Path(folder)
    return "nbg" if p.name == "submitted" else p.name


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(TMP / "out"))
    args = ap.parse_args()
    out = Path(args.out)
    manifest = json.loads((TMP / "manifest.json").read_text())
    secret = (TMP / "secret.txt").read_text().strip() if (TMP / "secret.txt").exists() else None
    by_folder: dict = {}
    for m in manifest:
        by_folder.setdefault(folder_key(m["graded_folder"]), []).append(m)

    counts = dict(entries=len(manifest), graded=0, held=0, BROKE=0, ambiguous=0, admitted=0, under=0,
                  controls=0, controls_right=0, row_problems=0)  # fmt: skip
    lines, problems = [], []
    for key, entries in sorted(by_folder.items()):
        csv_path = out / f"class_{key}.csv"
        if not csv_path.exists():
            problems.append(f"{key}: no CSV ({csv_path}): not graded")
            for m in entries:
                lines.append(f"| {key} | {m['tag']} | {m['kind']} | not graded | |")
            continue
        with open(csv_path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
        head, body = rows[0], rows[1:]
        col = {name: i for i, name in enumerate(head)}
        used = set()
        for m in entries:
            # the tag is in the file's name (after a "/", or after the "=" or "." a crafted name starts with)
            hits = [i for i, r in enumerate(body) if re.search(r"/[=.]?" + re.escape(m["tag"]), r[col["file"]])]
            if m["tag"] in ("CON", "nul", "AUX"):  # reserved names: the tag is the whole stem / folder
                hits = [i for i in hits if re.search("/" + m["tag"] + r"(\.ipynb|/|$)", body[i][col["file"]])]
            used.update(hits)
            if len(hits) != 1:
                counts["row_problems"] += 1
                problems.append(f"{key} {m['tag']}: {len(hits)} rows (expected exactly 1)")
                lines.append(f"| {key} | {m['tag']} | {m['kind']} | ROWS: {len(hits)} | {m['note'][:60]} |")
                continue
            r = body[hits[0]]
            status = {c[3:]: r[i] for c, i in col.items() if c.startswith("ex ")}
            passed = sorted(e for e, s in status.items() if s == "passed")
            graded = any(s not in ("not run",) for s in status.values())
            counts["graded"] += graded
            got_bad = [e for e in m["must_not"] if status.get(e) == "passed"]
            missed = [e for e in m["deserve"] if status.get(e) != "passed"]
            if m["kind"] == "control":
                counts["controls"] += 1
                verdict = "control right" if not got_bad and not missed else "CONTROL WRONG"
                counts["controls_right"] += verdict == "control right"
            elif got_bad:
                if m["expect"].startswith("ambiguous"):
                    verdict, k = "ambiguous", "ambiguous"
                elif m["expect"].startswith("admitted"):
                    verdict, k = "admitted", "admitted"
                else:
                    verdict, k = "BROKE", "BROKE"
                counts[k] += 1
            elif missed:
                verdict = "UNDER-GRADED"
                counts["under"] += 1
            else:
                verdict = "held"
                counts["held"] += 1
            detail = f"passed {','.join(passed) or '-'}"
            if got_bad:
                detail += f"; must not: {','.join(got_bad)}"
            if missed:
                detail += f"; missed: {','.join(missed)}"
            lines.append(f"| {key} | {m['tag']} | {m['kind']} | {verdict} | {detail} ({m['note'][:70]}) |")
        extra = [i for i in range(len(body)) if i not in used]
        for i in extra:
            counts["row_problems"] += 1
            problems.append(f"{key}: a row no entry claims: {body[i][:3]}")
        # feedback: one file per row, its header and score the row's, names plain and unique
        fb = out / f"fb_{key}"
        files = sorted(fb.glob("*.md")) if fb.exists() else []
        if len(files) != len(body):
            counts["row_problems"] += 1
            problems.append(f"{key}: {len(files)} feedback files for {len(body)} rows")
        lowered = {}
        for p in files:
            name = p.name
            if (not re.fullmatch(r"[A-Za-z0-9._-]+", name) or len(name.encode()) > 120
                    or name.split(".")[0].lower() in RESERVED):  # fmt: skip
                counts["row_problems"] += 1
                problems.append(f"{key}: feedback file name not plain: {name!r}")
            if name.lower() in lowered:
                counts["row_problems"] += 1
                problems.append(f"{key}: feedback names collide ignoring case: {name} / {lowered[name.lower()]}")
            lowered[name.lower()] = name
        texts = {p.name: p.read_text(encoding="utf-8", errors="replace") for p in files}
        for p, t in texts.items():
            if len(re.findall(r"(?m)^Score: ", t)) != 1:
                counts["row_problems"] += 1
                problems.append(f"{key}: {p} has {len(re.findall(r'(?m)^Score: ', t))} Score lines")
        for r in body:
            student, score = r[col["student"]], r[col["score"]].lstrip("'")
            if student[:2] in ("'=", "'+", "'-", "'@"):  # the CSV's spreadsheet guard, not part of the name
                student = student[1:]
            want = f"# Feedback for {md(student)}\n"
            mine = [n for n, t in texts.items() if t.startswith(want)]
            if len(mine) != 1:
                counts["row_problems"] += 1
                problems.append(f"{key}: {len(mine)} feedback files for student {student!r}")
                continue
            if f"\nScore: {score} of " not in texts[mine[0]]:
                counts["row_problems"] += 1
                problems.append(f"{key}: {mine[0]} does not carry {student!r}'s score {score}")

    leaks = []
    if secret:
        for p in sorted(out.rglob("*")):
            if p.is_file():
                data = p.read_bytes()
                if secret.encode() in data:
                    leaks.append(str(p))
    markers = sorted(p.name for p in (TMP / "markers").iterdir()) if (TMP / "markers").exists() else []
    print("| folder | tag | kind | verdict | detail |\n| --- | --- | --- | --- | --- |")
    print("\n".join(lines))
    print()
    print("counts:", json.dumps(counts))
    print("secret leaks:", leaks or "none", f"(secret read: {bool(secret)})")
    print("planted imports (markers):", markers or "none")
    print("row problems:")
    for p in problems:
        print(" -", p)
    return 1 if counts["BROKE"] or leaks or markers or counts["row_problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
