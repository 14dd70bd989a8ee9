"""Print the table of hostile class 33x: per submission, the exercises deserved and got, HELD or BROKE.

Also: honest or control entries that got less than they deserve (WRONGLY FAILED), rows and feedback files per
student, the secret's leaks into CSV/feedback, the planted modules' markers, and whether a submission changed.
"""

import csv
import hashlib
import json
import sys
from pathlib import Path

BASE = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/hostile33x")
CLASS, OUT = BASE / "class", BASE / "out"


def main():
    manifest = json.loads((CLASS / "manifest.json").read_text())
    secret = (BASE / "secret.txt").read_text().strip() if (BASE / "secret.txt").exists() else None
    hashes = json.loads((BASE / "hashes.json").read_text()) if (BASE / "hashes.json").exists() else {}
    counts = {"graded": 0, "HELD": 0, "BROKE": 0, "WRONGLY FAILED": 0, "OK": 0, "UNGRADED": 0}
    print(f"{'submission':24} {'kind':8} {'deserved':32} {'got':32} verdict")
    for name, m in manifest.items():
        lesson = m["lesson"]
        grades = OUT / lesson / "grades.csv"
        rows = []
        if grades.exists():
            with open(grades, newline="", encoding="utf-8") as f:
                rows = [r for r in csv.DictReader(f) if r["student"] == name]
        feedback = list((OUT / lesson / "feedback").glob(f"{name}*.md")) if (OUT / lesson / "feedback").exists() else []
        if not rows:
            counts["UNGRADED"] += 1
            print(f"{name:24} {m['kind']:8} {'':32} {'(no row)':32} UNGRADED")
            continue
        counts["graded"] += 1
        row = rows[0]
        got = [e for e in m["exercises"] if row.get(f"ex {e}") == "passed"]
        deserved = set(m["deserved"])
        extra = sorted(set(got) - deserved)
        missing = sorted(deserved - set(got))
        notes = []
        if len(rows) != 1:
            notes.append(f"{len(rows)} rows")
        if len(feedback) != 1:
            notes.append(f"{len(feedback)} feedback files")
        if extra:
            verdict = "BROKE"
        elif missing:
            verdict = "WRONGLY FAILED" if m["kind"] in ("honest", "control") else "HELD (lost deserved)"
        else:
            verdict = "HELD" if m["kind"] == "attack" else "OK"
        counts[verdict.split(" (")[0]] = counts.get(verdict.split(" (")[0], 0) + 1
        print(
            f"{name:24} {m['kind']:8} {','.join(sorted(deserved)):32} {','.join(got):32} {verdict}"
            + (f" extra={extra}" if extra else "")
            + (f" missing={missing}" if missing else "")
            + (f" [{'; '.join(notes)}]" if notes else "")
        )
        for e in extra + missing:
            print(f"    ex {e}: {row.get(f'ex {e}')}")
        if missing and row.get("problems"):
            print(f"    problems: {row['problems'][:300]}")
    print()
    print(counts)
    leaks = []
    if secret:
        for p in OUT.rglob("*"):
            if p.is_file() and secret in p.read_text(errors="replace"):
                leaks.append(str(p))
    print("secret leaks:", leaks or "none")
    markers = sorted(p.name for p in (BASE / "markers").glob("*")) if (BASE / "markers").exists() else []
    print("planted imports:", markers or "none")
    changed = [
        str(p)
        for p in CLASS.rglob("*.ipynb")
        if str(p) in hashes and hashlib.sha256(p.read_bytes()).hexdigest() != hashes[str(p)]
    ]
    print("submissions changed:", changed or "none" if hashes else "(no hashes recorded)")


if __name__ == "__main__":
    main()
