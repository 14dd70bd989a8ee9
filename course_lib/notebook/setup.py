"""The first cell of every notebook, and the one rule for "can a widget render here?".

``setup`` seeds everything, picks the device and prints what the notebook runs on and
what will not render there (and makes tqdm's notebook bars leave a final line in the saved
outputs); ``widgets_available`` is the single test every explorer and quiz uses before it
builds a widget.
"""

from __future__ import annotations

import os
import sys

import torch

from course_lib.device import describe, get_device, set_seed


def setup(seed: int = 0, threads: int | None = None, device: str | None = None) -> torch.device:
    """The first cell of every notebook: seed everything, pick the device, print what we run on.

    ``threads`` sets torch's CPU threads. ``None`` picks 1 on machines with at most 2 cores
    and torch's default elsewhere: on 2 cores, 2 threads train only 1.1-1.4x faster than 1 when
    the machine is quiet, but 2-3x slower when one other CPU-bound process runs beside the
    notebook (benchmarks/bench_threads.py, RESULTS.md).
    """
    if threads is None and (os.cpu_count() or 1) <= 2:
        threads = 1
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads must be a positive integer or None, got {threads!r}")
        torch.set_num_threads(threads)
    set_seed(seed)
    dev = get_device(device)
    from course_lib.notebook.viz import use_course_style

    use_course_style()  # every figure of the notebook: colour-blind-safe colours, each with its own line style
    if widgets_available():
        from course_lib.notebook.fallback import keep_progress_lines

        keep_progress_lines()  # progress bars leave their final line (steps, time) in the saved notebook
    from course_lib import __version__

    print(f"course_lib {__version__}; seed {seed}")
    print(describe(dev))
    where = where_am_i()
    print(f"running in: {where}")
    for note in environment_notes(where):
        print(f"note: {note}")
    return dev


def where_am_i() -> str:
    """Where the notebook runs: 'colab', 'vscode', 'jupyter' or 'python'."""
    if "google.colab" in sys.modules:
        return "colab"
    if "VSCODE_PID" in os.environ or os.environ.get("VSCODE_CWD"):
        return "vscode"
    try:
        from IPython import get_ipython  # type: ignore
    except ImportError:
        return "python"
    shell = get_ipython()
    if shell is None:
        return "python"
    if type(shell).__name__ == "ZMQInteractiveShell":
        return "jupyter"
    return "ipython"


def environment_notes(where: str) -> list[str]:
    """What will not render in ``where`` (see ``where_am_i``), and what to do about it."""
    import importlib.util

    def missing(module: str) -> bool:
        return importlib.util.find_spec(module) is None

    notes = []
    if missing("ipywidgets"):
        notes.append(
            "ipywidgets is not installed: explorers show their default settings only (fix: pip install ipywidgets)"
        )
    if where == "python":
        notes.append(
            "plain Python: no widgets and no inline plots; explorers print the result for their "
            "default settings. Open the notebooks in JupyterLab (make lab) for the interactive parts."
        )
    elif where == "ipython":
        notes.append("IPython terminal: widgets do not render; explorers print their default settings.")
    elif where == "jupyter" and missing("jupyterlab_widgets"):
        notes.append(
            "jupyterlab_widgets is not installed in this environment: JupyterLab may show widgets as "
            "text (fix: pip install jupyterlab_widgets, then reload the page)"
        )
    elif where == "vscode":
        notes.append(
            "VS Code: widgets need the Jupyter extension; if one shows as plain text, update the extension "
            "and pick this environment's kernel."
        )
    elif where == "colab":
        from course_lib import _project

        notes.append(
            "Colab: plots render; the first cell installs this release of the course when it is missing "
            f"(by hand: !{_project.install_command()})."
        )
    if not missing("ipywidgets") and not ipywidgets_is_8():
        notes.append(
            "ipywidgets 7 (Colab's): explorers and quizzes print their result for the default settings; "
            "for the interactive ones: pip install 'ipywidgets>=8', then restart the kernel"
        )
    return notes


def ipywidgets_is_8() -> bool:
    """True when ipywidgets 8 or newer is installed (the explorers' widgets are built and tested with 8)."""
    try:
        import ipywidgets
    except ImportError:
        return False
    major = str(getattr(ipywidgets, "__version__", "0")).split(".")[0]
    return major.isdigit() and int(major) >= 8


def widgets_available() -> bool:
    """True inside a Jupyter kernel with ipywidgets 8 or newer importable.

    ipywidgets 7 (Colab preinstalls 7.7) counts as absent: the explorers display themselves with ipywidgets 8's
    ``_repr_mimebundle_``, so under 7 they print their static result instead of failing.
    """
    if not ipywidgets_is_8():
        return False
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and hasattr(shell, "kernel")
