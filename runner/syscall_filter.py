"""The seccomp filters, built with libseccomp (PyPI `pyseccomp`) and exported as BPF.

Two layers, because the template must still make each job's namespaces:
- `sandbox_bpf()` goes to `bwrap --seccomp` and binds every process in the sandbox:
  no user/PID/net/cgroup/UTS/time namespaces, no ptrace, process_vm_*, io_uring, bpf,
  perf_event_open, keyctl, kexec, module loading, new mount API, swap, reboot; no file
  watches (inotify, fanotify, fcntl F_NOTIFY); socket families from an allow-list only.
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
# the template makes a new PID namespace per job (unshare, never clone), and each job child
# its new mount + IPC namespaces; nothing else, ever
TEMPLATE_FORBIDDEN_NS = (CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWUSER, CLONE_NEWPID,
                         CLONE_NEWNET)
TEMPLATE_FORBIDDEN_UNSHARE = (CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWUSER, CLONE_NEWNET,
                              CLONE_NEWTIME)

DENIED_EVERYWHERE = (
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "pidfd_getfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "swapon", "swapoff", "reboot", "acct", "quotactl", "lookup_dcookie", "vhangup",
    "open_by_handle_at", "name_to_handle_at", "syslog", "pivot_root",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "iopl", "ioperm",
    # watching files is watching other members: the stdlib and torch are shared read-only,
    # so an inotify watch names every module a concurrent job on another slot imports
    "inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark",
)
DENIED_IN_JOBS = ("unshare", "setns", "mount", "umount2", "chroot")
F_NOTIFY = 1026  # fcntl's directory notifications (dnotify): the same watch as inotify
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
NETLINK_ROUTE = 0
# Socket families are an allow-list: a job's network namespace has only a loopback, so
# unix and IP sockets reach nothing outside it (gloo and torch.distributed on 127.0.0.1 keep
# working). AF_NETLINK is allowed for NETLINK_ROUTE only: glibc's getifaddrs() reads the
# interfaces through it, and gloo's TCP transport fails without it ("Address family not
# supported" from gloo/transport/tcp/device.cc); in the job's namespace it lists the
# loopback alone, and changing anything needs CAP_NET_ADMIN. Every other family (AF_VSOCK
# to the hypervisor, AF_PACKET, other netlink protocols, ...) is refused. socketpair() only
# ever needs unix sockets.
SOCKET_FAMILIES = (AF_UNIX, AF_INET, AF_INET6, AF_NETLINK)
SOCKETPAIR_FAMILIES = (AF_UNIX,)
AF_MAX = 46  # families the kernel knows today; everything from here up is refused too


def _seccomp() -> ModuleType | str:
    """The libseccomp bindings, or why they cannot load (a one-line reason).

    pyseccomp raises RuntimeError at import when libseccomp.so is missing, not ImportError,
    and an OSError where the library is too old for it."""
    try:
        import pyseccomp as seccomp
    except ImportError:
        try:
            import seccomp  # Debian's python3-seccomp, when run by the system python
        except ImportError:
            return "libseccomp bindings missing (pip install pyseccomp; needs libseccomp2)"
        except (RuntimeError, OSError) as exc:
            return f"libseccomp failed to load: {exc}"
    except (RuntimeError, OSError) as exc:
        return f"libseccomp failed to load: {exc} (apt-get install -y libseccomp2)"
    return seccomp


def available() -> str | None:
    """Why seccomp cannot be used here, or None when it can."""
    lib = _seccomp()
    if isinstance(lib, str):
        return lib
    try:
        _build(job=False)
    except Exception as exc:  # libseccomp.so too old for a rule
        return f"libseccomp failed: {exc}"
    return None


def _deny(flt: Any, lib: ModuleType, name: str, *args: Any) -> None:
    with contextlib.suppress(RuntimeError, ValueError, OSError):  # unknown on this arch
        flt.add_rule(lib.ERRNO(errno.EPERM), name, *args)


def _allow_only(flt: Any, lib: ModuleType, name: str, allowed: tuple[int, ...]) -> None:
    """Refuse `name` unless its first argument is one of `allowed` (EAFNOSUPPORT).

    A libseccomp rule cannot compare one argument twice, so each other value below AF_MAX
    gets its own rule, and one rule takes everything from AF_MAX up (the comparison is on
    all 64 bits, so a family with garbage in its upper half is refused as well)."""
    refuse = lib.ERRNO(errno.EAFNOSUPPORT)
    for family in range(AF_MAX):
        if family not in allowed:
            flt.add_rule(refuse, name, lib.Arg(0, lib.EQ, family))
    flt.add_rule(refuse, name, lib.Arg(0, lib.GE, AF_MAX))


def _build(job: bool) -> bytes:
    lib = _seccomp()
    if isinstance(lib, str):
        raise RuntimeError(lib)
    flt = lib.SyscallFilter(lib.ALLOW)
    for name in DENIED_EVERYWHERE:
        _deny(flt, lib, name)
    flt.add_rule(lib.ERRNO(errno.ENOSYS), "clone3")
    _deny(flt, lib, "fcntl", lib.Arg(1, lib.EQ, F_NOTIFY))
    _allow_only(flt, lib, "socket", SOCKET_FAMILIES)
    flt.add_rule(lib.ERRNO(errno.EAFNOSUPPORT), "socket", lib.Arg(0, lib.EQ, AF_NETLINK),
                 lib.Arg(2, lib.NE, NETLINK_ROUTE))
    _allow_only(flt, lib, "socketpair", SOCKETPAIR_FAMILIES)
    for flag in ALL_NS if job else TEMPLATE_FORBIDDEN_NS:
        _deny(flt, lib, "clone", lib.Arg(0, lib.MASKED_EQ, flag, flag))
    if job:
        for name in DENIED_IN_JOBS:
            _deny(flt, lib, name)
    else:
        for flag in TEMPLATE_FORBIDDEN_UNSHARE:
            _deny(flt, lib, "unshare", lib.Arg(0, lib.MASKED_EQ, flag, flag))
        # the template returns to its own PID namespace after each job's fork; no other
        # setns (its second argument names the namespace type, 0 would accept any)
        _deny(flt, lib, "setns", lib.Arg(1, lib.NE, CLONE_NEWPID))
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
