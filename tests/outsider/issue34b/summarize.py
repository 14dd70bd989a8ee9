"""Summarise results.jsonl (the notebook runs), judgements.json (one line of judgement per entry, written by
hand after reading its messages) and grades.jsonl (the grader's sample) into results.md's tables.

Usage: python summarize.py > summary.md   (results.md quotes it)
"""

import json
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
import sys  # noqa: E402

sys.path.insert(0, str(HERE))
from entries import ENTRIES  # noqa: E402


def load():
    draws = defaultdict(list)
    for line in open(HERE / "results.jsonl"):
        r = json.loads(line)
        draws[r["id"]].append(r)
    judge = json.loads((HERE / "judgements.json").read_text()) if (HERE / "judgements.json").exists() else {}
    return draws, judge


def short(msg, n=160):
    msg = " ".join((msg or "").split())
    return msg if len(msg) <= n else msg[: n - 1] + "…"


def main():
    draws, judge = load()
    rows = {"right": [], "mistake": [], "borrowed": []}
    for e in ENTRIES:
        ds = draws.get(e["id"], [])
        passed = [d.get("seed") for d in ds if d.get("status") == "passed"]
        missing = 5 - len([d for d in ds if d.get("status") is not None])
        msgs = [d.get("message") or d.get("check_output") or "" for d in ds if d.get("status") != "passed"]
        rows[e["kind"]].append((e, ds, passed, missing, msgs))
    out = []
    r_ok = sum(1 for e, ds, p, m, _ in rows["right"] if len(p) == 5)
    out.append(f"- right answers passing on all 5 draws: {r_ok}/{len(rows['right'])}")
    caught = [x for x in rows["mistake"] if not x[2] and x[3] == 0]
    named = [x for x in caught if judge.get(x[0]["id"], {}).get("named") == "yes"]
    partly = [x for x in caught if judge.get(x[0]["id"], {}).get("named") == "partly"]
    out.append(f"- mistakes caught on every draw: {len(caught)}/{len(rows['mistake'])}")
    out.append(
        f"- of those, hint names the mistake or the failing property: {len(named)}/{len(caught)} "
        f"(partly: {len(partly)}, no: {len(caught) - len(named) - len(partly)})"
    )
    refused = [x for x in rows["borrowed"] if not x[2] and x[3] == 0]
    ref_named = [x for x in refused if judge.get(x[0]["id"], {}).get("named") == "yes"]
    out.append(
        f"- borrowed answers refused (failed) on every draw in the notebook: {len(refused)}/{len(rows['borrowed'])}; "
        f"message names what was called: {len(ref_named)}/{len(refused)}"
    )
    out.append("")
    out.append("### Escapes: mistakes that passed on some draw (or never ran)")
    out.append("")
    out.append("| id | exercise | mistake | draws passed (seed) | message on the other draws | judgement |")
    out.append("| --- | --- | --- | --- | --- | --- |")
    for e, _ds, p, m, msgs in rows["mistake"]:
        if p or m:
            out.append(
                f"| {e['id']} | {e['exercise']} | {e['what']} | {len(p)}/5 {p}{' (' + str(m) + ' without result)' if m else ''} | "
                f"{short(msgs[0]) if msgs else '(none)'} | {judge.get(e['id'], {}).get('note', '')} |"
            )
    out.append("")
    out.append("### Caught, but the hint does not name the mistake or the property (named = no / partly)")
    out.append("")
    out.append("| id | exercise | mistake | message (first draw) | named | judgement |")
    out.append("| --- | --- | --- | --- | --- | --- |")
    for e, _ds, _p, _m, msgs in caught:
        j = judge.get(e["id"], {})
        if j.get("named") != "yes":
            out.append(
                f"| {e['id']} | {e['exercise']} | {e['what']} | {short(msgs[0])} | {j.get('named', '?')} | {j.get('note', '')} |"
            )
    out.append("")
    out.append("### Borrowed answers: every one, with the notebook's verdict")
    out.append("")
    out.append("| id | exercise | what is borrowed | draws passed | message (first failing draw) | names the call? |")
    out.append("| --- | --- | --- | --- | --- | --- |")
    for e, _ds, p, _m, msgs in rows["borrowed"]:
        j = judge.get(e["id"], {})
        out.append(
            f"| {e['id']} | {e['exercise']} | {e['what']} | {len(p)}/5 | {short(msgs[0]) if msgs else '(passed every draw)'} | "
            f"{j.get('named', '?')}{': ' + j['note'] if j.get('note') else ''} |"
        )
    out.append("")
    out.append("### Every mistake caught with a naming hint (for the record)")
    out.append("")
    out.append("| id | exercise | mistake | message (first draw) | judgement |")
    out.append("| --- | --- | --- | --- | --- |")
    for e, _ds, _p, _m, msgs in named:
        out.append(
            f"| {e['id']} | {e['exercise']} | {e['what']} | {short(msgs[0])} | {judge.get(e['id'], {}).get('note', '')} |"
        )
    out.append("")
    out.append("### The grader's sample (`course-lib grade`, sandboxed)")
    out.append("")
    out.append("| id | exercise | what | notebook verdict | grader: exercise | points | grader's feedback line |")
    out.append("| --- | --- | --- | --- | --- | --- | --- |")
    by_id = {e["id"]: e for e in ENTRIES}
    grades = [json.loads(line) for line in open(HERE / "grades.jsonl")] if (HERE / "grades.jsonl").exists() else []
    refused = graded = 0
    for g in grades:
        student = g["student"]
        if student == "all_right":
            pts = [k for k in g if k.startswith("points ")]
            out.append(
                f"| all_right ({g['lesson']}) | all | the right answers (baseline) | passed | {g['score']}/{g['total']} passed | "
                f"{g['points']}/{g['max points']} | {', '.join(k[7:] + ': ' + g[k] for k in pts)} |"
            )
            continue
        e = by_id[student.replace("_", ".")]
        ex = e["exercise"]
        fb = HERE / "graded" / f"grades{g['lesson']}_feedback" / f"{student}.md"
        line = ""
        if fb.exists():
            for ln in fb.read_text().splitlines():
                if ln.startswith(f"- Exercise {ex.replace('.', chr(92) + '.')} "):
                    line = ln[2:].replace(chr(92), "")
        ds = draws.get(e["id"], [])
        nb = "passed " + str(sum(d.get("status") == "passed" for d in ds)) + "/5"
        out.append(
            f"| {e['id']} | {ex} | {e['what']} | {nb} | {g.get('ex ' + ex)} | {g.get('points ' + ex)} | {short(line, 220)} |"
        )
        if e["kind"] == "borrowed":
            graded += 1
            refused += g.get("ex " + ex) != "passed"
    out.insert(4, f"- borrowed answers refused by the grader: {refused}/{graded} graded")
    print("\n".join(out))


if __name__ == "__main__":
    main()
