"""Kernel-enforced memory and process limits for jobs, through cgroups (v2 or v1).

Why cgroups: rlimits and a PSS watchdog do not see shmem, memfd or tmpfs pages, and an
address-space cap turns a failed thread creation into a wrong verdict. A memory cgroup
charges every page a job makes, a pids cgroup counts its processes and threads, and both
keep counters (`oom_kill`, `max`) that say what really stopped a job.

CPU fairness: where the `cpu` controller is ours too, each job also gets its own CPU group
with the same weight, so two jobs running at once split the CPUs evenly however many
processes either starts (24 busy processes on one slot cannot starve the other slot's job
past its wall limit). The weight only matters under contention: a job alone uses every core.
Where `cpu` is not ours, `Mechanism.no_cpu_share` says so, and the isolation report and the
worker's start-up log repeat it (runner/isolation.py says why that warns instead of refusing).

Layout: `<the worker's own cgroup>/torchdrill-<instance>/job-<random>`, so two runner
instances on one host never count against each other, the worker stays inside whatever
limits its own cgroup has (systemd `Delegate=yes`, Docker with `--cgroupns`), and a job
reading its own /proc/self/cgroup learns nothing about how many jobs ran before it. On v2
the worker's own processes first move into the leaf `<its cgroup>/worker` (see `delegate`).
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
NO_CPU_SHARE = "no per-job CPU share: the cgroup cpu controller is not the worker's"
NO_CPU_SHARE_COST = ("jobs running at once compete per process, so a job with many busy "
                     "processes can push another member's job past its wall-time limit")
KILL_ROUNDS = 200  # SIGKILL sweeps before giving up on a job cgroup that keeps refilling


@dataclass(frozen=True)
class Mechanism:
    """Where the per-job cgroups live: v2 (one directory) or v1 (memory + pids)."""

    version: int
    memory: Path  # the instance directory in the memory (or unified) hierarchy
    pids: Path
    swap_accounted: bool
    cpu: Path | None = None  # the instance directory in the cpu hierarchy, when writable

    @property
    def tops(self) -> set[Path]:
        """The instance directory in every hierarchy used."""
        return {self.memory, self.pids} | ({self.cpu} if self.cpu else set())

    @property
    def no_cpu_share(self) -> str | None:
        """Why jobs get no CPU group of their own here (None when they do), in one line."""
        if self.cpu is not None:
            return None
        where = (f"cgroup v2: {self.memory.parent} does not enable cpu for its children"
                 if self.version == 2 else
                 "cgroup v1: no writable cpu hierarchy (cpu.shares) for the worker")
        return f"{NO_CPU_SHARE} ({where}); {NO_CPU_SHARE_COST}"

    def describe(self) -> str:
        if self.version == 2:
            cpu = ", cpu.weight per job" if self.cpu else ""
            return f"cgroup v2 (memory.max, swap off, pids.max{cpu}) under {self.memory.parent}"
        swap = " + memory.memsw" if self.swap_accounted else " (no swap accounting)"
        cpu = f", cpu.shares per job under {self.cpu.parent}" if self.cpu else ""
        return (f"cgroup v1: memory.limit_in_bytes{swap} under {self.memory.parent}, "
                f"pids.max under {self.pids.parent}{cpu}")


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


V2_REQUIRED: tuple[str, ...] = ("memory", "pids")
V2_OPTIONAL: tuple[str, ...] = ("cpu",)  # fair CPU shares between jobs, where the parent delegates it
LEAF = "worker"  # the leaf the worker's own processes move into on v2
MOVE_ROUNDS = 50  # a process forking while we move it leaves a child behind: sweep again
ROOT_HINT = "run the worker as root with the cgroup mounted read-write"
DELEGATE_HINT = ("the parent cgroup must delegate them (systemd: Delegate=yes; Docker: "
                 "cgroup v2 with --cgroupns=private)")


class Unavailable(RuntimeError):
    """No kernel limits from cgroups here; the message says why in one line."""


def _plus(controllers: tuple[str, ...]) -> str:
    """What `cgroup.subtree_control` takes to enable these controllers."""
    return " ".join(f"+{c}" for c in controllers)


def _controllers(path: Path) -> list[str]:
    try:
        return path.read_text().split()
    except OSError:
        return []


def _move_out(base: Path, leaf: Path) -> None:
    """Move every process of `base` into `leaf` (children forked meanwhile follow)."""
    for _ in range(MOVE_ROUNDS):
        pids = _procs(base)
        if not pids:
            return
        for pid in pids:
            try:
                _write(leaf / "cgroup.procs", str(pid))
            except OSError as exc:
                if exc.errno != errno.ESRCH:  # a process that exited meanwhile is fine
                    raise Unavailable(f"cgroup v2: cannot move process {pid} from {base} into "
                                      f"{leaf}: {exc.strerror}") from exc
    raise Unavailable(f"cgroup v2: processes keep appearing in {base}; run the worker in a "
                      "cgroup of its own")


def delegate(base: Path) -> set[str]:
    """Make the worker's v2 cgroup `base` able to give controllers to per-job cgroups.

    The kernel enables a controller for a cgroup's children only while that cgroup holds no
    processes itself ("no internal processes"), and the worker lives in `base`. So: move every
    process of `base` into the leaf `base/worker`, then enable memory and pids (and cpu where
    offered) in `base/cgroup.subtree_control`; jobs get cgroups beside the leaf. The real root
    of the hierarchy (no `cgroup.type`) is exempt from the rule, and its processes are the
    whole host's: nothing moves there. Returns the optional controllers enabled; raises
    Unavailable.
    """
    available = _controllers(base / "cgroup.controllers")
    missing = [c for c in V2_REQUIRED if c not in available]
    if missing:
        offers = " ".join(available) or "none"
        raise Unavailable(f"cgroup v2: controller {', '.join(missing)} not available in {base} "
                          f"(it offers: {offers}); {DELEGATE_HINT}")
    leaf = base / LEAF
    if (base / "cgroup.type").exists():
        try:
            leaf.mkdir(exist_ok=True)
        except OSError as exc:
            raise Unavailable(f"cgroup v2: cannot create {leaf}: {exc.strerror}; {ROOT_HINT}") from exc
        _move_out(base, leaf)
    try:
        _write(base / "cgroup.subtree_control", _plus(V2_REQUIRED))
    except OSError as exc:
        busy = " (processes are still in it)" if exc.errno == errno.EBUSY else ""
        raise Unavailable(f"cgroup v2: cannot enable {', '.join(V2_REQUIRED)} for the children "
                          f"of {base}: {exc.strerror}{busy}") from exc
    enabled: set[str] = set()
    for name in (c for c in V2_OPTIONAL if c in available):
        with contextlib.suppress(OSError):  # optional: limits hold without it
            _write(base / "cgroup.subtree_control", f"+{name}")
            enabled.add(name)
    return enabled


def _v2_base(root: Path, own: str) -> Path:
    """The worker's cgroup; once the worker sits in its own leaf, the leaf's parent."""
    base = root / own.lstrip("/")
    enabled = _controllers(base.parent / "cgroup.subtree_control")
    if base.name == LEAF and base != root and all(c in enabled for c in V2_REQUIRED):
        return base.parent
    return base


def _v2(instance: str) -> Mechanism | None:
    """None where this host has no unified hierarchy for us; raises Unavailable where it has
    one that cannot limit jobs."""
    root = _unified_root()
    own = _own_paths().get("")
    if root is None or own is None:
        return None
    base = _v2_base(root, own)
    if not (base / "cgroup.controllers").exists():
        raise Unavailable(f"cgroup v2: the worker's cgroup {base} is not visible (mount the "
                          "cgroup namespace's own hierarchy, e.g. --cgroupns=private)")
    cpu = "cpu" in delegate(base)
    top = base / f"torchdrill-{instance}"
    return Mechanism(2, top, top, swap_accounted=True, cpu=top if cpu else None)


def _v1(instance: str) -> Mechanism | None:
    """None where this host has no v1 memory and pids hierarchies for us; raises Unavailable
    where it has them but they cannot limit jobs."""
    own = _own_paths()
    mem_root, pids_root = ROOT / "memory", ROOT / "pids"
    if "memory" not in own or "pids" not in own or not mem_root.is_dir() or not pids_root.is_dir():
        return None  # not mounted (a container shows only the unified hierarchy, say)
    mem = mem_root / own["memory"].lstrip("/")
    pids = pids_root / own["pids"].lstrip("/")
    if not (mem / "memory.limit_in_bytes").exists() and mem != mem_root:
        raise Unavailable(f"cgroup v1: the worker's memory cgroup {mem} is not visible (only "
                          "part of the hierarchy is mounted)")
    for directory in (mem, pids):
        if not _writable_dir(directory):
            raise Unavailable(f"cgroup v1: cannot create cgroups in {directory}; {ROOT_HINT}")
    swap = (mem / "memory.memsw.limit_in_bytes").exists() or \
        (mem_root / "memory.memsw.limit_in_bytes").exists()
    name = f"torchdrill-{instance}"
    cpu = None
    if "cpu" in own:  # optional: fair CPU shares between jobs
        cpu_dir = _v1_dir("cpu", own["cpu"])
        if cpu_dir is not None and (cpu_dir / "cpu.shares").exists() and _writable_dir(cpu_dir):
            cpu = cpu_dir / name
    return Mechanism(1, mem / name, pids / name, swap_accounted=swap, cpu=cpu)


def _v1_dir(controller: str, own: str) -> Path | None:
    """The worker's cgroup in a v1 hierarchy, mounted alone or co-mounted (`cpu,cpuacct`)."""
    for mount in (ROOT / controller, *sorted(ROOT.glob(f"*{controller}*"))):
        if mount.is_dir() and controller in mount.name.split(","):
            return mount / own.lstrip("/")
    return None


def find(instance: str) -> Mechanism:
    """v2 where it can be delegated to us, else v1 where writable; else raises Unavailable
    saying why (the v2 reason first: hybrid hosts offer a unified hierarchy without memory)."""
    problems = []
    for version in (_v2, _v1):
        try:
            found = version(instance)
        except Unavailable as exc:
            problems.append(str(exc))
            continue
        if found is not None:
            return found
    if not problems:
        raise Unavailable(f"no cgroup v2 or v1 (memory, pids) hierarchy for this process under {ROOT}")
    raise Unavailable("; ".join(problems))


def detect(instance: str) -> Mechanism | None:
    """`find`, or None (no kernel limits) where it raises."""
    try:
        return find(instance)
    except Unavailable:
        return None


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
        self.cpu = mechanism.cpu / name if mechanism.cpu else None

    @property
    def dirs(self) -> set[Path]:
        return {self.memory, self.pids} | ({self.cpu} if self.cpu else set())

    def create(self) -> None:
        for top in self.mechanism.tops:
            top.mkdir(exist_ok=True)
        if self.mechanism.version == 2:
            with contextlib.suppress(OSError):
                _write(self.mechanism.memory / "cgroup.subtree_control", _plus(V2_REQUIRED))
            if self.mechanism.cpu:
                with contextlib.suppress(OSError):
                    _write(self.mechanism.memory / "cgroup.subtree_control", "+cpu")
        for directory in self.dirs:
            if directory.exists():
                _remove_tree(directory)  # a crashed instance of the same name left it
            directory.mkdir()

    def set_limits(self, memory_mb: int, max_procs: int) -> None:
        self._set_memory(memory_mb * 1024 * 1024)
        _write(self.pids / "pids.max", str(max_procs))
        if self.cpu is not None:  # every job the same weight, whatever the defaults say
            weight = ("cpu.weight", "100") if self.mechanism.version == 2 else ("cpu.shares", "1024")
            with contextlib.suppress(OSError):
                _write(self.cpu / weight[0], weight[1])

    def usage_bytes(self) -> int:
        name = "memory.current" if self.mechanism.version == 2 else "memory.usage_in_bytes"
        return _read_int(self.memory / name)

    def cap_memory_above_usage(self, extra_bytes: int) -> bool:
        """Lower the memory limit to what the job uses now plus ``extra_bytes`` (never above the
        job's own limit); False if the kernel refused. Everything the job adds from here on
        counts: private and shared memory, files in its tmpfs, pipe buffers."""
        limit = self.usage_bytes() + extra_bytes
        name = "memory.max" if self.mechanism.version == 2 else "memory.limit_in_bytes"
        current = _read_int(self.memory / name)  # 0: none ("max")
        try:
            self._set_memory(min(limit, current) if current else limit)
        except OSError:
            return False
        return True

    def _set_memory(self, limit_bytes: int) -> None:
        limit = str(limit_bytes)
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

    def add(self, pid: int) -> None:
        for directory in self.dirs:
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
        return all(kill_all(d) for d in self.dirs)

    def members(self) -> list[int]:
        return sorted(set(_procs(self.memory)) | set(_procs(self.pids)))

    def remove(self) -> None:
        for directory in self.dirs:
            _remove_tree(directory)


def remove_instance(mechanism: Mechanism) -> None:
    for top in mechanism.tops:
        _remove_tree(top)


def sweep_stale(mechanism: Mechanism) -> None:
    """Remove subtrees of default-named instances (`torchdrill-<pid>-...`) whose worker is
    gone: a killed worker cannot clean up after itself."""
    for top in {t.parent for t in mechanism.tops}:
        with contextlib.suppress(OSError):
            for entry in top.iterdir():
                pid = entry.name.removeprefix("torchdrill-").partition("-")[0]
                if (entry.name.startswith("torchdrill-") and pid.isdigit()
                        and entry not in mechanism.tops
                        and not Path(f"/proc/{pid}").exists()):
                    _remove_tree(entry)
