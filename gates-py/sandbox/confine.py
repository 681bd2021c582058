"""Limits the sandboxed interpreter puts on itself before any generated code runs.

bwrap has already given this process its own mount, pid, network, ipc and uts namespaces, an
unprivileged uid and no capabilities. This module adds the per-process resource limits and a seccomp
filter. Both are one-way: without CAP_SYS_RESOURCE a hard rlimit cannot be raised again, and a
seccomp filter cannot be removed, so the generated code that runs afterwards in this same process is
bound by them whatever it does (ctypes included).
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import socket
from dataclasses import dataclass


class SeccompUnavailable(RuntimeError):
    """The seccomp filter could not be installed; generated code must not run without it."""


@dataclass(frozen=True)
class Limits:
    cpu_seconds: int
    memory_bytes: int
    # Processes are already forbidden by seccomp; this caps threads, and is the fork-bomb backstop
    # should the filter ever be missing. It counts per real uid (per user namespace), which is why
    # each run has a uid of its own, neither the worker's nor another run's (sandbox-bwrap.ts).
    max_tasks: int = 32
    max_file_bytes: int = 64 * 1024 * 1024
    max_open_files: int = 256


def apply_rlimits(limits: Limits) -> None:
    hard = {
        # No core files: a dump of this process would hold the user's health data.
        resource.RLIMIT_CORE: 0,
        # Address space, so an allocation past the budget fails with MemoryError instead of the
        # kernel's OOM killer picking a victim on the host.
        resource.RLIMIT_AS: limits.memory_bytes,
        resource.RLIMIT_NPROC: limits.max_tasks,
        # Python ignores SIGXFSZ, so an oversized write fails with EFBIG.
        resource.RLIMIT_FSIZE: limits.max_file_bytes,
        resource.RLIMIT_NOFILE: limits.max_open_files,
        resource.RLIMIT_MEMLOCK: 0,
        resource.RLIMIT_MSGQUEUE: 0,
    }
    for which, value in hard.items():
        resource.setrlimit(which, (value, value))
    # SIGXCPU at the soft limit ends the process (its default action) and tells the caller why;
    # the hard limit one second later is SIGKILL for code that ignores SIGXCPU.
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))


# libseccomp constants (seccomp.h, stable ABI since 2.4).
_ACT_ALLOW = 0x7FFF0000
_ACT_KILL_PROCESS = 0x80000000
_CMP_NE = 1
_CMP_MASKED_EQ = 7
_ATTR_TSYNC = 4
_CLONE_THREAD = 0x00010000


def _act_errno(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    _fields_ = [
        ('arg', ctypes.c_uint),
        ('op', ctypes.c_int),
        ('datum_a', ctypes.c_uint64),
        ('datum_b', ctypes.c_uint64),
    ]


# Syscalls that end the process on sight. The point is not to enumerate every danger (the
# namespaces, the uid and the missing capabilities already deny most of them) but to make the
# obvious escapes fail loudly: the process dies with SIGSYS and the caller reports "forbidden".
_KILLED_SYSCALLS = (
    # running other programs or more processes
    'fork',
    'vfork',
    'execve',
    'execveat',
    # namespaces and mounts
    'unshare',
    'setns',
    'mount',
    'umount2',
    'pivot_root',
    'chroot',
    'open_tree',
    'move_mount',
    'fsopen',
    'fsconfig',
    'fsmount',
    'fspick',
    'mount_setattr',
    # reaching into other processes or the kernel
    'ptrace',
    'process_vm_readv',
    'process_vm_writev',
    'pidfd_getfd',
    'perf_event_open',
    'bpf',
    'userfaultfd',
    'io_uring_setup',
    'io_uring_enter',
    'io_uring_register',
    'keyctl',
    'add_key',
    'request_key',
    'kexec_load',
    'kexec_file_load',
    'init_module',
    'finit_module',
    'delete_module',
    'reboot',
    'swapon',
    'swapoff',
    'acct',
    'syslog',
    # signalling by thread id or process fd (the code has nothing else to signal; see below)
    'tkill',
    'pidfd_open',
    'pidfd_send_signal',
)
# Signals may go to this process only. The pid namespace holds nothing else but bwrap's init, and
# that init, unlike this process, is under neither the rlimits nor this filter.
_SELF_SIGNAL_SYSCALLS = ('kill', 'tgkill', 'rt_sigqueueinfo', 'rt_tgsigqueueinfo')


_libseccomp: ctypes.CDLL | None = None


def load_libseccomp() -> ctypes.CDLL:
    """libseccomp through ctypes, loaded once per process (the fork server loads it for all its children)."""
    global _libseccomp
    if _libseccomp is None:
        _libseccomp = _load_libseccomp()
    return _libseccomp


def _load_libseccomp() -> ctypes.CDLL:
    try:
        lib = ctypes.CDLL('libseccomp.so.2', use_errno=True)
    except OSError as exc:
        raise SeccompUnavailable(f'libseccomp.so.2 cannot be loaded: {exc}') from exc
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    # The array form, because ctypes cannot pass structs through seccomp_rule_add's varargs.
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    ]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    return lib


def install_seccomp_filter() -> None:
    lib = load_libseccomp()
    ctx = lib.seccomp_init(_ACT_ALLOW)
    if not ctx:
        raise SeccompUnavailable('seccomp_init failed')

    def rule(action: int, name: str, *conditions: _ArgCmp) -> None:
        number = lib.seccomp_syscall_resolve_name(name.encode())
        if number < 0:  # not a syscall on this architecture (e.g. fork on aarch64)
            return
        array = (_ArgCmp * len(conditions))(*conditions) if conditions else None
        rc = lib.seccomp_rule_add_array(ctx, action, number, len(conditions), array)
        if rc != 0:
            raise SeccompUnavailable(f'seccomp rule for {name} failed ({rc})')

    try:
        # Every thread, not only this one: a library thread must not be a way around the filter.
        if lib.seccomp_attr_set(ctx, _ATTR_TSYNC, 1) != 0:
            raise SeccompUnavailable('seccomp thread synchronisation is not supported')
        for name in _KILLED_SYSCALLS:
            rule(_ACT_KILL_PROCESS, name)
        # Threads are clone(CLONE_THREAD); any other clone is a new process.
        rule(_ACT_KILL_PROCESS, 'clone', _ArgCmp(0, _CMP_MASKED_EQ, _CLONE_THREAD, 0))
        # clone3 takes its flags in memory a filter cannot read: "not implemented" makes glibc
        # fall back to clone, which the rule above judges.
        rule(_act_errno(errno.ENOSYS), 'clone3')
        for name in _SELF_SIGNAL_SYSCALLS:
            rule(_ACT_KILL_PROCESS, name, _ArgCmp(0, _CMP_NE, os.getpid(), 0))
        # The network namespace is empty already; any socket but a local pipe is an attempt.
        rule(_ACT_KILL_PROCESS, 'socket', _ArgCmp(0, _CMP_NE, socket.AF_UNIX, 0))
        rc = lib.seccomp_load(ctx)
        if rc != 0:
            raise SeccompUnavailable(f'seccomp_load failed ({rc})')
    finally:
        lib.seccomp_release(ctx)
