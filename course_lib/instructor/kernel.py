"""The kernel a submission runs in, and the client that drives it.

The kernel is started through :func:`course_lib.instructor.sandbox.kernel_command` (bubblewrap plus
limits) and reached over Unix sockets in a folder of its own; messages over ``MAX_MESSAGE_BYTES`` are
refused by the socket rather than read into the grader's memory. The client is nbclient's, with the
output cap enforced as output streams, timeouts that escalate from interrupt to kill within the
notebook's total budget, and a note of the cells whose output never arrived.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time

from course_lib.instructor import sandbox

MAX_MESSAGE_BYTES = 64_000_000  # one message from the kernel (its output is capped at MAX_OUTPUT_BYTES anyway)
CONTROL_SEND_MS = 2000  # how long a message to the kernel's control channel (interrupt, shutdown) may wait to go


class KernelExited(Exception):
    """A cell ran exit() or quit(): ipykernel stops its loop 0.1 s later, so the cells sent meanwhile would run
    or not by timing; the client stops at that cell instead."""

    def __init__(self, cell_index: int):
        super().__init__(f"cell {cell_index} ended Python")
        self.cell_index = cell_index


def _client_class():
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError

    from course_lib.instructor.watchdog import WatchdogMixin

    class GuardedClient(WatchdogMixin, NotebookClient):
        """nbclient with an output cap enforced as output streams, a cap on widget messages, interrupt-then-kill
        on timeouts, and the watchdog: a kernel that stops answering (idle while we wait) is woken by a request
        on a fresh connection, else the cell fails with ``watchdog.KernelStalled`` naming it."""

        def __init__(
            self,
            nb,
            *,
            deadline: float,
            max_output_bytes: int,
            max_widget_bytes: int,
            on_ready=None,
            notebook_name: str = "",
            stall_after=None,
            stall_timeout=None,
            **kw,
        ):
            super().__init__(nb, **kw)
            self.watchdog_init(notebook_name, stall_after, stall_timeout)
            self.deadline = deadline
            self.max_output_bytes = max_output_bytes
            self.output_bytes = 0
            self.dropped = False
            self.max_widget_bytes = max_widget_bytes
            self.widget_bytes = 0  # comm (widget) messages: nbclient keeps widget state, so they are capped too
            self.widgets_dropped = 0
            self.on_ready = on_ready
            self.interrupted_cells: list[int] = []
            self.killed = ""
            self.timeout_func = self._timeout_for
            self.cell_index = -1
            self.silent_cells: list[int] = []  # cells whose output never arrived
            self.log = _OutputWatch(self, self.log)
            self.on_cell_executed = self._note_exit
            self.exited = False

        def _note_exit(self, cell, cell_index, execute_reply):
            payloads = (execute_reply or {}).get("content", {}).get("payload") or []
            self.exited = any(p.get("source") == "ask_exit" and not p.get("keepkernel") for p in payloads)

        def _timeout_for(self, cell):
            return max(1, min(self.timeout, int(self.deadline - time.monotonic())))

        async def async_execute_cell(self, cell, cell_index, *args, **kw):
            self.cell_index = cell_index
            cell = await super().async_execute_cell(cell, cell_index, *args, **kw)
            if self.exited:
                raise KernelExited(cell_index)
            return cell

        def output_lost(self):
            # nbclient waited iopub_timeout for this cell's output and went on: typically one message over
            # MAX_MESSAGE_BYTES dropped the output channel for good. Later cells need not wait as long.
            self.silent_cells.append(self.cell_index)
            self.iopub_timeout = 1

        async def async_start_new_kernel_client(self):
            kc = await super().async_start_new_kernel_client()
            if self.on_ready is not None:
                self.on_ready()
            return kc

        def handle_comm_msg(self, outs, msg, cell_index):
            content = msg.get("content", {})
            self.widget_bytes += len(json.dumps(content, default=str)) + sum(len(b) for b in msg.get("buffers") or [])
            if self.widget_bytes > self.max_widget_bytes:
                self.widgets_dropped += 1  # neither stored nor handled
                return None
            return super().handle_comm_msg(outs, msg, cell_index)

        def _update_display_id(self, display_id, msg):
            # an update rewrites every output shown under that id: counted against the output cap like new output
            shown_at = self._display_id_map.get(display_id, {})
            copies = sum(len(outputs) for outputs in shown_at.values())
            self.output_bytes += copies * len(json.dumps(msg.get("content", {}), default=str))
            if self.output_bytes > self.max_output_bytes:
                self.dropped = True
                return None
            return super()._update_display_id(display_id, msg)

        def output(self, outs, msg, display_id, cell_index):
            self.output_bytes += len(json.dumps(msg.get("content", {}), default=str))
            if self.output_bytes > self.max_output_bytes:
                self.dropped = True
                return None
            return super().output(outs, msg, display_id, cell_index)

        async def _async_handle_timeout(self, timeout, cell=None):
            index = self.nb.cells.index(cell) if cell in self.nb.cells else -1
            if index in self.interrupted_cells or time.monotonic() >= self.deadline:
                # it ignored the interrupt, or the notebook's budget is spent: kill the kernel
                why = "ignored the interrupt" if index in self.interrupted_cells else "used up the notebook's budget"
                self.killed = f"cell {index} {why}"
                await self.km.shutdown_kernel(now=True)
                raise CellTimeoutError.error_from_timeout_and_cell("killed", timeout, cell)
            self.interrupted_cells.append(index)
            await self.km.interrupt_kernel()
            self.interrupted_at = time.monotonic()  # the watch ends a kernel that then idles without answering
            return None

    return GuardedClient


class _OutputWatch(logging.LoggerAdapter):
    """nbclient's logger, which tells the client when a cell's output stopped arriving (it only logs that)."""

    def __init__(self, client, logger):
        super().__init__(logger, {})
        self.client = client

    def warning(self, msg, *args, **kwargs):
        if "Timeout waiting for IOPub output" in str(msg):
            self.client.output_lost()
        else:
            super().warning(msg, *args, **kwargs)


def kernel_argv(connection_file: str) -> list[str]:
    """The kernel itself (the tests put a kernel that stops answering here)."""
    return [sys.executable, "-m", "ipykernel_launcher", "-f", connection_file]


def _kernel_manager(box: sandbox.Box, limits: sandbox.Limits, cgroup: str | None):
    from jupyter_client.manager import AsyncKernelManager

    conn = box.conn

    class SandboxedKernelManager(AsyncKernelManager):
        def format_kernel_cmd(self, extra_arguments=None):
            argv = kernel_argv(self.connection_file)
            if box.uid is not None:  # the connection file (written just now) is readable to the kernel's uid
                os.chown(self.connection_file, 0, box.uid)
                os.chmod(self.connection_file, 0o640)
            return sandbox.kernel_command(argv, box, limits, cgroup)

        exit_code = None  # how the kernel's process ended, when we saw it end

        async def _async_is_alive(self):  # what the client asks (kc.is_alive calls it)
            alive = await super()._async_is_alive()
            process = getattr(self.provisioner, "process", None)
            if not alive and process is not None and self.exit_code is None:
                self.exit_code = process.poll()
            return alive

        is_alive = _async_is_alive

        def _connect_control_socket(self):
            # a send that no peer takes (a kernel whose connections a cell broke, issue 33) must not block the
            # grader's event loop, and with it the watchdog, for ever: it gives up after CONTROL_SEND_MS
            import zmq

            super()._connect_control_socket()
            self._control_socket.setsockopt(zmq.SNDTIMEO, CONTROL_SEND_MS)

        async def _async_interrupt_kernel(self):
            import zmq

            try:
                await super()._async_interrupt_kernel()
            except zmq.Again:  # the kernel takes no message: the watchdog ends the cell (an idle kernel)
                self.log.warning("the interrupt could not be sent: the kernel takes no message on its control channel")

        interrupt_kernel = _async_interrupt_kernel

        async def _async_request_shutdown(self, restart=False):
            import zmq

            try:
                await super()._async_request_shutdown(restart=restart)
            except zmq.Again:  # it is killed next anyway
                self.log.warning("the shutdown request could not be sent: the kernel takes no message")

        request_shutdown = _async_request_shutdown

        def client(self, **kwargs):
            # a message bigger than this drops the connection instead of being read into our memory
            # (one print of 1 GB): set on the client's context before its sockets exist
            import zmq

            kc = super().client(**kwargs)
            kc.context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
            return kc

    from jupyter_client.kernelspec import KernelSpec

    km = SandboxedKernelManager(transport="ipc", ip=str(conn / "kernel"))
    km.connection_file = str(conn / "kernel.json")
    # our own spec: the grader's Python, and interrupts as messages (a signal would stop bwrap, not the kernel)
    km._kernel_spec = KernelSpec(
        argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        display_name="course-lib sandbox",
        language="python",
        interrupt_mode="message",
    )
    return km
