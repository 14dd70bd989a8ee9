"""Run every entry of checks_set.py as a student would, and write results.md.

For each entry a fresh Python process (an IPython shell, so cells land in linecache as in Jupyter) runs the
exercises notebook's setup cell, the right answers of the earlier exercises the answer needs, the answer
cell, then the exercise's check cell exactly as the notebook has it, DRAWS times (the checks draw their sizes
anew at each call). One process at a time, each under a timeout.

    .venv/bin/python tests/outsider/issue34/run_set.py            # all entries -> tests/outsider/issue34/raw_results.jsonl, results.md
    .venv/bin/python tests/outsider/issue34/run_set.py --only 7.3 # the entries of one exercise
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]  # the worktree (the set lives in tests/outsider/issue34)
DRAWS = 5
NOTEBOOKS = {
    "02": "02_backprop",
    "03": "03_parentheses",
    "04": "04_lstm_gru",
    "05": "05_attention",
    "06": "06_masked_attention",
    "07": "07_transformer",
}

CHILD = r"""
import json, sys
from IPython.core.interactiveshell import InteractiveShell
sys.path.insert(0, {here!r})
import checks_set as S

shell = InteractiveShell.instance()
for index in {indices!r}:
    entry = S.ENTRIES[index]
    nb = json.load(open({notebook!r}))
    by_id = {{c["metadata"].get("nbgrader", {{}}).get("grade_id", ""): "".join(c["source"]) for c in nb["cells"]}}
    setup = "".join(nb["cells"][1]["source"])
    shell.reset(new_session=False)  # a fresh namespace, as a restarted kernel (modules stay imported)
    out = {{"answer_error": None, "draws": []}}
    shell.run_cell(setup, silent=True)
    for need in S.NEEDS.get(entry["exercise"], []):
        shell.run_cell(S.CORRECT[need], silent=True)
    r = shell.run_cell(entry["source"], silent=True)
    if not r.success:
        err = r.error_in_exec or r.error_before_exec
        out["answer_error"] = f"{{type(err).__name__}}: {{err}}"
    check = by_id["check-" + entry["exercise"].replace(".", "-")]
    for _ in range({draws}):
        r = shell.run_cell(check, silent=True)
        res = shell.user_ns.get(check.split("=")[0].strip())
        if not r.success:
            err = r.error_in_exec or r.error_before_exec
            out["draws"].append({{"status": "check raised", "message": f"{{type(err).__name__}}: {{err}}"}})
        else:
            out["draws"].append({{"status": res.status, "message": res.message}})
    print("@@RESULT@@" + json.dumps({{"index": index, **out}}), flush=True)
"""


def run_group(indices: list[int], lesson: str) -> dict[int, dict]:
    """One process for `indices` (a fresh namespace for each); returns {index: result}."""
    notebook = ROOT / "exercises" / f"{NOTEBOOKS[lesson]}.ipynb"
    code = CHILD.format(here=str(HERE), indices=indices, notebook=str(notebook), draws=DRAWS)
    limit = 60 + 60 * len(indices)
    try:
        proc = subprocess.run(["timeout", str(limit), sys.executable, "-c", code], capture_output=True, text=True,
                              cwd=ROOT)  # fmt: skip
        stdout, err = proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as e:  # pragma: no cover
        stdout, err = e.stdout or "", "timeout"
    got = {}
    for line in stdout.splitlines():
        if line.startswith("@@RESULT@@"):
            rec = json.loads(line[len("@@RESULT@@") :])
            got[rec.pop("index")] = rec
    for i in indices:
        got.setdefault(i, {"answer_error": f"no result: {err[-300:]}", "draws": []})
    return got


def main() -> None:
    sys.path.insert(0, str(HERE))
    import checks_set as S

    ap = argparse.ArgumentParser()
    ap.add_argument("--only", help="one exercise id, e.g. 7.3")
    ap.add_argument("--out", default=str(HERE / "raw_results.jsonl"))
    ap.add_argument("--report", action="store_true", help="only write results.md from the recorded results")
    args = ap.parse_args()
    if args.report:
        report(Path(args.out), HERE / "grades.jsonl", HERE / "results.md")
        return
    done = {}
    out = Path(args.out)
    if out.exists():
        for line in out.read_text().splitlines():
            rec = json.loads(line)
            done[rec["index"]] = rec
    groups = []  # mistakes and right answers of one exercise share a process; each borrowed one has its own
    todo = [i for i, e in enumerate(S.ENTRIES) if i not in done and (not args.only or e["exercise"] == args.only)]
    for ex in dict.fromkeys(S.ENTRIES[i]["exercise"] for i in todo):
        same = [i for i in todo if S.ENTRIES[i]["exercise"] == ex]
        groups.append([i for i in same if S.ENTRIES[i]["kind"] != "borrowed"])
        groups += [[i] for i in same if S.ENTRIES[i]["kind"] == "borrowed"]
    with out.open("a") as f:
        for group in groups:
            if not group:
                continue
            results = run_group(group, S.ENTRIES[group[0]]["lesson"])
            for index in group:
                entry, res = S.ENTRIES[index], results[index]
                rec = {"index": index, **{k: entry[k] for k in ("lesson", "exercise", "kind", "what")}, **res}
                f.write(json.dumps(rec) + "\n")
                f.flush()
                statuses = [d["status"] for d in res["draws"]]
                first = (res["draws"] or [{}])[0].get("message", "")[:100]
                print(index, entry["exercise"], entry["kind"], statuses, first, res["answer_error"] or "", flush=True)


NOTES = [
    "- Draws: the 5 draws of an entry are 5 calls of the check cell in one process; the mistakes of one exercise",
    "  share a process (a fresh namespace each), so draws are not independent across entries of one exercise.",
    "- `names?` counts only entries caught on every draw; 'partly' is not counted as naming the mistake.",
    "- The dtype escapes (#35, #46, #53) are debatable for 3.3 and 4.1 (their texts say nothing of dtype); #35 is",
    "  not: 2.5's experiment passes float64 and the answer silently returns float32 gradients.",
    "- Grader: every borrowed answer but #154 got 0 points, for several reasons: a refusal naming the call (as in",
    "  the notebook), a refusal naming only the observer's own hook (`course_lib.checks.borrowed._refused`, for",
    "  .backward, torch.autograd.grad, course_lib.bptt.bptt_step, course_lib.seq2seq.attend,",
    "  course_lib.attention.masked_softmax), `NameError: name 'checks' is not defined` (the grading process has no",
    "  `checks`: refused by accident, with no word of borrowing), or the load rule (an assignment in a class",
    "  body, `forward = Library.forward`, or `m = importlib.import_module(...)` at top level: 'code that runs when",
    "  the cell is loaded'). When 7.3's cell is not loaded, 7.4-7.7 fail with NameError: nn (the stubs anyway).",
]


REFUSAL_WORDS = ("write it yourself", "may not call", "borrowed", "may not use")


def report(raw: Path, grades: Path, out: Path) -> None:
    """results.md from raw_results.jsonl, grades.jsonl and the hand judgements in judgements.py."""
    from judgements import NAMES

    recs = [json.loads(line) for line in raw.read_text().splitlines()]
    graded = {}
    if grades.exists():
        for line in grades.read_text().splitlines():
            g = json.loads(line)
            graded[g["index"]] = g
    rows, per_lesson, escapes = [], {}, []
    for r in sorted(recs, key=lambda r: r["index"]):
        draws = r["draws"]
        caught = sum(d["status"] != "passed" for d in draws)
        first = next((d["message"] for d in draws if d["status"] != "passed"), "")
        hint = first.strip().splitlines()[0] if first.strip() else ""
        if r["answer_error"]:
            hint = f"(answer cell raised {r['answer_error']}) " + hint
        refused = any(w in first.lower() for w in REFUSAL_WORDS)
        g = graded.get(r["index"])
        grade = ""
        if g:
            ex = r["exercise"]
            got = g["row"].get(f"points {ex}", "")
            grade = f"{g['row'].get(f'ex {ex}', '')[:90]} ({got or '?'} pts)".replace("|", "/")
            g["points"] = got not in ("", "0", "0.0")
            fb = HERE / "grade_feedback" / f"entry{r['index']:03d}.md"
            if fb.exists():  # the grader's line for this exercise (markdown escapes removed)
                line = next(
                    (
                        x
                        for x in fb.read_text().splitlines()
                        if x.startswith(f"- Exercise {ex.replace('.', chr(92) + '.')} ")
                    ),
                    "",
                )
                said = line.replace("\\", "").split("): ", 1)[-1]
                grade += f": {said[:160]}".replace("|", "/")
        name = NAMES.get(r["index"], "")
        rows.append((r, caught, refused, hint, name, grade))
        L = per_lesson.setdefault(r["lesson"], {"m": 0, "m5": 0, "named": 0, "b": 0, "bref": 0, "bg": 0, "bgref": 0})
        if r["kind"] == "mistake":
            L["m"] += 1
            L["m5"] += caught == len(draws) == DRAWS
            L["named"] += caught == DRAWS and name == "yes"
            if caught < DRAWS:
                escapes.append(
                    f"- #{r['index']} {r['exercise']} mistake, caught {caught}/{DRAWS}: {r['what']}"
                    + (f" (hint when caught: {hint[:140]})" if caught else "")
                )
        elif r["kind"] == "borrowed":
            L["b"] += 1
            L["bref"] += refused and caught == DRAWS
            if not (refused and caught == DRAWS):
                escapes.append(
                    f"- #{r['index']} {r['exercise']} borrowed, caught {caught}/{DRAWS}, refused: "
                    f"{'yes' if refused else 'no'}: {r['what']}" + (f" (says: {hint[:140]})" if hint else "")
                )
            if g:
                L["bg"] += 1
                L["bgref"] += not g["points"]
        elif r["kind"] == "correct" and caught:
            escapes.append(
                f"- #{r['index']} {r['exercise']} RIGHT answer failed {caught}/{DRAWS}: {r['what']} ({hint[:140]})"
            )
    lines = [
        "# Outsider's set for issue 34: results",
        "",
        "Each entry ran in a fresh IPython process (the mistakes and right answers of one exercise share one, each in",
        "a fresh namespace; each borrowed answer has its own): the exercises notebook's setup cell, the right answers",
        f"it needs, the answer cell, then the notebook's check cell {DRAWS} times (sizes drawn anew at each call).",
        "`caught` counts the draws that did not pass; `refused` says whether the check said the answer was borrowed;",
        "`names?` is my judgement whether the first line of the hint names the mistake (yes / partly / no); `grader`",
        "is the instructor grader's verdict for the graded entries (this exercise's points).",
        "",
        "## Counts per lesson",
        "",
        "| lesson | mistakes caught on every draw | hints that name the mistake / caught on every draw "
        "| borrowed refused in the notebook | borrowed refused by the grader |",
        "| --- | --- | --- | --- | --- |",
    ]
    tot = {k: 0 for k in ("m", "m5", "named", "b", "bref", "bg", "bgref")}
    for lesson, L in sorted(per_lesson.items()):
        for k in tot:
            tot[k] += L[k]
        lines.append(
            f"| {lesson} | {L['m5']} / {L['m']} | {L['named']} / {L['m5']} | {L['bref']} / {L['b']} | "
            f"{L['bgref']} / {L['bg']} |"
        )
    lines.append(
        f"| all | {tot['m5']} / {tot['m']} | {tot['named']} / {tot['m5']} | {tot['bref']} / {tot['b']} | "
        f"{tot['bgref']} / {tot['bg']} |"
    )
    lines += ["", "## Escapes", ""] + (escapes or ["(none)"])
    lines += ["", "## Notes", ""] + NOTES
    lines += [
        "",
        "## Every entry",
        "",
        "| # | ex | kind | entry | caught | refused | hint, first line | names? | grader |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r, caught, refused, hint, name, grade in rows:
        cell = hint.replace("|", "\\|")[:220]
        lines.append(
            f"| {r['index']} | {r['exercise']} | {r['kind']} | {r['what'].replace('|', '/')} | {caught}/{DRAWS} | "
            f"{'yes' if refused else ('' if r['kind'] != 'borrowed' else 'no')} | {cell} | {name} | {grade} |"
        )
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
