"""The local reuse of notebook executions (conftest.py): keyed by every input, never across executors, never in CI."""

import importlib.util
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("course_root_conftest", ROOT / "conftest.py")
suite = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(suite)


class Item:
    """What the reuse code reads of a pytest item: its node id, a notebook_run marker, user properties."""

    def __init__(self, nodeid, notebook_run=None):
        self.nodeid, self._run, self.user_properties = nodeid, notebook_run, []

    def get_closest_marker(self, name):
        return SimpleNamespace(args=(self._run,)) if name == "notebook_run" and self._run else None


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    (root / "notebooks").mkdir(parents=True)
    shutil.copytree(ROOT / "course_lib", root / "course_lib", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "constraints.txt", root / "constraints.txt")
    (root / "notebooks" / "06_x.ipynb").write_text('{"cells": []}')
    return root


def test_nbval_and_another_executor_keep_records_of_their_own(repo):
    nbval = Item("notebooks/06_x.ipynb::Cell 0")
    headless = Item("tests/test_headless.py::test_lesson[06_x]", notebook_run="notebooks/06_x.ipynb")
    other = Item("tests/test_ngram.py::test_counts")
    assert suite._notebook_of(nbval) == "notebooks/06_x.ipynb"
    assert suite._notebook_of(headless) == "notebooks/06_x.ipynb (test_headless)"
    assert suite._notebook_of(other) is None
    records = {suite._record(repo, suite._notebook_of(i)) for i in (nbval, headless)}
    assert len(records) == 2 and all(r.parent == repo / ".pytest_cache" / "course-notebooks" for r in records)


def test_a_record_changes_with_the_notebook_the_package_and_the_constraints(repo):
    key = "notebooks/06_x.ipynb (test_headless)"
    first = suite._record(repo, key)
    (repo / "notebooks" / "06_x.ipynb").write_text('{"cells": [], "metadata": {}}')
    second = suite._record(repo, key)
    (repo / "course_lib" / "ngram.py").write_text((repo / "course_lib" / "ngram.py").read_text() + "\n# changed\n")
    third = suite._record(repo, key)
    (repo / "constraints.txt").write_text("torch==2.13.0\n")
    assert len({first, second, third, suite._record(repo, key)}) == 4


def test_passed_executions_are_left_out_locally_and_never_in_ci(repo, monkeypatch):
    items = [
        Item("notebooks/06_x.ipynb::Cell 0"),
        Item("tests/test_headless.py::test_lesson[06_x]", notebook_run="notebooks/06_x.ipynb"),
        Item("tests/test_ngram.py::test_counts"),
    ]
    record = suite._record(repo, "notebooks/06_x.ipynb (test_headless)")
    record.parent.mkdir(parents=True)
    record.touch()  # the headless run passed with these inputs; nbval's cells have no record
    deselected = []
    config = SimpleNamespace(
        rootpath=repo, hook=SimpleNamespace(pytest_deselected=lambda items: deselected.extend(items))
    )
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("REUSE", raising=False)
    kept = list(items)
    suite._reuse_passed_notebooks(config, kept)
    assert [i.nodeid for i in deselected] == [items[1].nodeid] and kept == [items[0], items[2]]
    for env in ({"CI": "1"}, {"REUSE": "0"}):
        with monkeypatch.context() as m:
            for name, value in env.items():
                m.setenv(name, value)
            kept = list(items)
            suite._reuse_passed_notebooks(config, kept)
            assert kept == items, env
