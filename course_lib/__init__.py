"""course_lib: the small, tested library behind the sequence-models course.

Three floors, each a folder (see ARCHITECTURE.md):

- ``course_lib/*.py``: what lessons teach (``ngram``, ``rnn``, ``transformer``, ...) and the
  shared pieces they stand on (``device``, ``corpora``, ``train``, ``lm``, ``checkpoint``);
- ``course_lib/notebook/``: what notebooks need at run time (``setup``, ``viz``, ``quiz``);
- ``course_lib/checks/``: the exercise checks;
- ``course_lib/instructor/``: the notebook builder, grading and the ``course-lib`` command.

This top-level module stays light: it imports torch only when a device function is
called, and never matplotlib or ipywidgets.
"""

from course_lib._project import version as _version

# One home: pyproject.toml, read from the installed metadata (or from pyproject.toml in a source checkout).
__version__ = _version()

__all__ = ["get_device", "set_seed", "describe", "setup", "__version__"]


def __getattr__(name):
    # Lazy: `import course_lib` must not pay for torch until a device function is used.
    if name in ("get_device", "set_seed", "describe"):
        from course_lib import device

        return getattr(device, name)
    if name == "setup":
        from course_lib.notebook.setup import setup

        return setup
    raise AttributeError(f"module 'course_lib' has no attribute {name!r}")
