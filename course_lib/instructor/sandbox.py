"""Run one submission's kernel shut away from everything else, with limits, and kill all it started.

The grader starts each student's kernel through :func:`kernel_command`, which wraps the usual
``python -m ipykernel_launcher -f {connection_file}`` in two layers:

1. **bubblewrap** (``bwrap``, Debian's ``bubblewrap`` package), when it works on this machine: a new
   mount, PID, network, IPC and user namespace in which the file system holds only the system, Python,
   the installed packages and ``course_lib`` itself (read-only), an empty ``/tmp``, and one writable
   folder with the student's own copy. Other submissions, the grader's working directory and command
   line, the output files, ``solutions/`` and the rest of the repository are simply not there.
   The kernel talks to the grader over Unix sockets in a folder of its own (no network at all).
2. **limits** set by ``python -m course_lib.instructor.sandbox`` just before it execs the sandbox:
   a cgroup (v2 or v1) capping memory and the number of processes when the machine lets us create one,
   and in every case rlimits on CPU time, file size and (without a memory cgroup) address space.

:class:`Limits` holds the numbers; :func:`detect` says what this machine offers (``course-lib doctor``
prints it). Everything the kernel started dies with it: the sandbox has its own PID namespace whose
init is killed with the kernel (``--die-with-parent``), and the cgroup's processes are killed one by one.
"""

from __future__ import annotations

import functools
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

HOME = "/home/student"  # the student's folder, as the kernel sees it
PACKAGE_MOUNT = "/opt/course-lib"  # course_lib (alone, read-only) is mounted here


@dataclass(frozen=True)
class Limits:
    """Per-submission limits. Memory and processes cover everything the kernel starts."""

    memory_mb: int = 3000
    processes: int = 256
    cpu_seconds: int = 900
    file_mb: int = 64

    def __post_init__(self):
        for name in ("memory_mb", "processes", "cpu_seconds", "file_mb"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")


@dataclass(frozen=True)
class Support:
    """What this machine offers for isolating submissions."""

    bwrap: str | None  # path of a bwrap that works here, else None
    cgroup: str | None  # "v2" or "v1" when we may create cgroups, else None
    why_not: str = ""  # why there is no sandbox

    def describe(self) -> str:
        box = f"bubblewrap sandbox ({self.bwrap})" if self.bwrap else f"NO SANDBOX ({self.why_not})"
        group = f"cgroup {self.cgroup} limits on memory and processes" if self.cgroup else "no cgroup (rlimits only)"
        return f"{box}; {group}"


CGROUP_V2 = Path("/sys/fs/cgroup")
CGROUP_V1 = {"memory": Path("/sys/fs/cgroup/memory"), "pids": Path("/sys/fs/cgroup/pids")}


@functools.cache
def detect() -> Support:
    """Try bubblewrap and cgroups once; the answer is cached for the process."""
    bwrap = shutil.which("bwrap")
    why = ""
    if not bwrap:
        why = "bwrap not found: apt-get install bubblewrap"
    else:
        probe = [bwrap, *_mounts(Path("/tmp")), "--unshare-all", "--die-with-parent", "--", sys.executable, "-c", "0"]
        try:
            done = subprocess.run(probe, capture_output=True, timeout=30)
            if done.returncode != 0:
                why = f"bwrap fails here: {done.stderr.decode(errors='replace').strip()[:200]}"
                bwrap = None
        except (OSError, subprocess.TimeoutExpired) as exc:
            why, bwrap = f"bwrap fails here: {exc}", None
    return Support(bwrap=bwrap, cgroup=_cgroup_kind(), why_not=why)


def _cgroup_kind() -> str | None:
    name = f"course-lib-probe-{uuid.uuid4().hex[:8]}"
    if (CGROUP_V2 / "cgroup.controllers").is_file():
        try:
            controllers = (CGROUP_V2 / "cgroup.controllers").read_text().split()
            if {"memory", "pids"} <= set(controllers):
                (CGROUP_V2 / name).mkdir()
                (CGROUP_V2 / name).rmdir()
                return "v2"
        except OSError:
            pass
    try:
        for base in CGROUP_V1.values():
            (base / name).mkdir()
            (base / name).rmdir()
        return "v1"
    except OSError:
        return None


# --------------------------------------------------------------------------- the command


def _package_dir() -> Path:
    import course_lib

    return Path(course_lib.__file__).resolve().parent


def _mounts(home: Path, conn: Path | None = None) -> list[str]:
    """bwrap arguments: the system, Python and its packages read-only; home (and conn) writable."""
    args = []
    for path in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc"):
        args += ["--ro-bind-try", path, path]
    # The empty /tmp first: a mount listed later lands on top of it, so a Python or a venv that lives
    # under /tmp (a CI clone) stays visible; listed after, the tmpfs would hide it.
    args += ["--tmpfs", "/tmp", "--dev", "/dev", "--proc", "/proc"]
    prefixes = {Path(sys.base_prefix).resolve(), Path(sys.prefix), Path(sys.prefix).resolve()}
    prefixes |= {Path(p) for p in sys.path if p and Path(p).is_dir() and "site-packages" in p}
    for prefix in sorted(prefixes):
        if not str(prefix).startswith(("/usr/", "/bin/", "/lib")):
            args += ["--ro-bind-try", str(prefix), str(prefix)]
    args += ["--ro-bind", str(_package_dir()), f"{PACKAGE_MOUNT}/course_lib"]
    args += ["--bind", str(home), HOME]
    if conn is not None:
        args += ["--bind", str(conn), str(conn)]
    # whatever the sandbox could reach by these paths is hidden again (e.g. a venv inside the repository
    # holds nothing else, but the repository's own folder must not appear through a parent mount)
    return args


def kernel_command(kernel_argv: list[str], home: Path, conn: Path, limits: Limits, cgroup: str | None) -> list[str]:
    """The full command that starts a kernel for one submission (see the module docstring)."""
    support = detect()
    inner = list(kernel_argv)
    if support.bwrap:
        inner = [
            support.bwrap,
            *_mounts(home, conn),
            "--unshare-all",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--chdir",
            HOME,
            "--clearenv",
            "--setenv",
            "HOME",
            HOME,
            "--setenv",
            "PATH",
            f"{Path(sys.executable).parent}:/usr/bin:/bin",
            "--setenv",
            "PYTHONPATH",
            PACKAGE_MOUNT,
            "--setenv",
            "MPLBACKEND",
            "Agg",
            "--setenv",
            "OMP_NUM_THREADS",
            "1",
            "--setenv",
            "COURSE_LIB_GRADING",
            "1",
            "--",
            *inner,
        ]
    launcher = [sys.executable, "-m", "course_lib.instructor.sandbox", "--cpu", str(limits.cpu_seconds)]
    launcher += ["--file-mb", str(limits.file_mb), "--memory-mb", str(limits.memory_mb)]
    launcher += ["--processes", str(limits.processes)]
    if cgroup:
        launcher += ["--cgroup", cgroup]
    return launcher + ["--", *inner]


# --------------------------------------------------------------------------- cgroups


def new_cgroup(limits: Limits) -> str | None:
    """Create a cgroup with the memory and process limits; its name, or None when cgroups are unavailable."""
    kind = detect().cgroup
    if not kind:
        return None
    name = f"course-lib-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    memory = str(limits.memory_mb * 1024 * 1024)
    try:
        if kind == "v2":
            group = CGROUP_V2 / name
            group.mkdir()
            (group / "memory.max").write_text(memory)
            (group / "memory.swap.max").write_text("0") if (group / "memory.swap.max").exists() else None
            (group / "pids.max").write_text(str(limits.processes))
        else:
            (CGROUP_V1["memory"] / name).mkdir()
            (CGROUP_V1["pids"] / name).mkdir()
            (CGROUP_V1["memory"] / name / "memory.limit_in_bytes").write_text(memory)
            (CGROUP_V1["pids"] / name / "pids.max").write_text(str(limits.processes))
    except OSError:
        remove_cgroup(name)
        return None
    return name


def _cgroup_dirs(name: str) -> list[Path]:
    if detect().cgroup == "v2":
        return [CGROUP_V2 / name]
    return [base / name for base in CGROUP_V1.values()]


def remove_cgroup(name: str | None) -> None:
    """Kill every process left in the cgroup, then remove it."""
    if not name:
        return
    for _ in range(50):
        pids = set()
        for group in _cgroup_dirs(name):
            try:
                pids |= {int(p) for p in (group / "cgroup.procs").read_text().split()}
            except OSError:
                pass
        if not pids:
            break
        if (CGROUP_V2 / name / "cgroup.kill").exists():
            try:
                (CGROUP_V2 / name / "cgroup.kill").write_text("1")
            except OSError:
                pass
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.05)
    for _ in range(20):  # the last processes may take a moment to leave
        left = [group for group in _cgroup_dirs(name) if group.exists()]
        for group in left:
            try:
                group.rmdir()
            except OSError:
                pass
        if not any(group.exists() for group in left):
            break
        time.sleep(0.1)


def sweep_cgroups() -> None:
    """Remove the empty cgroups of graders that were killed before they could (named course-lib-<pid>-...)."""
    kind = detect().cgroup
    bases = [CGROUP_V2] if kind == "v2" else list(CGROUP_V1.values()) if kind == "v1" else []
    for base in bases:
        for group in base.glob("course-lib-*-*"):
            pid = group.name.split("-")[2]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                try:
                    group.rmdir()  # fails, harmlessly, while a process is still in it
                except OSError:
                    pass


# --------------------------------------------------------------------------- the launcher


def _launch(argv: list[str]) -> None:
    """``python -m course_lib.instructor.sandbox [limits] -- command...``: join the cgroup, limit, exec."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m course_lib.instructor.sandbox")
    parser.add_argument("--cpu", type=int, required=True)
    parser.add_argument("--file-mb", type=int, required=True)
    parser.add_argument("--memory-mb", type=int, required=True)
    parser.add_argument("--processes", type=int, required=True)
    parser.add_argument("--cgroup", default=None)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if args.cgroup:
        for group in _cgroup_dirs(args.cgroup):
            (group / "cgroup.procs").write_text(str(os.getpid()))
    else:  # no cgroup: rlimits are all we have (RLIMIT_NPROC does not bind root)
        memory = args.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_NPROC, (args.processes, args.processes))
    resource.setrlimit(resource.RLIMIT_CPU, (args.cpu, args.cpu + 5))
    size = args.file_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.execvp(command[0], command)


if __name__ == "__main__":
    _launch(sys.argv[1:])
