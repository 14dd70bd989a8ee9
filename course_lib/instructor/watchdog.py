"""A cell whose kernel stopped answering is noticed, woken if it can be, and failed fast with its name.

The defect (ipykernel 7, its issue 1554): a request can sit unread in the kernel's shell socket, so the
client waits for an answer while the kernel sits idle; it goes on only when some other connection sends
the kernel a request. constraints.txt keeps ipykernel below 7, which removes the cause here; this module
catches the class wherever a notebook is executed with nbclient (the site build, the grader; nbval gets
the same through tests/conftest.py).

While a cell runs, a watch task looks for the signs of a stall: no message at all about the request
after ``stall_after`` seconds (the request was never read), or the kernel has reported the cell done
(status idle) but no reply came within ``stall_after`` seconds (the reply was lost). Either way it sends
a ``kernel_info_request`` on a fresh connection, which wakes a kernel caught by the defect, and counts
it in ``wakes``. If the stall goes on for ``stall_timeout`` seconds the cell fails with
:class:`KernelStalled`, whose message names the notebook, the cell and its first line. A cell that is
busy computing is not a stall: it is bounded by the client's ordinary ``timeout`` (which
:func:`timeout_message` words the same way).

A kernel whose process is *stopped* (SIGSTOP or SIGTSTP, sent by a cell to its own kernel or by a process the
cell started) looks busy, never answers an interrupt, and would cost the cell timeout twice over (interrupt, then
kill). The watch reads the kernel's process state in ``/proc`` each second: stopped for ``STOPPED_AFTER`` seconds,
the cell fails at once with :class:`KernelStalled` saying so (:func:`stopped_message`). A cell that sleeps or
computes, or a process of the cell's that is itself stopped, is not that: only the kernel's own state counts.
Likewise a kernel that was interrupted (the grader's client interrupts a cell past its timeout, then kills it after
another) and, ``IDLE_AFTER_INTERRUPT`` seconds later, has neither answered nor used any CPU ignored the interrupt
while waiting on nothing (``signal.signal(SIGINT, SIG_IGN)`` then a sleep): it fails then, saying so. A cell that
ignores the interrupt while computing uses CPU and keeps its second timeout.

A kernel can also stay busy in the client's eyes and never say anything again: a cell that wrote bytes of its own
on the kernel's sockets (the hostile class 33m's forged reply lines on fds 0-63) broke the connections, so the
cell's reply and its idle status are lost, and the kernel sits idle. The watch sees a kernel busy with the cell
from which nothing has arrived for ``SILENT_AFTER`` seconds while its process tree computed nothing (under a tenth
of a core: threads waiting on the cell's lock wake now and then), and asks it, on a
fresh connection, for its kernel_info (:meth:`WatchdogMixin._silent`): answered on the shell channel, the kernel is
idle (a kernel still running the cell answers there only when it is done), so the stall rule above ends the cell;
answered only on the control channel, the kernel is alive and waiting honestly (a sleep, a subprocess) and the cell
goes on, bounded by its timeout; answered on neither, ``SILENT_PROBES`` times in a row, the cell fails
(:func:`silent_message`). A cell that computes, in the kernel or a process it started, is never asked.
"""

from __future__ import annotations

import asyncio
import os
import time

from nbclient.exceptions import CellTimeoutError, DeadKernelError

STALL_AFTER = 10.0  # seconds without a sign from the kernel before it is poked (a poke costs nothing)
STALL_TIMEOUT = 180.0  # seconds of stall before the cell fails (a lesson's whole budget is 3 minutes)
STOPPED_AFTER = 3.0  # seconds a kernel's process stays stopped before the cell fails (a SIGCONT may come sooner)
IDLE_AFTER_INTERRUPT = 5.0  # seconds without CPU or reply after an interrupt before the cell fails
SILENT_AFTER = 5.0  # seconds a busy kernel may send nothing and use no CPU before it is asked whether it still answers
PROBE_TIMEOUT = 5.0  # seconds a probe on a fresh connection waits for its answer
SILENT_PROBES = 2  # probes in a row that nothing answers before the cell fails
IDLE_CPU_SHARE = 0.1  # a process tree using less than this share of one core computes nothing (threads waiting on
# a lock the cell holds wake every few milliseconds: about 1% of a core, seen)


class KernelStalled(CellTimeoutError):
    """The kernel stopped answering a cell (idle while the client waited) and could not be woken."""


def first_line(source: str, width: int = 80) -> str:
    line = next((s.strip() for s in source.splitlines() if s.strip()), "")
    return line if len(line) <= width else line[: width - 3] + "..."


def cell_label(notebook: str, cell_index: int, source: str) -> str:
    """``lesson.ipynb, cell 24 (`explorer = viz.interactive(`)``: what a reader needs to find the cell."""
    where = f"{notebook}, " if notebook else ""
    return f"{where}cell {cell_index} (`{first_line(source)}`)"


def stall_message(notebook: str, cell_index: int, source: str, waited: float, wakes: int) -> str:
    return (
        f"{cell_label(notebook, cell_index, source)}: its kernel stopped answering: no reply for {waited:.0f} s "
        f"while the kernel was idle ({wakes} wake-up request(s) on a fresh connection did not help)"
    )


def stopped_message(notebook: str, cell_index: int, source: str, waited: float) -> str:
    return (
        f"{cell_label(notebook, cell_index, source)}: the kernel stopped itself: its process was stopped (as by "
        f"SIGSTOP or SIGTSTP, from the notebook's code) for {waited:.0f} s, so it could not answer"
    )


def idle_message(notebook: str, cell_index: int, source: str, waited: float) -> str:
    return (
        f"{cell_label(notebook, cell_index, source)}: it ignored the interrupt and used no CPU for {waited:.0f} s "
        "after it (waiting on nothing), so the kernel was stopped"
    )


def _stat(pid: int) -> tuple[str, str, int, int] | None:
    """(name, state, parent, CPU ticks used) of a process from ``/proc/<pid>/stat``, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    head, _, tail = text.rpartition(")")  # the name may hold spaces and parentheses: it ends at the last ")"
    fields = tail.split()
    try:
        return head.partition("(")[2], fields[0], int(fields[1]), int(fields[11]) + int(fields[12])
    except (IndexError, ValueError):
        return None


def kernel_pid(root: int) -> int | None:
    """The kernel's process under ``root`` (the process the kernel manager started): ``root`` itself, or, in the
    grader's sandbox, the first process below it that is not bubblewrap (bwrap starts the kernel a level or two
    down, as its init's child). None when there is none (yet)."""
    level = [root]
    for _ in range(6):
        children = []
        for pid in level:
            stat = _stat(pid)
            if stat is not None and stat[0] != "bwrap":
                return pid
            children += _children(pid)
        if not children:
            return None
        level = children
    return None


def _children(pid: int) -> list[int]:
    try:  # the kernel's own list (CONFIG_PROC_CHILDREN), else a scan of /proc
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except (OSError, ValueError):
        pass
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            stat = _stat(int(name))
            if stat is not None and stat[2] == pid:
                found.append(int(name))
    return found


def is_stopped(pid: int | None) -> bool:
    """Whether the process is stopped (state T, or t: stopped under a tracer)."""
    stat = _stat(pid) if pid else None
    return stat is not None and stat[1] in ("T", "t")


def silent_message(notebook: str, cell_index: int, source: str, waited: float) -> str:
    return (
        f"{cell_label(notebook, cell_index, source)}: its kernel stopped answering: nothing arrived from it for "
        f"{waited:.0f} s, its processes computed nothing, and it answered no request on a fresh connection"
    )


def tree_cpu(pid: int | None) -> int | None:
    """CPU ticks used by ``pid`` and every process below it (threads' children included), or None when it is
    gone. Children that ended and were waited for count in their parent's cutime/cstime."""
    if not pid or _stat(pid) is None:
        return None
    total, todo, seen = 0, [pid], set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            with open(f"/proc/{current}/stat", "rb") as f:
                fields = f.read().decode("utf-8", "replace").rpartition(")")[2].split()
            total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
        except (OSError, ValueError, IndexError):
            continue
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            tasks = []
        for task in tasks:
            try:
                with open(f"/proc/{current}/task/{task}/children") as f:
                    todo += [int(p) for p in f.read().split()]
            except (OSError, ValueError):
                pass
    return total


def timeout_message(notebook: str, cell_index: int, source: str, timeout: float) -> str:
    return f"{cell_label(notebook, cell_index, source)}: still running after {timeout:.0f} s (the cell timeout)"


class WatchdogMixin:
    """Mix into an nbclient ``NotebookClient`` subclass (before it in the bases)."""

    notebook_name: str = ""
    stall_after: float = STALL_AFTER
    stall_timeout: float = STALL_TIMEOUT
    stopped_after: float = STOPPED_AFTER
    idle_after_interrupt: float = IDLE_AFTER_INTERRUPT
    silent_after: float = SILENT_AFTER

    def watchdog_init(self, notebook_name: str = "", stall_after=None, stall_timeout=None) -> None:
        self.notebook_name = notebook_name
        if stall_after is not None:
            self.stall_after = float(stall_after)
        if stall_timeout is not None:
            self.stall_timeout = float(stall_timeout)
        self.wakes = 0  # kernels woken by a fresh connection, over the whole notebook
        self.unread_replies = 0  # replies found waiting unread in our own shell socket (see _read_waiting_reply)
        self.stalled_cells: list[int] = []  # cells that stalled at least once
        self._stall_error: KernelStalled | None = None

    # --- what the kernel said about the running cell ---

    def process_message(self, msg, cell, cell_index):
        state = msg.get("content", {}).get("execution_state") if msg.get("msg_type") == "status" else None
        self._heard = True
        self._heard_at = time.monotonic()
        if state == "idle":
            self._idle_at = time.monotonic()
        return super().process_message(msg, cell, cell_index)

    async def async_execute_cell(self, cell, cell_index, *args, **kwargs):
        if cell.cell_type != "code" or not cell.source.strip():
            return await super().async_execute_cell(cell, cell_index, *args, **kwargs)
        self._heard, self._idle_at, self._stall_error = False, None, None
        self._heard_at = time.monotonic()
        self.interrupted_at = None  # set by a client that interrupts a cell past its timeout (the grader's)
        watch = asyncio.ensure_future(self._watch(cell, cell_index, time.monotonic()))
        try:
            return await super().async_execute_cell(cell, cell_index, *args, **kwargs)
        except DeadKernelError:
            if self._stall_error is not None:  # we ended the wait (nbclient reports any cancel as a dead kernel)
                raise self._stall_error from None
            raise
        except CellTimeoutError as error:
            if isinstance(error, KernelStalled):
                raise
            timeout = self._get_timeout(cell) or 0
            raise CellTimeoutError(timeout_message(self.notebook_name, cell_index, cell.source, timeout)) from error
        finally:
            watch.cancel()

    def _stalled_since(self, sent: float) -> float | None:
        """When the current stall began, or None while the kernel is answering or computing."""
        if not self._heard:
            return sent  # the request has not been read (not even a 'busy')
        if self._idle_at is not None:
            return self._idle_at  # done, but the reply has not come
        return None  # busy: computing is not a stall

    def _kernel_stopped(self) -> bool:
        """Whether the kernel's process is stopped (see the module docstring)."""
        process = getattr(getattr(getattr(self, "km", None), "provisioner", None), "process", None)
        if process is None or getattr(process, "pid", None) is None:
            return False
        known = _stat(self._kernel_pid) if getattr(self, "_kernel_pid", None) else None
        if known is None or known[0] == "bwrap":  # not found yet, gone, or bwrap (the launcher's pid, once exec'd)
            self._kernel_pid = kernel_pid(process.pid)
        return is_stopped(self._kernel_pid)

    def _kernel_cpu(self) -> int | None:
        """CPU ticks the kernel's process has used (after :meth:`_kernel_stopped` found it), or None."""
        stat = _stat(self._kernel_pid) if getattr(self, "_kernel_pid", None) else None
        return stat[3] if stat is not None else None

    async def _watch(self, cell, cell_index: int, sent: float) -> None:
        wakes = 0
        stopped_at = None
        idle = None  # (since when, CPU ticks then) while an interrupted kernel uses no CPU
        quiet = {"since": time.monotonic(), "cpu": None, "unanswered": 0}  # a busy kernel that says nothing
        while True:
            await asyncio.sleep(min(1.0, self.stall_after / 4))
            stopped_at = (stopped_at or time.monotonic()) if self._kernel_stopped() else None
            if stopped_at is not None and time.monotonic() - stopped_at >= self.stopped_after:
                waited = time.monotonic() - stopped_at
                self._fail(stopped_message(self.notebook_name, cell_index, cell.source, waited))
                return
            if getattr(self, "interrupted_at", None) is not None:
                cpu = self._kernel_cpu()
                idle = idle if idle is not None and cpu is not None and cpu == idle[1] else (time.monotonic(), cpu)
                waited = time.monotonic() - max(idle[0], self.interrupted_at)
                if cpu is not None and waited >= self.idle_after_interrupt:
                    self._fail(idle_message(self.notebook_name, cell_index, cell.source, waited))
                    return
            since = self._stalled_since(sent)
            if since is None:
                if getattr(self, "interrupted_at", None) is None and await self._silent(cell, cell_index, quiet):
                    return
                continue
            waited = time.monotonic() - since
            if waited >= 1.0 and self._idle_at is not None:
                self._read_waiting_reply()
            if waited >= self.stall_timeout:
                self._stall_error = KernelStalled(
                    stall_message(self.notebook_name, cell_index, cell.source, waited, wakes)
                )
                if self.task_poll_for_reply is not None:
                    self.task_poll_for_reply.cancel()
                return
            if waited >= self.stall_after * (wakes + 1):
                if cell_index not in self.stalled_cells:
                    self.stalled_cells.append(cell_index)
                wakes += 1
                self.wakes += 1
                self.log.warning(
                    "%s: no answer for %.0f s while the kernel was idle; waking it",
                    cell_label(self.notebook_name, cell_index, cell.source),
                    waited,
                )
                await self._wake()

    async def _silent(self, cell, cell_index: int, quiet: dict) -> bool:
        """The rule for a kernel that is busy with the cell but silent (issue 33: a cell that wrote forged bytes
        on the kernel's own sockets, closed them, or froze its event loop): nothing has arrived for
        ``SILENT_AFTER`` seconds and its process tree computed nothing meanwhile (under ``IDLE_CPU_SHARE`` of a
        core). Then it is asked, on a fresh connection, for its kernel_info: on the shell channel, which a kernel
        still running the cell answers only
        when the cell is done, so an answer means the kernel is idle and the cell's reply was lost (the stall
        rule above takes it from there, as if the kernel had said idle); else on the control channel, which a
        kernel that is waiting honestly (a sleep, a subprocess) answers at once, and the cell goes on, bounded by
        its timeout. ``SILENT_PROBES`` probes in a row that neither channel answers fail the cell: True."""
        cpu = tree_cpu(getattr(self, "_kernel_pid", None))
        now = time.monotonic()
        if cpu is None or quiet["cpu"] is None or self._computing(cpu - quiet["cpu"], now - quiet["since"]):
            quiet.update(since=now, cpu=cpu)  # computing, or no process to measure: not silent
            return False
        start = max(quiet["since"], getattr(self, "_heard_at", quiet["since"]))
        if now - start < self.silent_after:
            return False
        if await self._answers("shell"):
            self._idle_at = time.monotonic()
            quiet["unanswered"] = 0
            return False
        later = tree_cpu(getattr(self, "_kernel_pid", None))
        moved = later is None or self._computing(later - quiet["cpu"], time.monotonic() - quiet["since"])
        if moved or getattr(self, "_heard_at", 0) > start:
            quiet.update(since=time.monotonic(), cpu=None, unanswered=0)  # it moved while we asked
            return False
        if await self._answers("control"):
            quiet.update(since=time.monotonic(), unanswered=0)  # alive, waiting on something: ask again later
            return False
        quiet["unanswered"] += 1
        if quiet["unanswered"] < SILENT_PROBES:
            return False
        waited = time.monotonic() - start
        self._fail(silent_message(self.notebook_name, cell_index, cell.source, waited))
        return True

    @staticmethod
    def _computing(ticks: int, seconds: float) -> bool:
        """Whether ``ticks`` of CPU over ``seconds`` is computing (more than ``IDLE_CPU_SHARE`` of a core)."""
        return ticks > max(2, IDLE_CPU_SHARE * seconds * os.sysconf("SC_CLK_TCK"))

    async def _answers(self, channel: str) -> bool:
        """Whether the kernel answers a kernel_info_request on ``channel`` ("shell" or "control") within
        ``PROBE_TIMEOUT`` seconds, on a connection of its own (a session of its own, see :meth:`_wake`)."""
        from jupyter_client.session import Session

        own = self.km.session
        kc = self.km.client(session=Session(key=own.key, signature_scheme=own.signature_scheme))
        kc.start_channels()
        try:
            if channel == "shell":
                await asyncio.wait_for(kc.kernel_info(reply=True, timeout=PROBE_TIMEOUT), PROBE_TIMEOUT + 1)
                return True
            request = kc.session.msg("kernel_info_request")
            kc.control_channel.send(request)
            deadline = time.monotonic() + PROBE_TIMEOUT
            while (left := deadline - time.monotonic()) > 0:
                reply = await asyncio.wait_for(kc.control_channel.get_msg(timeout=left), left + 1)
                if reply.get("parent_header", {}).get("msg_id") == request["header"]["msg_id"]:
                    return True
            return False
        except Exception:  # no answer in time (or a broken connection): the caller decides
            return False
        finally:
            kc.stop_channels()

    def _fail(self, message: str) -> None:
        """End the wait for the running cell: it fails with :class:`KernelStalled` saying ``message``."""
        self._stall_error = KernelStalled(message)
        if self.task_poll_for_reply is not None:
            self.task_poll_for_reply.cancel()

    def _read_waiting_reply(self) -> None:
        """Make nbclient read a reply that already sits in our shell socket.

        nbclient's output widgets send on the shell socket from the iopub loop. zmq tells a socket is
        readable by an edge, and a send can take the edge meant for a reply that arrives meanwhile: the
        reply then sits unread while nbclient waits for it (seen on this machine in about 1 of 20 explorer
        cells under load). Reading ``EVENTS`` makes pyzmq look again and hand the reply to the waiting read.
        """
        import zmq

        if self.kc.shell_channel.socket.get(zmq.EVENTS) & zmq.POLLIN:
            self.unread_replies += 1

    async def _wake(self) -> None:
        """A request on a fresh connection: what unsticks a kernel whose request sits unread."""
        from jupyter_client.session import Session

        # a session of its own: km.client() would share ours, and so our socket identity, and the kernel
        # would route the stuck cell's reply to this short-lived connection instead of ours
        own = self.km.session
        kc = self.km.client(session=Session(key=own.key, signature_scheme=own.signature_scheme))
        kc.start_channels()
        try:
            await asyncio.wait_for(kc.kernel_info(reply=True, timeout=5), 6)
        except Exception:  # noqa: S110 - the watch goes on and fails the cell if the kernel stays silent
            pass
        finally:
            kc.stop_channels()


def client_class():
    """nbclient's NotebookClient with the watchdog."""
    from nbclient import NotebookClient

    class WatchedClient(WatchdogMixin, NotebookClient):
        def __init__(self, nb, *, notebook_name: str = "", stall_after=None, stall_timeout=None, **kw):
            super().__init__(nb, **kw)
            self.watchdog_init(notebook_name, stall_after, stall_timeout)

    return WatchedClient


def execute(nb, *, notebook_name: str, path: str, timeout: int = 180, **kw):
    """Execute ``nb`` in place, as a student would (in ``path``); a stalled or overlong cell fails naming it."""
    client = client_class()(
        nb,
        notebook_name=notebook_name,
        timeout=timeout,
        stall_after=kw.pop("stall_after", STALL_AFTER),
        stall_timeout=kw.pop("stall_timeout", min(STALL_TIMEOUT, timeout)),
        kernel_name=kw.pop("kernel_name", "python3"),
        resources={"metadata": {"path": path}},
        **kw,
    )
    client.execute()
    return client


def wake_blocking(km, timeout: float = 2.0) -> bool:
    """:meth:`WatchdogMixin._wake` for a blocking kernel manager (nbval's): True if the kernel answered."""
    from jupyter_client.session import Session

    own = km.session
    kc = km.client(session=Session(key=own.key, signature_scheme=own.signature_scheme))
    kc.start_channels()
    try:
        kc.kernel_info(reply=True, timeout=timeout)
        return True
    except Exception:
        return False
    finally:
        kc.stop_channels()


def patch_nbval(stall_after: float = STALL_AFTER) -> None:
    """Make nbval wake a kernel that does not answer a cell (nbval waits on the reply with no watch).

    nbval's ``RunningKernel.await_reply`` blocks on the shell channel for the whole cell timeout. This waits
    in slices of ``stall_after`` seconds and, after each silent slice, sends the kernel a request on a
    fresh connection, which frees a request stuck in the socket; a busy kernel just answers it later.
    At nbval's cell timeout (``--nbval-cell-timeout``) the kernel is interrupted and the cell fails with
    a message saying so (nbval itself would pass a cell whose reply never came if the kernel went idle).
    """
    from queue import Empty

    from nbval.kernel import RunningKernel

    if getattr(RunningKernel.await_reply, "watched", False):
        return
    original = RunningKernel.await_reply

    def await_reply(self, msg_id, timeout=None):
        deadline = None if timeout is None else time.monotonic() + float(timeout)
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                self.interrupt()
                raise CellTimeoutError(
                    f"no reply from the kernel within {float(timeout):.0f} s (the cell timeout): the cell ran too "
                    "long, or its kernel stopped answering; the kernel was interrupted"
                )
            try:
                return original(self, msg_id, timeout=stall_after if left is None else min(stall_after, left))
            except Empty:
                wake_blocking(self.km)

    await_reply.watched = True
    RunningKernel.await_reply = await_reply
