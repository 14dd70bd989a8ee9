"""Put a few borrowed answers into copies of the exercises notebook and grade them with `course-lib grade`.

Each submission holds one borrowed answer (plus the right answers of the earlier exercises it builds on);
the other exercises keep their stubs. Usage: python grade_sample.py OUTDIR"""

import importlib.util
import os
import subprocess
import sys

import nbformat

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
SAMPLE = [
    "02-2.2-b-func-jacfwd",
    "04-4.1-b-forward-copied",
    "04-4.2-b-vf-gru-cell",
    "06-6.3-b-sdpa",
    "07-7.3-b-sdpa-aten",
    "07-7.6-b-courselib-block",
]


def load(lesson):
    path = os.path.join(HERE, f"entries_lesson{lesson}.py")
    spec = importlib.util.spec_from_file_location(f"entries_lesson{lesson}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(outdir):
    by_lesson = {}
    for entry_id in SAMPLE:
        by_lesson.setdefault(entry_id[:2], []).append(entry_id)
    for lesson, ids in sorted(by_lesson.items()):
        mod = load(lesson)
        entries = {e["id"]: e for e in mod.ENTRIES}
        name = [f for f in os.listdir(os.path.join(ROOT, "exercises")) if f.startswith(lesson + "_")][0]
        sub_dir = os.path.join(outdir, lesson, "submissions")
        os.makedirs(sub_dir, exist_ok=True)
        for entry_id in ids:
            e = entries[entry_id]
            nb = nbformat.read(os.path.join(ROOT, "exercises", name), as_version=4)
            fill = {p: mod.RIGHT[p] for p in mod.PREREQ.get(e["ex"], [])}
            fill[e["ex"]] = e["code"]
            for c in nb.cells:
                gid = c.metadata.get("nbgrader", {}).get("grade_id", "")
                if gid.startswith("ex-") and gid[3:].replace("-", ".") in fill:
                    c.source = fill[gid[3:].replace("-", ".")].strip("\n")
            nbformat.write(nb, os.path.join(sub_dir, entry_id + ".ipynb"))
        out = os.path.join(outdir, lesson, "grades.csv")
        cmd = [
            os.path.join(ROOT, ".venv", "bin", "course-lib"),
            "grade",
            sub_dir,
            "--lesson",
            lesson,
            "--out",
            out,
            "--jobs",
            "1",
        ]
        print(" ".join(cmd), flush=True)
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        print(p.returncode, p.stdout[-3000:], p.stderr[-3000:], flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
