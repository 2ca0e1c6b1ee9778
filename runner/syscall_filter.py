"""The seccomp filters, built with libseccomp (PyPI `pyseccomp`) and exported as BPF.

Two layers, because the template must still make each job's namespaces:
- `sandbox_bpf()` goes to `bwrap --seccomp` and binds every process in the sandbox:
  no user/PID/net/cgroup/UTS/time namespaces, no ptrace, process_vm_*, io_uring, bpf,
  perf_event_open, keyctl, kexec, module loading, new mount API, swap, reboot.
- `job_bpf()` is stacked by each job child just before the snippet runs: additionally no
  namespaces at all (`unshare`, `setns`, `clone` with namespace flags), no `mount`,
  `umount`, `pivot_root`, `chroot`. `clone3` answers ENOSYS so libc falls back to `clone`,
  whose flags a filter can read.
"""

from __future__ import annotations

import contextlib
import errno
import tempfile
from functools import lru_cache
from types import ModuleType
from typing import Any

CLONE_NEWTIME = 0x00000080
CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
ALL_NS = (CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER,
          CLONE_NEWPID, CLONE_NEWNET)
# the template makes a new mount + IPC namespace per job; nothing else, ever
TEMPLATE_FORBIDDEN_NS = (CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWUSER, CLONE_NEWPID,
                         CLONE_NEWNET)

DENIED_EVERYWHERE = (
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "pidfd_getfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "swapon", "swapoff", "reboot", "acct", "quotactl", "lookup_dcookie", "vhangup",
    "open_by_handle_at", "name_to_handle_at", "syslog", "setns", "pivot_root",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "iopl", "ioperm",
)
DENIED_IN_JOBS = ("unshare", "mount", "umount2", "chroot")


def _seccomp() -> ModuleType | None:
    try:
        import pyseccomp as seccomp
    except ImportError:
        try:
            import seccomp  # Debian's python3-seccomp, when run by the system python
        except ImportError:
            return None
    return seccomp


def available() -> str | None:
    """Why seccomp cannot be used here, or None when it can."""
    lib = _seccomp()
    if lib is None:
        return "libseccomp bindings missing (pip install pyseccomp; needs libseccomp2)"
    try:
        _build(job=False)
    except Exception as exc:  # libseccomp.so missing or too old
        return f"libseccomp failed: {exc}"
    return None


def _deny(flt: Any, lib: ModuleType, name: str, *args: Any) -> None:
    with contextlib.suppress(RuntimeError, ValueError, OSError):  # unknown on this arch
        flt.add_rule(lib.ERRNO(errno.EPERM), name, *args)


def _build(job: bool) -> bytes:
    lib = _seccomp()
    assert lib is not None
    flt = lib.SyscallFilter(lib.ALLOW)
    for name in DENIED_EVERYWHERE:
        _deny(flt, lib, name)
    flt.add_rule(lib.ERRNO(errno.ENOSYS), "clone3")
    for flag in ALL_NS if job else TEMPLATE_FORBIDDEN_NS:
        _deny(flt, lib, "clone", lib.Arg(0, lib.MASKED_EQ, flag, flag))
    if job:
        for name in DENIED_IN_JOBS:
            _deny(flt, lib, name)
    else:
        for flag in (*TEMPLATE_FORBIDDEN_NS, CLONE_NEWTIME):
            _deny(flt, lib, "unshare", lib.Arg(0, lib.MASKED_EQ, flag, flag))
    with tempfile.TemporaryFile() as out:
        flt.export_bpf(out)
        out.seek(0)
        return out.read()


@lru_cache
def sandbox_bpf() -> bytes:
    return _build(job=False)


@lru_cache
def job_bpf() -> bytes:
    return _build(job=True)
