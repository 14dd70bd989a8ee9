"""Write the bytecode (.pyc) of what the course's processes import, once, at install time.

`make setup` installs with --no-compile (byte-compiling all of torch was most of an install). Python then writes a
module's .pyc on its first import, but not where PYTHONDONTWRITEBYTECODE is set (some machines' environments set
it) and not from the grader's sandbox (the packages are mounted read-only there). Without the .pyc every fresh
kernel compiles torch, IPython and matplotlib from source again: importing them took 9.5 s instead of 3.9 s here,
and each graded submission starts two such processes.

Run by the Makefile after an install, with PYTHONDONTWRITEBYTECODE emptied; prints what it compiled and how long.
"""

import importlib
import pkgutil
import sys
import time

# What a lesson's kernel, the grader's processes and the test runner import beside the course itself.
OTHERS = [
    "torch",
    "torch.nn",
    "torch.optim",
    "torch.utils.data",
    "numpy",
    "matplotlib.pyplot",
    "matplotlib.backends.backend_agg",
    "matplotlib_inline.backend_inline",
    "IPython",
    "ipykernel.kernelapp",
    "ipykernel.ipkernel",
    "ipywidgets",
    "jupyter_client",
    "nbclient",
    "nbformat",
]


def main() -> int:
    if sys.dont_write_bytecode:
        print("warm_bytecode: PYTHONDONTWRITEBYTECODE is set: nothing would be written", file=sys.stderr)
        return 1
    start, before = time.perf_counter(), len(sys.modules)
    import course_lib

    names = OTHERS + [m.name for m in pkgutil.walk_packages(course_lib.__path__, "course_lib.")]
    skipped = []
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as error:  # an optional extra that is not installed (e.g. dask without [grading])
            skipped.append(f"{name} ({error.name or error})")
    print(
        f"warm_bytecode: {len(sys.modules) - before} modules imported and compiled in "
        f"{time.perf_counter() - start:.1f} s" + (f"; not installed: {', '.join(skipped)}" if skipped else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
