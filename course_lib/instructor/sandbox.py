"""Run one submission's kernel shut away from everything else, with limits, and kill all it started.

The grader starts each student's kernel through :func:`kernel_command`, which wraps the usual
``python -m ipykernel_launcher -f {connection_file}`` in two layers:

1. **limits** set by ``python -m course_lib.instructor.sandbox`` (the launcher) before anything else: a
   cgroup (v2 or v1) capping memory and processes when the machine lets us create one, rlimits on CPU
   time, file size and core dumps (and, without a memory cgroup, address space and processes); then, when
   the grader runs as root, the launcher drops to an unprivileged uid of the submission's own (see
   :func:`host_uid`; where that uid cannot reach Python, e.g. under ``/root/.pyenv``, bwrap maps root to uid
   1000 in the kernel's user namespace instead, without any capability, and :func:`detect` says so).
2. **bubblewrap** (``bwrap``, Debian's ``bubblewrap`` package): new mount, PID, network, IPC, UTS and
   user namespaces, every capability dropped, no further user namespaces (``--disable-userns``), and a
   seccomp filter refusing system calls a notebook never needs (:mod:`course_lib.instructor.seccomp`). The
   file system holds only the system, Python, the installed packages and ``course_lib`` itself
   (read-only), ``/proc/sys`` read-only, no ``/sys``, and size-limited tmpfs folders for the working
   folder (``/home/student``, with the submission copied in read-only), ``/tmp`` and ``/dev/shm``; the
   rest of the root is read-only. The only host folder it can write is, while the kernel starts, its
   socket folder (read-only once the kernel answers, when the grader is root). Other submissions, the
   grader's files, ``solutions/`` and the network are simply not there. bubblewrap itself starts from a
   minimal environment (:data:`MINIMAL_ENV`; its init is the sandbox's pid 1, whose environ is readable
   inside), and every Python the grader starts runs isolated (:func:`python_command`).

:func:`detect` finds out by a trial run of that very command whether it works here (``course-lib doctor``
prints the answer); :func:`refusal` is the message ``course-lib grade`` stops with when it does not.
Everything the kernel started dies with it: the sandbox has its own PID namespace whose init is killed
with the kernel (``--die-with-parent``), and the cgroup's processes are killed one by one.
"""

from __future__ import annotations

import functools
import os
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from course_lib.instructor.seccomp import SECCOMP_FD, seccomp_filter

HOME = "/home/student"  # the student's folder, as the kernel sees it
RESULTS = "/run/grader"  # the grader's results files, as the kernel sees them
PACKAGE_MOUNT = "/opt/course-lib"  # course_lib (alone, read-only) is mounted here
STUDENT_ID = 1000  # uid and gid inside the sandbox
HOST_UID_BASE = 1_990_000_000  # a grader running as root runs each kernel as one of a million uids above this
MB = 1024 * 1024
NOBODY = 65534  # owns a locked socket folder when kernels run as root mapped into their namespace
INSTALL = (
    "install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: sudo dnf install bubblewrap; "
    "in a clone: bash scripts/install_sandbox.sh)"
)
NO_SANDBOX_RISK = (
    "--no-sandbox runs the students' code unconfined, at your own risk: it can then read, change or delete "
    "anything your account can (other submissions, the grades, your files)"
)


class SandboxUnavailable(RuntimeError):
    """No working sandbox: grading refuses (unless the instructor passes --no-sandbox)."""


@dataclass(frozen=True)
class Limits:
    """Per-submission limits. Memory and processes cover everything the kernel starts."""

    memory_mb: int = 3000
    processes: int = 256
    cpu_seconds: int = 900
    file_mb: int = 64
    disk_mb: int = 500  # each of the working folder, /tmp and /dev/shm (size-limited tmpfs, in memory)
    widget_mb: int = 20  # widget (comm) messages the grader accepts from one notebook; the rest are dropped

    def __post_init__(self):
        for name in ("memory_mb", "processes", "cpu_seconds", "file_mb", "disk_mb", "widget_mb"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")


@dataclass(frozen=True)
class Support:
    """What this machine offers for isolating submissions."""

    bwrap: str | None  # path of a bwrap that passed the trial run here, else None
    cgroup: str | None  # "v2" or "v1" when we may create cgroups, else None
    why_not: str = ""  # what is missing or what failed, when there is no sandbox
    own_uid: bool = True  # a root grader runs kernels as uids of their own (False: Python lies under a folder
    # only root may enter, such as /root/.pyenv; the kernel is then uid 1000 in its namespace with no capabilities)

    def describe(self) -> str:
        who = (
            ""
            if os.geteuid() != 0
            else (
                ", kernels run as unprivileged uids of their own"
                if self.own_uid
                else ", kernels run as uid 1000 in their own user namespace, without capabilities (on the host they "
                "are root, because this Python lies under a folder only root may enter)"
            )
        )
        calls = "; seccomp refuses mount, ptrace, bpf, io_uring and the like" if seccomp_filter() else "; no seccomp"
        box = f"bubblewrap sandbox ({self.bwrap}{who}{calls})" if self.bwrap else f"NO SANDBOX ({self.why_not})"
        group = f"cgroup {self.cgroup} limits on memory and processes" if self.cgroup else "no cgroup (rlimits only)"
        return f"{box}; {group}"


@dataclass
class Box:
    """One submission's sandbox: what is mounted where, and who runs it."""

    conn: Path  # the kernel's socket folder (bound at the same path)
    read_only: dict = field(default_factory=dict)  # path inside -> host path, bound read-only
    writable: dict = field(default_factory=dict)  # path inside -> host file, bound writable
    uid: int | None = None  # the host uid the kernel runs as (when the grader is root), else None
    bwrap: str | None = None  # None: no sandbox (--no-sandbox), only the limits
    cwd: Path | None = None  # where an unconfined kernel starts (the sandbox's is its tmpfs home)


def refusal(support: Support) -> str:
    """The one message ``course-lib grade`` stops with when there is no working sandbox."""
    return (
        f"no working sandbox, so no student code was run: {support.why_not}. To grade safely, {INSTALL}; "
        "in a container, also allow user namespaces (for Docker: --security-opt seccomp=unconfined, or "
        "--privileged). Then `course-lib doctor --for instructor` says whether it works. "
        f"Or pass {NO_SANDBOX_RISK}."
    )


CGROUP_V2 = Path("/sys/fs/cgroup")
CGROUP_V1 = {"memory": Path("/sys/fs/cgroup/memory"), "pids": Path("/sys/fs/cgroup/pids")}

# What the trial run checks from inside: not root, /proc/sys not writable, no capabilities.
_PROBE = (
    "import os\n"
    "assert os.getuid() != 0, 'the sandbox runs as root'\n"
    "assert not os.access('/proc/sys/vm/swappiness', os.W_OK), '/proc/sys is writable'\n"
    "caps = [l for l in open('/proc/self/status') if l.startswith('CapEff')]\n"
    "assert caps and int(caps[0].split()[1], 16) == 0, 'capabilities were not dropped'\n"
)


_adopted: list[Support] = []  # what the grader's process found, given to the local workers it started (adopt)


def adopt(support: Support) -> None:
    """A local grading worker takes what its grader's process detected moments before on the same machine, as the
    same user, instead of two more trial sandboxes per worker (a kernel whose sandbox fails still fails to start)."""
    _adopted[:] = [support]
    detect.cache_clear()


@functools.cache
def detect() -> Support:
    """Try the sandbox once, by a trial run of the very command a kernel starts with; cached per process."""
    if _adopted:
        return _adopted[0]
    bwrap = shutil.which("bwrap")
    why = ""
    own_uid = True
    if not bwrap:
        why = "bubblewrap (bwrap) is not installed here (not found on PATH)"
    else:
        why = _trial(bwrap, uid=HOST_UID_BASE + secrets.randbelow(1_000_000) if os.geteuid() == 0 else None)
        if why and os.geteuid() == 0:  # perhaps only the uid of our own cannot reach Python: try without it
            own_uid = False
            as_root = _trial(bwrap, uid=None)
            why = "" if not as_root else as_root if as_root == why else f"{why}; run as root: {as_root}"
        bwrap = None if why else bwrap
    return Support(bwrap=bwrap, cgroup=_cgroup_kind(), why_not=why, own_uid=own_uid)


def _trial(bwrap: str, uid: int | None) -> str:
    """Run a few lines of Python in the sandbox as a kernel would be; "" when it works, else what failed."""
    private = Path(tempfile.mkdtemp(prefix="course-lib-probe-"))
    try:
        box = Box(conn=private / "conn", uid=uid, bwrap=bwrap)
        prepare(private, box)
        argv = kernel_command([sys.executable, "-c", _PROBE], box, Limits(), None)
        done = subprocess.run(argv, capture_output=True, timeout=60)
        if done.returncode != 0:
            said = (done.stderr or done.stdout).decode(errors="replace").strip().splitlines()
            return f"bubblewrap ({bwrap}) failed its trial run: {(said[-1] if said else '')[:300] or 'no message'}"
        return ""
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap ({bwrap}) failed its trial run: {exc}"
    finally:
        shutil.rmtree(private, ignore_errors=True)


def host_uid() -> int | None:
    """The uid a kernel runs as on the host: when the grader is root, an unprivileged uid of its own (no
    account has it, it owns nothing outside the submission's folder); otherwise None (the grader's own)."""
    if os.geteuid() != 0 or not detect().own_uid:
        return None
    return HOST_UID_BASE + secrets.randbelow(1_000_000)


def prepare(private: Path, box: Box) -> None:
    """Ownership of the submission's private folder: the kernel's uid may traverse it, write its socket
    folder (until :func:`lock`) and its results files, and read what is bound read-only; nothing else."""
    box.conn.mkdir(exist_ok=True)
    if box.uid is None:
        os.chmod(private, 0o700)
        return
    os.chown(private, 0, box.uid)
    os.chmod(private, 0o710)
    os.chown(box.conn, 0, box.uid)
    os.chmod(box.conn, 0o770)
    for host in box.read_only.values():
        os.chown(host, 0, box.uid)
        os.chmod(host, 0o750 if Path(host).is_dir() else 0o640)
    for host in box.writable.values():
        os.chown(host, box.uid, box.uid)
        os.chmod(host, 0o600)


def lock(box: Box) -> None:
    """Once the kernel answers, its socket folder is no longer writable to it (it could fill the disk there).
    Only a root grader can do this: a kernel running under the grader's own uid owns the folder."""
    if os.geteuid() != 0:
        return
    owner, group = (0, box.uid) if box.uid is not None else (NOBODY, NOBODY)
    for entry in box.conn.iterdir():  # the connection file stays readable to the kernel
        if entry.name.endswith(".json"):
            os.chown(entry, owner, group)
            os.chmod(entry, 0o640)
    os.chown(box.conn, owner, group)
    os.chmod(box.conn, 0o750)


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


def _mounts(box: Box, limits: Limits) -> list[str]:
    """bwrap arguments: the system, Python and its packages read-only; size-limited tmpfs folders."""
    size = str(limits.disk_mb * MB)
    args = []
    for path in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc"):
        args += ["--ro-bind-try", path, path]
    # The empty /tmp first: a mount listed later lands on top of it, so a Python or a venv that lives
    # under /tmp (a CI clone) stays visible; listed after, the tmpfs would hide it.
    args += ["--size", size, "--tmpfs", "/tmp", "--dev", "/dev", "--size", size, "--tmpfs", "/dev/shm"]
    args += ["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys"]  # host settings: read-only
    prefixes = {Path(sys.base_prefix).resolve(), Path(sys.prefix), Path(sys.prefix).resolve()}
    prefixes |= {Path(p) for p in sys.path if p and Path(p).is_dir() and "site-packages" in p}
    for prefix in sorted(prefixes):
        if not str(prefix).startswith(("/usr/", "/bin/", "/lib")):
            args += ["--ro-bind-try", str(prefix), str(prefix)]
    args += ["--ro-bind", str(_package_dir()), f"{PACKAGE_MOUNT}/course_lib"]
    args += ["--size", size, "--tmpfs", HOME]
    for inside, host in box.read_only.items():
        args += ["--ro-bind", str(host), inside]
    for inside, host in box.writable.items():
        args += ["--bind", str(host), inside]
    args += ["--bind", str(box.conn), str(box.conn)]
    # what bwrap made itself (the root, /dev) is read-only from here on; the tmpfs folders stay writable
    return args + ["--remount-ro", "/dev", "--remount-ro", "/"]


# Grading runs the student's notebook on the CPU whatever the host has: the same results and time limits on
# every grader, and no GPU for students' code (inside bubblewrap /dev has no GPU anyway; this covers
# --no-sandbox, a GPU passed through, and Apple's MPS): course_lib.setup then returns the CPU.
GRADING_DEVICE_ENV = {"COURSE_LIB_DEVICE": "cpu", "CUDA_VISIBLE_DEVICES": ""}
# the whole environment bubblewrap (and, with --no-sandbox, the kernel) starts with: none of the instructor's
MINIMAL_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}

# how every Python the grader starts begins: isolated (-I: no current folder on sys.path, no user site, no
# PYTHON* variables; the same on Python 3.10 to 3.13), with course_lib's folder appended after the standard
# library and the installed packages, so no file in the current or the submissions folder is ever imported
BOOT = "import sys; sys.path.append(sys.argv[1]); del sys.argv[1]; {}"


def python_command(code: str, package_parent: str | None = None) -> list[str]:
    """``python -I -c BOOT+code PARENT``: a Python of the grader's that imports nothing from the current folder."""
    parent = package_parent or str(_package_dir().parent)
    return [sys.executable, "-I", "-c", BOOT.format(code), parent]


def kernel_command(kernel_argv: list[str], box: Box, limits: Limits, cgroup: str | None) -> list[str]:
    """The full command that starts a kernel for one submission (see the module docstring)."""
    inner = list(kernel_argv)
    if box.bwrap:
        inner = [
            box.bwrap,
            *_mounts(box, limits),
            "--unshare-all",
            "--unshare-user",
            "--disable-userns",
            "--uid",
            str(STUDENT_ID),
            "--gid",
            str(STUDENT_ID),
            "--hostname",
            "sandbox",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            *(["--seccomp", SECCOMP_FD] if seccomp_filter() else []),
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
            *(arg for name, value in GRADING_DEVICE_ENV.items() for arg in ("--setenv", name, value)),
            "--",
            *inner,
        ]
    launcher = python_command("from course_lib.instructor.sandbox import _launch; _launch(sys.argv[1:])")
    launcher += ["--cpu", str(limits.cpu_seconds)]
    launcher += ["--file-mb", str(limits.file_mb), "--memory-mb", str(limits.memory_mb)]
    launcher += ["--processes", str(limits.processes)]
    if cgroup:
        launcher += ["--cgroup", cgroup]
    if box.uid is not None:
        launcher += ["--uid", str(box.uid)]
    if not box.bwrap and box.cwd is not None:
        launcher += ["--home", str(box.cwd)]
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
    # read from the group itself, not detect(): the launcher of every kernel asks, and detect()'s trial runs
    # would start two more sandboxes per launch there
    if (CGROUP_V2 / name).is_dir():
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


def _cgroup_bases() -> list[Path]:
    """The folders the grader's cgroups are made in (one per v1 controller), or none without cgroups."""
    kind = detect().cgroup
    return [CGROUP_V2] if kind == "v2" else list(CGROUP_V1.values()) if kind == "v1" else []


def remove_cgroups_of(pid: int) -> None:
    """Kill what is left in the cgroups process ``pid`` made (course-lib-<pid>-...), and remove them: for a grader
    that stops a worker it killed (the worker's own clean-up never ran)."""
    bases = _cgroup_bases()
    for name in sorted({group.name for base in bases for group in base.glob(f"course-lib-{int(pid)}-*")}):
        remove_cgroup(name)


def sweep_cgroups() -> None:
    """Remove the empty cgroups of graders that were killed before they could (named course-lib-<pid>-...)."""
    bases = _cgroup_bases()
    for base in bases:
        for group in base.glob("course-lib-*-*"):
            pid = group.name.split("-")[2]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                try:
                    group.rmdir()  # fails, harmlessly, while a process is still in it
                except OSError:
                    pass


def limit_hits(name: str | None) -> list[str]:
    """Which of the cgroup's limits the submission ran into ("memory", "processes"), read before removal."""
    if not name:
        return []
    hits = []
    if detect().cgroup == "v2":
        events = {"memory": ("memory.events", "oom_kill"), "processes": ("pids.events", "max")}
        for what, (file, key) in events.items():
            if _count(CGROUP_V2 / name / file, key):
                hits.append(what)
    elif detect().cgroup == "v1":
        if _count(CGROUP_V1["memory"] / name / "memory.oom_control", "oom_kill") or _number(
            CGROUP_V1["memory"] / name / "memory.failcnt"
        ):
            hits.append("memory")
        if _count(CGROUP_V1["pids"] / name / "pids.events", "max"):
            hits.append("processes")
    return hits


def _count(path: Path, key: str) -> int:
    try:
        for line in path.read_text().splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == key:
                return int(parts[1])
    except (OSError, ValueError):
        pass
    return 0


def _number(path: Path) -> int:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return 0


# --------------------------------------------------------------------------- the launcher


def _torch_reserves_address_space() -> bool:
    """Is the torch this Python would import a CUDA build (its folder holds libtorch_cuda)? Read from the files,
    without importing torch."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return False
    if spec is None or not spec.origin:
        return False
    return any((Path(spec.origin).parent / "lib").glob("libtorch_cuda*"))


def _launch(argv: list[str]) -> None:
    """``python -m course_lib.instructor.sandbox [limits] -- command...``: join the cgroup, limit, drop root, exec."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m course_lib.instructor.sandbox")
    parser.add_argument("--cpu", type=int, required=True)
    parser.add_argument("--file-mb", type=int, required=True)
    parser.add_argument("--memory-mb", type=int, required=True)
    parser.add_argument("--processes", type=int, required=True)
    parser.add_argument("--cgroup", default=None)
    parser.add_argument("--uid", type=int, default=None)
    parser.add_argument("--home", default=None)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if args.cgroup:
        for group in _cgroup_dirs(args.cgroup):
            (group / "cgroup.procs").write_text(str(os.getpid()))
    else:  # no cgroup: rlimits are all we have
        memory = args.memory_mb * MB
        # what each process allocates for itself (heap, private writable mappings), and its address space too except
        # under a CUDA build of torch, whose libraries reserve more address space at import than any memory limit
        # here (PyPI's torch for Linux: the kernel aborted with std::bad_alloc before running a cell)
        resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))
        if not _torch_reserves_address_space():
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    if args.uid is not None or not args.cgroup:  # RLIMIT_NPROC counts the uid's processes (and never binds root)
        resource.setrlimit(resource.RLIMIT_NPROC, (args.processes, args.processes))
    resource.setrlimit(resource.RLIMIT_CPU, (args.cpu, args.cpu + 5))
    size = args.file_mb * MB
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if SECCOMP_FD in command:  # the filter travels to bwrap as an inherited file descriptor
        fd = os.memfd_create("course-lib-seccomp", 0)
        os.write(fd, seccomp_filter())
        os.lseek(fd, 0, os.SEEK_SET)
        os.set_inheritable(fd, True)
        command = [str(fd) if arg == SECCOMP_FD else arg for arg in command]
    if args.uid is not None:  # the grader is root: the kernel is not (no supplementary groups either)
        os.setgroups([])
        os.setgid(args.uid)
        os.setuid(args.uid)
        if os.getuid() == 0 or os.geteuid() == 0:
            sys.exit("course_lib.instructor.sandbox: could not drop root")
    # Nothing of the instructor's environment goes on: bwrap itself (its init's /proc/1/environ is readable
    # inside) and, without bubblewrap (--no-sandbox), the kernel get this and nothing else
    env = {**MINIMAL_ENV, **GRADING_DEVICE_ENV}
    if args.home:
        env["HOME"] = args.home
    os.execvpe(command[0], command, env)


if __name__ == "__main__":
    _launch(sys.argv[1:])
