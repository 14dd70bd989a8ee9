"""Every row of the hostile class's grading against what the submission deserved (see make_class.py).

python tests/outsider/issue33g/compare.py [/tmp/hostile33g/class]
"""

import csv
import json
import sys
import unicodedata
from pathlib import Path

SECRET = "HOSTILE33G_SECRET_d41d8cd98f"


def norm(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text).lower() if c.isalnum())


def feedback_lines(out: Path, lesson: str, student: str) -> list[str]:
    """The lines of a student's feedback file that say why an exercise failed (the file found by its name)."""
    folder = out / f"feedback{lesson}"
    wanted = [p for p in folder.glob("*.md") if p.stem == student] or [
        p for p in folder.glob("*.md") if norm(p.stem).startswith(norm(student)[:20])
    ]
    if len(wanted) != 1:
        return [f"({len(wanted)} feedback files match)"]
    text = wanted[0].read_text(errors="replace").splitlines()
    keep = ("fail", "refus", "may not", "hint", "not graded", "limit", "error", "raised", "kernel", "time")
    return [line for line in text if any(k in line.lower() for k in keep)][:6]


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/hostile33g/class")
    out = root / "out"
    manifest = json.loads((root / "manifest.json").read_text())
    rows = {}
    for path in sorted(out.glob("grades*.csv")):
        lesson = path.stem[len("grades") :]
        with path.open(newline="") as f:
            for row in csv.DictReader(f):
                rows.setdefault(lesson, []).append(row)
    held = broke = unclear = 0
    seen_rows = set()
    for key, want in manifest.items():
        lesson, name = want["lesson"], Path(key).name
        candidates = [r for r in rows.get(lesson, []) if Path(r["file"]).name == name]
        if not candidates:
            candidates = [r for r in rows.get(lesson, []) if norm(r["student"]) == norm(Path(name).stem)]
        if len(candidates) != 1:
            print(f"?? {key}: {len(candidates)} rows")
            unclear += 1
            continue
        row = candidates[0]
        seen_rows.add(id(row))
        passed = sorted(c[len("points ") :] for c in row if c.startswith("points ") and c != "points"
                        and row[c] not in ("", "0", "0.0"))  # fmt: skip
        deserved = want["deserved"]
        extra = sorted(set(passed) - set(deserved))
        missing = sorted(set(deserved) - set(passed))
        verdict = "BROKE" if extra else ("held" if not missing else "held?")
        if extra:
            broke += 1
        elif not missing:
            held += 1
        else:
            unclear += 1
        print(f"{verdict:6} {key}: deserved {deserved} got {passed} (score {row['score']}/{row['total']})")
        print(f"       intent: {want['intent']}")
        print(f"       problems: {row['problems'][:400]}")
        for line in feedback_lines(out, lesson, row["student"]):
            print(f"       feedback: {line[:300]}")
    for lesson, rs in rows.items():
        for r in rs:
            if id(r) not in seen_rows:
                print(f"extra row in lesson {lesson}: {r['student']!r} {r['file']!r} {r['problems'][:200]}")
    leaks = [str(p) for p in out.rglob("*") if p.is_file() and SECRET in p.read_text(errors="replace")]
    feedback = [p for p in out.rglob("*.md")]
    score_lines = {str(p): sum(1 for line in p.read_text(errors="replace").splitlines() if line.startswith("Score"))
                   for p in feedback}  # fmt: skip
    multi = {p: n for p, n in score_lines.items() if n > 1}
    print(f"\nheld {held}, BROKE {broke}, unclear {unclear} of {len(manifest)}")
    print(f"rows {sum(len(r) for r in rows.values())}, feedback files {len(feedback)}")
    print(f"secret leaked into: {leaks or 'nothing'}")
    print(f"feedback files with more than one line starting 'Score': {multi or 'none'}")
    print(f"planted module imported: {(root / 'PWNED').exists()}")


if __name__ == "__main__":
    main()
