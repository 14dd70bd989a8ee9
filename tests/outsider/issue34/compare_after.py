"""Issue 34 after the fixes: each entry's draws and first hint line, before (raw_results.jsonl) and after
(raw_results_after.jsonl, written by ``run_set.py --out``); prints the entries that changed, then the counts."""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
REFUSAL_WORDS = ("write it yourself", "may not call", "borrowed", "may not use")


def load(name: str) -> dict:
    return {json.loads(line)["index"]: json.loads(line) for line in (HERE / name).read_text().splitlines()}


def summary(r: dict) -> tuple:
    caught = sum(d["status"] != "passed" for d in r["draws"])
    first = next((d["message"] for d in r["draws"] if d["status"] != "passed"), "")
    hint = first.strip().splitlines()[0] if first.strip() else ""
    return caught, any(w in first.lower() for w in REFUSAL_WORDS), hint


def main() -> None:
    before, after = load("raw_results.jsonl"), load("raw_results_after.jsonl")
    totals: dict = {}
    for i in sorted(after):
        a, b = after[i], before[i]
        (ca, ra, ha), (cb, rb, hb) = summary(a), summary(b)
        kind = a["kind"]
        t = totals.setdefault(kind, [0, 0, 0])
        t[0] += 1
        ok_a = {"correct": ca == 0, "mistake": ca == 5}.get(kind, ca == 5 and ra)
        ok_b = {"correct": cb == 0, "mistake": cb == 5}.get(kind, cb == 5 and rb)
        t[1], t[2] = t[1] + ok_a, t[2] + ok_b
        if (ca, ra) != (cb, rb) or (ha != hb and kind != "correct"):
            print(f"#{i} {a['exercise']} {kind}: before {cb}/5 {'refused' if rb else ''} {hb[:110]}")
            print(f"      after  {ca}/5 {'refused' if ra else ''} {ha[:200]}")
    print({k: f"{v[1]}/{v[0]} after, {v[2]}/{v[0]} before" for k, v in totals.items()})


if __name__ == "__main__":
    main()
