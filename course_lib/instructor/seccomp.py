"""The seccomp filter the sandbox hands to bubblewrap (``bwrap --seccomp FD``).

System calls a notebook never needs and that widen the Linux kernel a submission can reach (Docker's
default profile refuses them too) fail with EPERM: mounts, ptrace, bpf, perf events, io_uring, userfaultfd,
keyrings, new namespaces, modules, clocks. Another architecture's calls (i386 on x86_64) kill the process.
The numbers are the kernel's own unistd tables: x86_64's, and the generic one that arm64 uses.
"""

from __future__ import annotations

import os
import struct

# fmt: off
DENIED_SYSCALLS = {
    "x86_64": dict(
        ptrace=101, mount=165, umount2=166, pivot_root=155, swapon=167, swapoff=168, reboot=169, sethostname=170,
        setdomainname=171, init_module=175, delete_module=176, finit_module=313, kexec_load=246,
        kexec_file_load=320, acct=163, quotactl=179, bpf=321, perf_event_open=298, userfaultfd=323, keyctl=250,
        add_key=248, request_key=249, unshare=272, setns=308, open_by_handle_at=304, name_to_handle_at=303,
        process_vm_readv=310, process_vm_writev=311, io_uring_setup=425, io_uring_enter=426,
        io_uring_register=427, open_tree=428, move_mount=429, fsopen=430, fsconfig=431, fsmount=432, fspick=433,
        mount_setattr=442, syslog=103, vhangup=153, clock_settime=227, settimeofday=164, adjtimex=159,
        clock_adjtime=305, iopl=172, ioperm=173, lookup_dcookie=212,
    ),
    "aarch64": dict(
        ptrace=117, mount=40, umount2=39, pivot_root=41, swapon=224, swapoff=225, reboot=142, sethostname=161,
        setdomainname=162, init_module=105, delete_module=106, finit_module=273, kexec_load=104,
        kexec_file_load=294, acct=89, quotactl=60, bpf=280, perf_event_open=241, userfaultfd=282, keyctl=219,
        add_key=217, request_key=218, unshare=97, setns=268, open_by_handle_at=265, name_to_handle_at=264,
        process_vm_readv=270, process_vm_writev=271, io_uring_setup=425, io_uring_enter=426,
        io_uring_register=427, open_tree=428, move_mount=429, fsopen=430, fsconfig=431, fsmount=432, fspick=433,
        mount_setattr=442, syslog=116, vhangup=58, clock_settime=112, settimeofday=170, adjtimex=171,
        clock_adjtime=266, lookup_dcookie=18,
    ),
}
# fmt: on
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
SECCOMP_FD = "{seccomp-fd}"  # in the bwrap command; the launcher puts the filter's file descriptor there


def seccomp_filter(machine: str | None = None) -> bytes | None:
    """A classic-BPF seccomp program: another architecture's calls kill the process, the calls in
    :data:`DENIED_SYSCALLS` fail with EPERM, the rest are allowed. None on an architecture we have no table
    for (the sandbox then goes without, and says so)."""
    machine = machine or os.uname().machine
    if machine not in DENIED_SYSCALLS:
        return None
    load, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_JMP|JGE|K, BPF_RET|K
    allow, eperm, kill = 0x7FFF0000, 0x00050000 | 1, 0x80000000
    # seccomp_data: the call's number at offset 0, the architecture at offset 4
    program = [(load, 0, 0, 4), (jeq, 1, 0, AUDIT_ARCH[machine]), (ret, 0, 0, kill), (load, 0, 0, 0)]
    if machine == "x86_64":  # the x32 ABI's numbers (bit 30) are a second way in: refused
        program += [(jge, 0, 1, 0x40000000), (ret, 0, 0, eperm)]
    for number in sorted(DENIED_SYSCALLS[machine].values()):
        program += [(jeq, 0, 1, number), (ret, 0, 0, eperm)]
    program.append((ret, 0, 0, allow))
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in program)
