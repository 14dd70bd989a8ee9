"""The two notebooks graded in session 14: B6.3.4 in a copy of lesson 06's exercises notebook whose other answer
cells hold right.py's answers, and the all-right baseline (as grade_sample.py builds them), written to OUT.

Usage: python make_b634.py OUT   then   course-lib grade OUT --lesson 06 --jobs 1 --budget 300 --out ...
"""

import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import grade_sample  # noqa: E402

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
entry = {e["id"]: e for e in grade_sample.ENTRIES}["B6.3.4"]
nbformat.write(grade_sample.filled("06"), out / "all_right.ipynb")
nbformat.write(grade_sample.filled("06", entry), out / "B6_3_4.ipynb")
