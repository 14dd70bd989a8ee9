"""How many realistic mistakes each lesson's checks catch, on every draw, with a hint that names the mistake.

Runs every mutant of tests/mutants against its check on 50 fresh draws (and every correct
alternative solution on the same number) and prints a markdown table (README's "catch rate"):

- rejected: the check said "failed" on the first draw;
- on every draw: it said "failed" on all of the draws;
- named: it said "failed" with the hint that names that mistake on all of the draws;
- borrowed: answers that call what the exercise forbids (BORROWED), refused with the "write it yourself"
  hint naming that call on every draw, with the source visible and hidden.

    python scripts/catch_rates.py [--draws 50] [--lessons 01 02]
"""

import argparse
import importlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.mutants.mutate import BORROWED_HINT, mutant  # noqa: E402


def rates(module, draws: int) -> dict:
    rejected = every = named = alternatives_ok = 0
    make = getattr(module, "mutant", mutant)  # a lesson whose exercises use each other loads them together
    for name, old, new, hint in module.MUTANTS:
        wrong = make(module.LESSON, name, old, new)
        results = [module.EXERCISES[name](wrong, quiet=True) for _ in range(draws)]
        failed = [r.status == "failed" for r in results]
        rejected += failed[0]
        every += all(failed)
        named += all(f and hint in r.message for f, r in zip(failed, results))
    alternatives = getattr(module, "ALTERNATIVES", [])
    for name, old, new in alternatives:
        right = make(module.LESSON, name, old, new)
        alternatives_ok += all(module.EXERCISES[name](right, quiet=True).status == "passed" for _ in range(draws))
    borrowed = getattr(module, "BORROWED", [])
    refused = 0
    for name, old, new, called in borrowed:
        answers = [make(module.LESSON, name, old, new, with_source=s) for s in (True, False)]
        results = [module.EXERCISES[name](a, quiet=True) for a in answers for _ in range(max(1, draws // 2))]
        refused += all(
            r.status == "failed" and BORROWED_HINT in r.message and f"`{called}`" in r.message for r in results
        )
    return {
        "borrowed": len(borrowed),
        "refused": refused,
        "mutants": len(module.MUTANTS),
        "rejected": rejected,
        "every": every,
        "named": named,
        "alternatives": len(alternatives),
        "alternatives_ok": alternatives_ok,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=50)
    parser.add_argument("--lessons", nargs="*", default=None, help="two-digit lesson numbers (default: all)")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    print(
        f"| lesson | exercises | mistakes tried | rejected | rejected on every one of {args.draws} draws | "
        "rejected with the hint that names the mistake | right alternatives passing every draw | "
        "borrowed answers refused |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for path in sorted((ROOT / "tests" / "mutants").glob("test_lesson*.py")):
        if args.lessons and path.stem[-2:] not in args.lessons:
            continue
        module = importlib.import_module(f"tests.mutants.{path.stem}")
        start = time.perf_counter()
        r = rates(module, args.draws)
        n = r["mutants"]
        print(
            f"| {module.LESSON} | {len(module.EXERCISES)} | {n} | {r['rejected']} ({r['rejected'] / n:.0%}) | "
            f"{r['every']} ({r['every'] / n:.0%}) | {r['named']} ({r['named'] / n:.0%}) | "
            f"{r['alternatives_ok']} of {r['alternatives']} | {r['refused']} of {r['borrowed']} |",
            flush=True,
        )
        print(f"<!-- {module.LESSON}: {time.perf_counter() - start:.0f} s -->", file=sys.stderr)


if __name__ == "__main__":
    main()
