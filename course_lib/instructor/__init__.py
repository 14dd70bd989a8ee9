"""Instructor and contributor tooling: the notebook builder, grading and the ``course-lib`` command.

Its dependencies (jupytext, nbformat, nbclient) come with the ``instructor`` extra:
``pip install "course-lib[instructor]"``. Students never import it.
"""
