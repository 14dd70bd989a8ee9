"""course_lib: the small, tested library behind the sequence-models course.

Lessons import what they teach, e.g. ``from course_lib.ngram import NGramLM``.
This top-level module stays light: it imports torch only when a device
function is called, and never matplotlib or ipywidgets.
"""

__version__ = "0.1.0"

__all__ = ["get_device", "set_seed", "describe", "setup", "__version__"]


def __getattr__(name):
    # Lazy: `import course_lib` must not pay for torch until a device function is used.
    if name in ("get_device", "set_seed", "describe", "setup"):
        from course_lib import device

        return getattr(device, name)
    raise AttributeError(f"module 'course_lib' has no attribute {name!r}")
