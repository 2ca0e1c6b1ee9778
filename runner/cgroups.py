"""Kernel-enforced memory and process limits for jobs, through cgroups (v2 or v1).

Why cgroups: rlimits and a PSS watchdog do not see shmem, memfd or tmpfs pages, and an
address-space cap turns a failed thread creation into a wrong verdict. A memory cgroup
charges every page a job makes, a pids cgroup counts its processes and threads, and both
keep counters (`oom_kill`, `max`) that say what really stopped a job.

Layout: `<the worker's own cgroup>/torchdrill-<instance>/slot<N>`, so two runner instances
on one host never count against each other, and the worker stays inside whatever limits
its own cgroup has (systemd `Delegate=yes`, Docker with `--cgroupns`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
KILL_ROUNDS = 200  # SIGKILL sweeps before giving up on a job cgroup that keeps refilling


@dataclass(frozen=True)
class Mechanism:
    """Where the per-job cgroups live: v2 (one directory) or v1 (memory + pids)."""

    version: int
    memory: Path  # the instance directory in the memory (or unified) hierarchy
    pids: Path
    swap_accounted: bool

    def describe(self) -> str:
        if self.version == 2:
            return f"cgroup v2 (memory.max, swap off, pids.max) under {self.memory.parent}"
        swap = " + memory.memsw" if self.swap_accounted else " (no swap accounting)"
        return (f"cgroup v1: memory.limit_in_bytes{swap} under {self.memory.parent}, "
                f"pids.max under {self.pids.parent}")


def _own_paths() -> dict[str, str]:
    """The worker's cgroup in each hierarchy, from /proc/self/cgroup ('' key = v2)."""
    paths: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for name in controllers.split(",") if controllers else [""]:
                paths[name] = path
    return paths


def _unified_root() -> Path | None:
    if (ROOT / "cgroup.controllers").exists():
        return ROOT
    if (ROOT / "unified" / "cgroup.controllers").exists():
        return ROOT / "unified"
    return None


def _writable_dir(path: Path) -> bool:
    probe = path / f"torchdrill-probe-{os.getpid()}"
    try:
        probe.mkdir()
    except OSError:
        return False
    with contextlib.suppress(OSError):
        probe.rmdir()
    return True


def _v2(instance: str) -> Mechanism | None:
    root = _unified_root()
    own = _own_paths().get("")
    if root is None or own is None:
        return None
    base = root / own.lstrip("/")
    try:
        available = (base / "cgroup.controllers").read_text().split()
    except OSError:
        return None
    if not {"memory", "pids"} <= set(available) or not _writable_dir(base):
        return None
    try:  # controllers must be enabled for our children (fails if delegation is incomplete)
        (base / "cgroup.subtree_control").write_text("+memory +pids")
    except OSError:
        return None
    top = base / f"torchdrill-{instance}"
    return Mechanism(2, top, top, swap_accounted=True)


def _v1(instance: str) -> Mechanism | None:
    own = _own_paths()
    mem_root, pids_root = ROOT / "memory", ROOT / "pids"
    if "memory" not in own or "pids" not in own:
        return None
    mem = mem_root / own["memory"].lstrip("/")
    pids = pids_root / own["pids"].lstrip("/")
    if not (mem / "memory.limit_in_bytes").exists() and mem != mem_root:
        return None
    if not _writable_dir(mem) or not _writable_dir(pids):
        return None
    swap = (mem / "memory.memsw.limit_in_bytes").exists() or \
        (mem_root / "memory.memsw.limit_in_bytes").exists()
    name = f"torchdrill-{instance}"
    return Mechanism(1, mem / name, pids / name, swap_accounted=swap)


def detect(instance: str) -> Mechanism | None:
    """v2 where it is delegated to us, else v1 where writable, else None (no kernel limits)."""
    return _v2(instance) or _v1(instance)


def _write(path: Path, value: str) -> None:
    path.write_text(value)


def _read_int(path: Path, key: str | None = None) -> int:
    """A plain number file, or one `key value` line of a flat-keyed file; 0 if absent."""
    try:
        text = path.read_text()
    except OSError:
        return 0
    if key is None:
        return int(text.split()[0]) if text.strip() and text.split()[0].isdigit() else 0
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


def _procs(directory: Path) -> list[int]:
    try:
        return [int(p) for p in (directory / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _remove_tree(directory: Path) -> None:
    if not directory.is_dir():
        return
    for child in sorted((p for p in directory.iterdir() if p.is_dir()), reverse=True):
        _remove_tree(child)
    for _ in range(50):
        kill_all(directory)
        try:
            directory.rmdir()
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                return
            time.sleep(0.01)


def kill_all(directory: Path) -> bool:
    """SIGKILL every process in a cgroup until it is empty; True when it is."""
    kill_file = directory / "cgroup.kill"
    if kill_file.exists():
        with contextlib.suppress(OSError):
            _write(kill_file, "1")
    for _ in range(KILL_ROUNDS):
        pids = _procs(directory)
        if not pids:
            return True
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.001)
    return not _procs(directory)


@dataclass
class Counters:
    oom_kills: int
    pids_max_hits: int


class JobCgroup:
    """The cgroup(s) of one job: fresh per job, so no charge of an earlier job (a SysV
    segment whose namespace is still being torn down, say) counts against the next."""

    def __init__(self, mechanism: Mechanism, name: str) -> None:
        self.mechanism = mechanism
        self.memory = mechanism.memory / name
        self.pids = mechanism.pids / name

    def create(self) -> None:
        for top in {self.mechanism.memory, self.mechanism.pids}:
            top.mkdir(exist_ok=True)
        if self.mechanism.version == 2:
            with contextlib.suppress(OSError):
                _write(self.mechanism.memory / "cgroup.subtree_control", "+memory +pids")
        for directory in {self.memory, self.pids}:
            if directory.exists():
                _remove_tree(directory)  # a crashed instance of the same name left it
            directory.mkdir()

    def set_limits(self, memory_mb: int, max_procs: int) -> None:
        limit = str(memory_mb * 1024 * 1024)
        if self.mechanism.version == 2:
            _write(self.memory / "memory.max", limit)
            with contextlib.suppress(OSError):
                _write(self.memory / "memory.swap.max", "0")
            with contextlib.suppress(OSError):
                _write(self.memory / "memory.oom.group", "1")  # an OOM kills the whole job
        else:
            memsw = self.memory / "memory.memsw.limit_in_bytes"
            # memsw must stay >= the memory limit: raise it first, then lower both in order
            with contextlib.suppress(OSError):
                _write(memsw, "-1")
            _write(self.memory / "memory.limit_in_bytes", limit)
            with contextlib.suppress(OSError):
                _write(memsw, limit)
            with contextlib.suppress(OSError):
                _write(self.memory / "memory.swappiness", "0")
        _write(self.pids / "pids.max", str(max_procs))

    def add(self, pid: int) -> None:
        for directory in {self.memory, self.pids}:
            _write(directory / "cgroup.procs", str(pid))

    def counters(self) -> Counters:
        if self.mechanism.version == 2:
            oom = _read_int(self.memory / "memory.events", "oom_kill")
        else:
            oom = _read_int(self.memory / "memory.oom_control", "oom_kill")
        return Counters(oom, _read_int(self.pids / "pids.events", "max"))

    def reset_peak(self) -> None:
        name = "memory.peak" if self.mechanism.version == 2 else "memory.max_usage_in_bytes"
        with contextlib.suppress(OSError):
            _write(self.memory / name, "0")

    def peak_bytes(self) -> int:
        if self.mechanism.version == 2:
            return _read_int(self.memory / "memory.peak")
        return _read_int(self.memory / "memory.max_usage_in_bytes")

    def oom_eventfd(self) -> int | None:
        """v1 only: an eventfd the kernel signals when the job hits its memory limit."""
        if self.mechanism.version != 1:
            return None
        efd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        control = os.open(self.memory / "memory.oom_control", os.O_RDONLY | os.O_CLOEXEC)
        try:
            _write(self.memory / "cgroup.event_control", f"{efd} {control}")
        except OSError:
            os.close(efd)
            return None
        finally:
            os.close(control)
        return efd

    def kill_all(self) -> bool:
        return all(kill_all(d) for d in {self.memory, self.pids})

    def members(self) -> list[int]:
        return sorted(set(_procs(self.memory)) | set(_procs(self.pids)))

    def remove(self) -> None:
        for directory in {self.memory, self.pids}:
            _remove_tree(directory)


def remove_instance(mechanism: Mechanism) -> None:
    for top in {mechanism.memory, mechanism.pids}:
        _remove_tree(top)


def sweep_stale(mechanism: Mechanism) -> None:
    """Remove subtrees of default-named instances (`torchdrill-<pid>-...`) whose worker is
    gone: a killed worker cannot clean up after itself."""
    for top in {mechanism.memory.parent, mechanism.pids.parent}:
        with contextlib.suppress(OSError):
            for entry in top.iterdir():
                pid = entry.name.removeprefix("torchdrill-").partition("-")[0]
                if (entry.name.startswith("torchdrill-") and pid.isdigit()
                        and entry != mechanism.memory and entry != mechanism.pids
                        and not Path(f"/proc/{pid}").exists()):
                    _remove_tree(entry)
