"""The sandbox's cgroup v2 path, on a stand-in for /sys/fs/cgroup (this machine's cgroups are v1, which the
grading tests use for real): the limits land in the files the kernel reads, every process listed in the
group is killed, and groups left by a dead grader are swept."""

import os
import subprocess
import sys

import pytest

from course_lib.instructor import sandbox


@pytest.fixture
def v2(tmp_path, monkeypatch):
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    monkeypatch.setattr(sandbox, "CGROUP_V2", tmp_path)
    monkeypatch.setattr(sandbox, "detect", lambda: sandbox.Support(bwrap=None, cgroup="v2"))
    return tmp_path


def test_v2_is_recognised_only_with_the_memory_and_pids_controllers(v2):
    assert sandbox._cgroup_kind() == "v2"
    (v2 / "cgroup.controllers").write_text("cpu io\n")
    assert sandbox._cgroup_kind() != "v2"


def test_v2_limits_are_written_where_the_kernel_reads_them(v2):
    name = sandbox.new_cgroup(sandbox.Limits(memory_mb=123, processes=7))
    group = v2 / name
    assert (group / "memory.max").read_text() == str(123 * 1024 * 1024)
    assert (group / "pids.max").read_text() == "7"
    assert sandbox._cgroup_dirs(name) == [group]


def test_v2_every_process_in_the_group_is_killed(v2):
    name = sandbox.new_cgroup(sandbox.Limits())
    group = v2 / name
    sleepers = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) for _ in range(2)]
    try:
        (group / "cgroup.procs").write_text("\n".join(str(p.pid) for p in sleepers) + "\n")
        (group / "cgroup.kill").write_text("")
        sandbox.remove_cgroup(name)
        assert [p.wait(timeout=10) for p in sleepers] == [-9, -9]
        assert (group / "cgroup.kill").read_text() == "1"  # the kernel's own kill switch was used too
    finally:
        for p in sleepers:
            p.kill()


def test_groups_of_a_dead_grader_are_swept_and_a_living_graders_kept(v2):
    dead = v2 / "course-lib-999999999-abcdef12"  # above any pid this machine hands out
    alive = v2 / f"course-lib-{os.getpid()}-abcdef12"
    other = v2 / "somebody-else"
    for folder in (dead, alive, other):
        folder.mkdir()
    sandbox.sweep_cgroups()
    assert not dead.exists() and alive.exists() and other.exists()
