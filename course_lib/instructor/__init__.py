"""Instructor and contributor tooling: the notebook builder, grading and the ``course-lib`` command.

Its dependencies (jupytext, nbformat, nbclient) come with the ``instructor`` extra:
``pip install "course-lib[instructor] @ git+URL@vX.Y.Z"`` (the release tag; ``course-lib doctor`` prints the
command with the URL filled in). Students never import it.
"""
