"""The sandbox's cgroup v2 path, on a stand-in for /sys/fs/cgroup (this machine's cgroups are v1, which the
grading tests use for real): the limits land in the files the kernel reads, every process listed in the
group is killed, and groups left by a dead grader are swept. And a root grader's kernel under a uid of its own.
"""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

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


OWN_UID_CHECK = """
import os, sys
conn, results = sys.argv[1], sys.argv[2]
print("ids", os.getuid(), os.getgid(), open("/proc/self/uid_map").read().split())
open(results, "w").write("records")  # the one host file it may write
open(os.path.join(conn, "kernel-1"), "w").write("")  # while starting, the socket folder is its to write
print("locked?", flush=True)
sys.stdin.readline()  # the grader locks the folder now
try:
    open(os.path.join(conn, "filler"), "w").write("x")
    print("wrote after lock")
except OSError as exc:
    print("refused after lock", exc.errno)
for path in ("/home/student/submission.ipynb", "/run/grader/new.json", "/proc/sys/vm/swappiness"):
    try:
        open(path, "w")
        print("WROTE", path)
    except OSError as exc:
        print("refused", path, exc.errno)
"""


@pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists("/usr/bin/python3"), reason="needs root and /usr/bin/python3"
)
def _others_can_enter(path: Path) -> bool:
    """Every folder above ``path`` lets other users through (o+x): a kernel of its own uid can reach it."""
    return all(os.stat(p).st_mode & 0o001 for p in path.resolve().parents)


@pytest.mark.skipif(not sandbox.detect().bwrap, reason="no working bubblewrap sandbox here")
@pytest.mark.skipif(
    not _others_can_enter(Path(sandbox.__file__)),
    reason="course_lib lies under a folder other users cannot enter (a mktemp clone): the grader then runs "
    "kernels in a uid namespace instead, as its trial run finds",
)
def test_a_root_grader_runs_the_kernel_as_a_uid_of_its_own(tmp_path, monkeypatch):
    """The default for a root grader whose Python others may read (this machine's lies under /root, so its
    grading tests use the other mode): the kernel is uid 1000 inside and an unprivileged uid outside, can write
    its results file, its socket folder only until the grader locks it, and nothing else on the host."""
    import tempfile

    # the system's Python, alone: nothing under /root is mounted
    monkeypatch.setattr(sys, "prefix", "/usr")
    monkeypatch.setattr(sys, "base_prefix", "/usr")
    monkeypatch.setattr(sys, "path", ["/usr/lib/python3.11"])
    private = Path(tempfile.mkdtemp(prefix="course-lib-own-uid-"))
    try:
        (private / "submission.ipynb").write_text("{}")
        (private / "results").mkdir()
        (private / "results" / "1.1.json").write_text("")
        uid = sandbox.HOST_UID_BASE + 4242
        box = sandbox.Box(
            conn=private / "conn",
            read_only={
                f"{sandbox.HOME}/submission.ipynb": private / "submission.ipynb",
                sandbox.RESULTS: private / "results",
            },
            writable={f"{sandbox.RESULTS}/1.1.json": private / "results" / "1.1.json"},
            uid=uid,
            bwrap=sandbox.detect().bwrap,
        )
        sandbox.prepare(private, box)
        argv = ["/usr/bin/python3", "-c", OWN_UID_CHECK, str(box.conn), f"{sandbox.RESULTS}/1.1.json"]
        proc = subprocess.Popen(
            sandbox.kernel_command(argv, box, sandbox.Limits(), None),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        first = proc.stdout.readline()
        assert proc.stdout.readline().strip() == "locked?", proc.stderr.read()
        sandbox.lock(box)
        rest, err = proc.communicate("go\n", timeout=60)
        assert first.split()[:3] == ["ids", "1000", "1000"], first + err
        assert "refused after lock" in rest and "WROTE" not in rest and rest.count("refused") == 4, rest + err
        assert (private / "results" / "1.1.json").read_text() == "records"
        assert not (private / "conn" / "filler").exists()
        assert (private / "conn" / "kernel-1").stat().st_uid == uid  # created by the kernel's own host uid
    finally:
        shutil.rmtree(private, ignore_errors=True)


LIMITS_AND_A_BIG_ALLOCATION = """
limits = {line[:26].strip(): line[26:].split()[0] for line in open("/proc/self/limits").read().splitlines()[1:]}
print(limits["Max data size"], limits["Max address space"])
try:
    bytearray(900 * 1024 * 1024)
    print("allocated")
except MemoryError:
    print("MemoryError")
"""


def _launched(first_on_path: str = "") -> list:
    """What the launcher's child prints: its data and address-space limits, and a 900 MB allocation's fate, under
    the launcher's rlimits (no cgroup, no bubblewrap, 600 MB), with ``first_on_path`` first on its sys.path."""
    root = Path(__file__).resolve().parents[1]
    args = ["--cpu", "60", "--file-mb", "64", "--memory-mb", "600", "--processes", "256", "--"]
    args += [sys.executable, "-c", LIMITS_AND_A_BIG_ALLOCATION]
    code = f"import sys; sys.path[:0] = {[p for p in (first_on_path, str(root)) if p]!r}\n"
    code += f"from course_lib.instructor import sandbox; sandbox._launch({args!r})"
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()


def test_without_a_cgroup_memory_is_capped_by_rlimits_and_a_cuda_torch_still_imports(tmp_path):
    # Without a cgroup the launcher's rlimits are the memory cap. Address space (RLIMIT_AS) was the only one: a CUDA
    # build of torch (PyPI's for Linux) reserves more address space at import than any such cap, so every kernel
    # aborted (std::bad_alloc, seen on Python 3.12 with PyPI's torch). Now private memory (RLIMIT_DATA) caps what a
    # process allocates, and the address space is capped too where torch is not a CUDA build. Oracle: the limits
    # the kernel reads in /proc/self/limits, and a 900 MB allocation under a 600 MB cap.
    import torch

    cap = str(600 * 1024 * 1024)
    cuda_here = any((Path(torch.__file__).parent / "lib").glob("libtorch_cuda*"))
    assert _launched() == [cap, "unlimited" if cuda_here else cap, "MemoryError"]
    # a CUDA build stood in for by a torch folder holding libtorch_cuda (found first on the path, never imported)
    fake = tmp_path / "fake"
    (fake / "torch" / "lib").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text("")
    (fake / "torch" / "lib" / "libtorch_cuda.so").write_bytes(b"")
    assert _launched(str(fake)) == [cap, "unlimited", "MemoryError"]


def test_a_kernel_runs_on_the_cpu_whatever_the_graders_environment_asks(tmp_path):
    # An instructor whose shell sets COURSE_LIB_DEVICE=cuda (or a GPU host, or a Mac with MPS) must not change
    # where the students' notebooks run: the same device, results and time limits on every grader. Here
    # without bubblewrap (--no-sandbox), whose kernel inherits the grader's environment.
    root = Path(__file__).resolve().parents[1]
    code = "from course_lib.device import get_device; print(get_device())"
    box = sandbox.Box(conn=tmp_path, bwrap=None)
    env = {**os.environ, "COURSE_LIB_DEVICE": "cuda", "PYTHONPATH": str(root)}
    done = subprocess.run(
        sandbox.kernel_command([sys.executable, "-c", code], box, sandbox.Limits(), None),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout.strip() == "cpu", done.stderr[-2000:]


# --------------------------------------------------------------------------- issue 33: a kernel that stops itself


def test_a_stopped_process_is_seen_stopped_and_found_below_its_parent():
    """``watchdog.kernel_pid`` finds the first process under the one started that is not bubblewrap, and
    ``is_stopped`` reads its state: a Python that SIGSTOPs itself, started by a shell (standing in for bwrap's
    levels: the shell is the root here, so the root itself is the kernel), and then its child."""
    from course_lib.instructor import watchdog

    stop = "import os, signal, time; time.sleep(0.3); os.kill(os.getpid(), signal.SIGSTOP)"
    proc = subprocess.Popen([sys.executable, "-c", stop])
    try:
        assert watchdog.kernel_pid(proc.pid) == proc.pid
        assert not watchdog.is_stopped(proc.pid)  # running (it sleeps first)
        deadline = time.monotonic() + 20
        while not watchdog.is_stopped(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert watchdog.is_stopped(proc.pid)
    finally:
        proc.kill()
        proc.wait()
    assert not watchdog.is_stopped(proc.pid) and watchdog.kernel_pid(proc.pid) is None  # gone


def test_a_cell_that_stops_its_kernel_fails_in_seconds_saying_so(tmp_path):
    """A cell that SIGSTOPs its own kernel: before, the cell looked busy, ignored the interrupt and cost the cell
    timeout twice (103 s with a 30 s timeout); now the watch sees the stopped process and fails the cell within
    seconds, saying the kernel stopped itself, and the cells after it are not run."""
    nbformat = pytest.importorskip("nbformat")
    from course_lib.instructor import watchdog

    nb = nbformat.v4.new_notebook()
    sources = ["x = 1", "import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)", "y = 2"]
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    with pytest.raises(watchdog.KernelStalled) as caught:  # not the cell timeout's error: the stop was seen
        watchdog.execute(nb, notebook_name="stop.ipynb", path=str(tmp_path), timeout=600, stall_after=30)
    message = str(caught.value)
    assert "stop.ipynb, cell 1 (`import os, signal`): the kernel stopped itself" in message, message
    assert "for 3 s" in message or "for 4 s" in message, message  # STOPPED_AFTER, not the 600 s timeout
    assert nb.cells[2].get("execution_count") is None


def _guarded(nb, tmp_path, timeout):
    """The grader's own client (interrupt, then kill) on a plain local kernel: no sandbox needed for the watch."""
    from course_lib.instructor.kernel import _client_class

    return _client_class()(
        nb,
        deadline=time.monotonic() + 600,
        max_output_bytes=2_000_000,
        max_widget_bytes=20_000_000,
        notebook_name="idle.ipynb",
        timeout=timeout,
        allow_errors=True,
        interrupt_on_timeout=True,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )


@pytest.mark.parametrize("busy", [False, True])
def test_a_cell_that_ignores_the_interrupt_ends_early_only_when_it_uses_no_cpu(tmp_path, busy):
    """Past its timeout a cell is interrupted. One that ignores SIGINT and sleeps (no CPU, no answer) fails
    IDLE_AFTER_INTERRUPT seconds later, saying so; one that ignores it in a busy loop keeps its second timeout and
    is then killed ("ignored the interrupt"), as before."""
    nbformat = pytest.importorskip("nbformat")
    from nbclient.exceptions import CellTimeoutError

    from course_lib.instructor import watchdog

    wait = "while True:\n    pass" if busy else "time.sleep(1000)"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n{wait}")]
    client = _guarded(nb, tmp_path, timeout=6)
    client.idle_after_interrupt = 2.0  # (5 s by default) well inside the second 6 s the kill would wait
    with pytest.raises(CellTimeoutError) as caught:
        client.execute()
    if busy:
        assert not isinstance(caught.value, watchdog.KernelStalled), caught.value
        assert client.killed == "cell 0 ignored the interrupt"
    else:
        assert isinstance(caught.value, watchdog.KernelStalled), caught.value
        assert "it ignored the interrupt and used no CPU" in str(caught.value), caught.value
