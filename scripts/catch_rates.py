"""How many realistic mistakes each lesson's checks catch, with a hint that names the mistake.

Runs every mutant of tests/mutants once and prints a markdown table (README's "catch rate").
    python scripts/catch_rates.py
"""

import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.mutants.mutate import mutant  # noqa: E402


def main() -> None:
    print("| lesson | exercises | mistakes tried | rejected | rejected with the right hint |")
    print("| --- | --- | --- | --- | --- |")
    for path in sorted((ROOT / "tests" / "mutants").glob("test_lesson*.py")):
        module = importlib.import_module(f"tests.mutants.{path.stem}")
        rejected = hinted = 0
        for name, old, new, hint in module.MUTANTS:
            result = module.EXERCISES[name](mutant(module.LESSON, name, old, new), quiet=True)
            rejected += result.status == "failed"
            hinted += result.status == "failed" and hint in result.message
        n = len(module.MUTANTS)
        print(
            f"| {module.LESSON} | {len(module.EXERCISES)} | {n} | {rejected} ({rejected / n:.0%}) | "
            f"{hinted} ({hinted / n:.0%}) |"
        )


if __name__ == "__main__":
    main()
