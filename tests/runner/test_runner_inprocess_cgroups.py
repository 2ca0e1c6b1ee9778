"""Issue 21: mutation survivors of runner/cgroups.py. The sandbox tests use real cgroups from
the worker's slots; these run detection, limits, counters and clean-up in-process against a
temporary directory standing in for /sys/fs/cgroup (and for /proc), with os.kill faked."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from runner import cgroups
from runner.cgroups import Counters, JobCgroup, Mechanism

REAL_PATH = Path


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    top = tmp_path / "cgroup"
    top.mkdir()
    monkeypatch.setattr(cgroups, "ROOT", top)
    return top


@pytest.fixture
def proc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """/proc as cgroups.py reads it: /proc/self/cgroup and /proc/<pid>."""
    fake = tmp_path / "proc"
    (fake / "self").mkdir(parents=True)

    def path(*parts: Any) -> Path:
        text = str(REAL_PATH(*parts))
        if text.startswith("/proc/"):
            return fake / text.removeprefix("/proc/")
        return REAL_PATH(*parts)

    monkeypatch.setattr(cgroups, "Path", path)
    return fake


SLEEPS: list[float] = []


@pytest.fixture
def kills(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    sent: list[tuple[int, int]] = []
    SLEEPS.clear()
    monkeypatch.setattr(cgroups.os, "kill", lambda pid, sig: sent.append((pid, sig)))
    monkeypatch.setattr(cgroups.time, "sleep", SLEEPS.append)
    return sent


def own(proc: Path, text: str) -> None:
    (proc / "self" / "cgroup").write_text(text)


# ---- describing and finding the hierarchy -----------------------------------------------------


def test_each_mechanism_describes_itself() -> None:
    v2 = Mechanism(2, Path("/sys/fs/cgroup/w/torchdrill-x"), Path("/sys/fs/cgroup/w/torchdrill-x"), True)
    assert v2.describe() == "cgroup v2 (memory.max, swap off, pids.max) under /sys/fs/cgroup/w"
    v1 = Mechanism(1, Path("/m/w/torchdrill-x"), Path("/p/w/torchdrill-x"), True)
    assert v1.describe() == ("cgroup v1: memory.limit_in_bytes + memory.memsw under /m/w, "
                             "pids.max under /p/w")
    no_swap = Mechanism(1, Path("/m/torchdrill-x"), Path("/p/torchdrill-x"), False)
    assert no_swap.describe() == ("cgroup v1: memory.limit_in_bytes (no swap accounting) under /m, "
                                  "pids.max under /p")


def test_own_paths_are_read_per_controller(proc: Path) -> None:
    assert cgroups._own_paths() == {}
    own(proc, "12:memory:/user.slice\n11:pids:/system.slice/x\n5:cpu,cpuacct:/a:b\n0::/unified/p\n")
    assert cgroups._own_paths() == {"memory": "/user.slice", "pids": "/system.slice/x",
                                    "cpu": "/a:b", "cpuacct": "/a:b", "": "/unified/p"}


def test_the_unified_root_is_found_where_it_is_mounted(root: Path) -> None:
    assert cgroups._unified_root() is None
    (root / "unified").mkdir()
    (root / "unified" / "cgroup.controllers").write_text("")
    assert cgroups._unified_root() == root / "unified"
    (root / "cgroup.controllers").write_text("")
    assert cgroups._unified_root() == root


def test_a_writable_directory_is_probed_and_left_clean(tmp_path: Path) -> None:
    assert cgroups._writable_dir(tmp_path) is True
    assert list(tmp_path.iterdir()) == []
    assert cgroups._writable_dir(tmp_path / "absent") is False


def test_a_probe_that_cannot_be_removed_still_proves_writable(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: Path) -> None:
        raise OSError(errno.EBUSY, "busy")

    monkeypatch.setattr(Path, "rmdir", refuse)
    assert cgroups._writable_dir(tmp_path) is True


def v2_host(root: Path, proc: Path, controllers: str = "cpu memory pids") -> Path:
    (root / "cgroup.controllers").write_text(controllers)
    base = root / "Xwork" / "svc"
    base.mkdir(parents=True)
    (base / "cgroup.controllers").write_text(controllers)
    (base / "cgroup.type").write_text("domain\n")  # a non-root cgroup
    own(proc, "0::/Xwork/svc\n")
    return base


def test_v2_is_used_where_memory_and_pids_are_delegated(root: Path, proc: Path) -> None:
    base = v2_host(root, proc)
    found = cgroups._v2("inst")
    top = base / "torchdrill-inst"
    assert found == Mechanism(2, top, top, swap_accounted=True, cpu=top)
    assert (base / "cgroup.subtree_control").read_text() == "+cpu"  # after "+memory +pids"
    assert cgroups.detect("inst") == found
    (base / "cgroup.controllers").write_text("memory pids")  # no cpu: limits without fairness
    assert cgroups._v2("inst") == Mechanism(2, top, top, swap_accounted=True)
    assert (base / "cgroup.subtree_control").read_text() == "+memory +pids"


NO_CPU_COST = ("jobs running at once compete per process, so a job with many busy processes can "
               "push another member's job past its wall-time limit")


def test_a_v2_host_without_the_cpu_controller_says_jobs_get_no_cpu_share(root: Path, proc: Path) -> None:
    base = v2_host(root, proc, "memory pids")  # the parent delegates memory and pids, not cpu
    found = cgroups.find("inst")
    assert found.cpu is None
    assert found.no_cpu_share == (
        "no per-job CPU share: the cgroup cpu controller is not the worker's (cgroup v2: "
        f"{base} does not enable cpu for its children); {NO_CPU_COST}")
    (base / "cgroup.controllers").write_text("cpu memory pids")
    assert cgroups.find("inst").no_cpu_share is None


DELEGATE = ("the parent cgroup must delegate them (systemd: Delegate=yes; Docker: cgroup v2 with "
            "--cgroupns=private)")


def unavailable(instance: str = "i") -> str:
    with pytest.raises(cgroups.Unavailable) as refused:
        cgroups.find(instance)
    return str(refused.value)


def test_v2_is_refused_in_one_line_without_both_controllers(root: Path, proc: Path) -> None:
    base = v2_host(root, proc, "cpu memory")
    assert unavailable() == f"cgroup v2: controller pids not available in {base} (it offers: cpu memory); {DELEGATE}"
    (base / "cgroup.controllers").write_text("")
    assert unavailable() == (f"cgroup v2: controller memory, pids not available in {base} "
                             f"(it offers: none); {DELEGATE}")
    assert cgroups.detect("i") is None
    assert not (base / "worker").exists()  # refused before anything moved


def test_v2_is_refused_in_one_line_where_the_cgroup_is_not_writable(root: Path, proc: Path) -> None:
    base = v2_host(root, proc)
    (base / "worker").write_text("")  # mkdir fails as on a read-only mount
    assert unavailable() == (f"cgroup v2: cannot create {base}/worker: File exists; run the worker "
                             "as root with the cgroup mounted read-write")
    (base / "worker").unlink()
    (base / "cgroup.subtree_control").mkdir()  # writing it fails
    assert unavailable() == (f"cgroup v2: cannot enable memory, pids for the children of {base}: "
                             "Is a directory")


def test_v2_says_when_processes_are_still_in_the_workers_cgroup(root: Path, proc: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    base = v2_host(root, proc)

    def busy(path: Path, value: str) -> None:
        if path.name == "cgroup.subtree_control":
            raise OSError(errno.EBUSY, os.strerror(errno.EBUSY))
        path.write_text(value)

    monkeypatch.setattr(cgroups, "_write", busy)
    assert unavailable() == (f"cgroup v2: cannot enable memory, pids for the children of {base}: "
                             "Device or resource busy (processes are still in it)")


def test_v2_moves_every_process_into_the_leaf_before_enabling_controllers(
        root: Path, proc: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel enables controllers for children only of a cgroup without processes."""
    base = v2_host(root, proc)
    (base / "cgroup.procs").write_text("11\n12\n")
    writes: list[tuple[str, str]] = []

    def record(path: Path, value: str) -> None:
        writes.append((str(path.relative_to(base)), value))
        if path.name == "cgroup.procs":  # the kernel moves the process out of its old cgroup
            left = [p for p in (base / "cgroup.procs").read_text().split() if p != value]
            (base / "cgroup.procs").write_text("\n".join(left))
            if value == "12":
                raise OSError(errno.ESRCH, "gone")  # exited meanwhile: fine
        path.write_text(value)

    monkeypatch.setattr(cgroups, "_write", record)
    top = base / "torchdrill-i"
    assert cgroups.find("i") == Mechanism(2, top, top, swap_accounted=True, cpu=top)
    assert writes == [("worker/cgroup.procs", "11"), ("worker/cgroup.procs", "12"),
                      ("cgroup.subtree_control", "+memory +pids"), ("cgroup.subtree_control", "+cpu")]


def test_at_the_hierarchys_real_root_nothing_moves(root: Path, proc: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The root cgroup may hold processes (they are the whole host's): no leaf, no move."""
    (root / "cgroup.controllers").write_text("memory pids")
    (root / "cgroup.procs").write_text("1\n11\n")
    own(proc, "0::/\n")
    writes: list[tuple[str, str]] = []
    monkeypatch.setattr(cgroups, "_write", lambda path, value: writes.append((path.name, value)))
    top = root / "torchdrill-i"
    assert cgroups.find("i") == Mechanism(2, top, top, swap_accounted=True)
    assert writes == [("cgroup.subtree_control", "+memory +pids")]
    assert not (root / "worker").exists()


def test_v2_refuses_in_one_line_a_process_that_cannot_move(root: Path, proc: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    base = v2_host(root, proc)
    (base / "cgroup.procs").write_text("11\n")

    def refuse(path: Path, value: str) -> None:
        raise OSError(errno.EACCES, os.strerror(errno.EACCES))

    monkeypatch.setattr(cgroups, "_write", refuse)
    assert unavailable() == (f"cgroup v2: cannot move process 11 from {base} into {base}/worker: "
                             "Permission denied")
    monkeypatch.setattr(cgroups, "_write", lambda path, value: None)  # the kernel never empties it
    assert unavailable() == (f"cgroup v2: processes keep appearing in {base}; run the worker in a "
                             "cgroup of its own")


def test_v2_found_again_from_the_leaf_uses_the_same_cgroup(root: Path, proc: Path) -> None:
    base = v2_host(root, proc)
    first = cgroups.find("i")
    (base / "cgroup.subtree_control").write_text("memory pids cpu")  # as the kernel shows it
    (base / "worker" / "cgroup.controllers").write_text("cpu memory pids")
    own(proc, "0::/Xwork/svc/worker\n")  # the worker now lives in its leaf
    assert cgroups.find("i") == first
    assert not (base / "worker" / "worker").exists()


def test_v2_needs_a_unified_root_our_cgroup_and_its_controllers(root: Path, proc: Path) -> None:
    base = v2_host(root, proc)
    own(proc, "4:memory:/x\n")
    assert cgroups._v2("i") is None
    assert unavailable() == f"no cgroup v2 or v1 (memory, pids) hierarchy for this process under {root}"
    own(proc, "0::/Xwork/svc\n")
    (root / "cgroup.controllers").unlink()
    assert cgroups._v2("i") is None
    (root / "cgroup.controllers").write_text("memory pids")
    (base / "cgroup.controllers").unlink()
    assert unavailable() == (f"cgroup v2: the worker's cgroup {base} is not visible (mount the "
                             "cgroup namespace's own hierarchy, e.g. --cgroupns=private)")


def v1_host(root: Path, proc: Path, *, swap: str | None = None) -> tuple[Path, Path]:
    mem, pids = root / "memory" / "Xuser", root / "pids" / "Xpids"
    mem.mkdir(parents=True)
    pids.mkdir(parents=True)
    (mem / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    if swap == "own":
        (mem / "memory.memsw.limit_in_bytes").write_text("-1")
    elif swap == "root":
        (root / "memory" / "memory.memsw.limit_in_bytes").write_text("-1")
    own(proc, "7:pids:/Xpids\n4:memory:/Xuser\n")
    return mem, pids


@pytest.mark.parametrize(("swap", "accounted"), [(None, False), ("own", True), ("root", True)])
def test_v1_is_used_where_memory_and_pids_are_writable(root: Path, proc: Path, swap: str | None,
                                                        accounted: bool) -> None:
    mem, pids = v1_host(root, proc, swap=swap)
    found = cgroups._v1("inst")
    assert found == Mechanism(1, mem / "torchdrill-inst", pids / "torchdrill-inst", accounted)
    assert cgroups.detect("inst") == found
    assert sorted(p.name for p in mem.iterdir()) == sorted(
        ["memory.limit_in_bytes"] + (["memory.memsw.limit_in_bytes"] if swap == "own" else []))


@pytest.mark.parametrize("mount", ["cpu", "cpu,cpuacct"])
def test_v1_adds_a_cpu_group_per_job_where_the_cpu_hierarchy_is_writable(root: Path, proc: Path,
                                                                          mount: str) -> None:
    mem, pids = v1_host(root, proc)
    cpu = root / mount / "Xcpu"
    cpu.mkdir(parents=True)
    own(proc, "7:pids:/Xpids\n4:memory:/Xuser\n2:cpu,cpuacct:/Xcpu\n")
    without = cgroups._v1("i")
    assert without == Mechanism(1, mem / "torchdrill-i", pids / "torchdrill-i", False)
    assert without.no_cpu_share == (
        "no per-job CPU share: the cgroup cpu controller is not the worker's (cgroup v1: no "
        f"writable cpu hierarchy (cpu.shares) for the worker); {NO_CPU_COST}")
    (cpu / "cpu.shares").write_text("1024")
    found = cgroups._v1("i")
    assert found.no_cpu_share is None
    assert found == Mechanism(1, mem / "torchdrill-i", pids / "torchdrill-i", False,
                              cpu=cpu / "torchdrill-i")
    assert found.describe() == (f"cgroup v1: memory.limit_in_bytes (no swap accounting) under {mem}, "
                                f"pids.max under {pids}, cpu.shares per job under {cpu}")


def test_v1_is_refused_in_one_line_without_both_hierarchies_or_write_access(root: Path,
                                                                           proc: Path) -> None:
    mem, pids = v1_host(root, proc)
    own(proc, "4:memory:/Xuser\n")
    assert cgroups._v1("i") is None
    own(proc, "7:pids:/Xpids\n")
    assert cgroups._v1("i") is None
    own(proc, "7:pids:/Xpids\n4:memory:/Xuser\n")
    (mem / "memory.limit_in_bytes").unlink()
    assert unavailable() == (f"cgroup v1: the worker's memory cgroup {mem} is not visible (only "
                             "part of the hierarchy is mounted)")
    (mem / "memory.limit_in_bytes").write_text("1")
    pids.rmdir()
    assert unavailable() == (f"cgroup v1: cannot create cgroups in {pids}; run the worker as root "
                             "with the cgroup mounted read-write")
    pids.mkdir()
    for f in mem.iterdir():
        f.unlink()
    mem.rmdir()
    assert unavailable() == (f"cgroup v1: the worker's memory cgroup {mem} is not visible (only "
                             "part of the hierarchy is mounted)")
    assert cgroups.detect("i") is None


def test_a_hybrid_host_reports_why_neither_hierarchy_works(root: Path, proc: Path) -> None:
    mem, pids = v1_host(root, proc)
    base = v2_host(root, proc, "hugetlb")
    own(proc, "7:pids:/Xpids\n4:memory:/Xuser\n0::/Xwork/svc\n")
    pids.rmdir()
    assert unavailable() == (f"cgroup v2: controller memory, pids not available in {base} (it offers: "
                             f"hugetlb); {DELEGATE}; cgroup v1: cannot create cgroups in {pids}; run "
                             "the worker as root with the cgroup mounted read-write")


def test_v1_hierarchies_that_are_not_mounted_are_not_reported(root: Path, proc: Path) -> None:
    """A container on a hybrid host sees only the unified mount, though /proc/self/cgroup
    still lists the v1 hierarchies: only the v2 reason is worth a line."""
    base = v2_host(root, proc, "")
    own(proc, "7:pids:/\n4:memory:/\n0::/Xwork/svc\n")
    assert cgroups._v1("i") is None
    assert unavailable() == f"cgroup v2: controller memory, pids not available in {base} (it offers: none); {DELEGATE}"


def test_v1_at_the_hierarchy_root_needs_no_limit_file(root: Path, proc: Path) -> None:
    (root / "memory").mkdir()
    (root / "pids").mkdir()
    own(proc, "7:pids:/\n4:memory:/\n")
    assert cgroups._v1("i") == Mechanism(1, root / "memory" / "torchdrill-i",
                                         root / "pids" / "torchdrill-i", False)


def test_v2_wins_over_v1(root: Path, proc: Path) -> None:
    v1_host(root, proc)
    base = v2_host(root, proc)
    own(proc, "7:pids:/Xpids\n4:memory:/Xuser\n0::/Xwork/svc\n")
    top = base / "torchdrill-i"
    assert cgroups.detect("i") == Mechanism(2, top, top, True, cpu=top)


# ---- reading counters -------------------------------------------------------------------------


def test_numbers_are_read_plain_or_by_key(tmp_path: Path) -> None:
    f = tmp_path / "f"
    assert cgroups._read_int(f) == 0
    assert cgroups._read_int(f, "oom_kill") == 0
    for text, plain in [("123\n", 123), ("max\n", 0), ("", 0), ("  \n", 0), ("7 8\n", 7)]:
        f.write_text(text)
        assert cgroups._read_int(f) == plain
    f.write_text("oom 1\noom_kill_x 9\noom_kill 3\nmax 12\n")
    assert (cgroups._read_int(f, "oom_kill"), cgroups._read_int(f, "max"),
            cgroups._read_int(f, "high")) == (3, 12, 0)
    f.write_text("oom_kill many\nmax  4 \n")
    assert (cgroups._read_int(f, "oom_kill"), cgroups._read_int(f, "max")) == (0, 4)


def test_members_are_read_from_cgroup_procs(tmp_path: Path) -> None:
    assert cgroups._procs(tmp_path) == []
    (tmp_path / "cgroup.procs").write_text("12\n34\n")
    assert cgroups._procs(tmp_path) == [12, 34]
    (tmp_path / "cgroup.procs").write_text("12\nzombie\n")
    assert cgroups._procs(tmp_path) == []


# ---- killing and removing ---------------------------------------------------------------------


class Refilling:
    """cgroup.procs that empties after `rounds` SIGKILL sweeps (never when rounds is None)."""

    def __init__(self, directory: Path, pids: list[int], rounds: int | None) -> None:
        self.directory, self.pids, self.rounds, self.sweeps = directory, pids, rounds, 0
        directory.mkdir(exist_ok=True)
        self.write()

    def write(self) -> None:
        (self.directory / "cgroup.procs").write_text("\n".join(map(str, self.pids)))

    def kill(self, pid: int, sig: int) -> None:
        if pid == self.pids[-1]:
            self.sweeps += 1
            if self.rounds is not None and self.sweeps >= self.rounds:
                self.pids = []
                self.write()


def test_kill_all_sweeps_until_the_cgroup_is_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   kills: list[tuple[int, int]]) -> None:
    group = Refilling(tmp_path / "job", [101, 102], rounds=3)
    monkeypatch.setattr(cgroups.os, "kill", lambda pid, sig: (kills.append((pid, sig)), group.kill(pid, sig)))
    (group.directory / "cgroup.kill").write_text("0")
    assert cgroups.kill_all(group.directory) is True
    assert (group.directory / "cgroup.kill").read_text() == "1"
    assert kills == [(101, 9), (102, 9)] * 3
    assert SLEEPS == [0.001] * 3


def test_kill_all_gives_up_after_its_rounds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            kills: list[tuple[int, int]]) -> None:
    group = Refilling(tmp_path / "job", [7], rounds=None)
    monkeypatch.setattr(cgroups.os, "kill", lambda pid, sig: (kills.append((pid, sig)), group.kill(pid, sig)))
    assert cgroups.kill_all(group.directory) is False
    assert kills == [(7, 9)] * cgroups.KILL_ROUNDS
    assert not (group.directory / "cgroup.kill").exists()
    assert cgroups.KILL_ROUNDS == 200


def test_kill_all_survives_a_vanished_process_and_an_unwritable_kill_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    group = Refilling(tmp_path / "job", [5, 6], rounds=1)
    (group.directory / "cgroup.kill").mkdir()
    seen: list[int] = []

    def kill(pid: int, sig: int) -> None:
        seen.append(pid)
        group.kill(pid, sig)
        raise ProcessLookupError(pid)

    monkeypatch.setattr(cgroups.os, "kill", kill)
    monkeypatch.setattr(cgroups.time, "sleep", lambda s: None)
    assert cgroups.kill_all(group.directory) is True
    assert seen == [5, 6]
    assert cgroups.kill_all(tmp_path / "empty") is True


def test_a_tree_is_removed_deepest_first(tmp_path: Path, kills: list[tuple[int, int]]) -> None:
    top = tmp_path / "torchdrill-x"
    (top / "slot0" / "job1").mkdir(parents=True)
    (top / "slot1").mkdir()
    cgroups._remove_tree(top)
    assert not top.exists() and kills == []
    cgroups._remove_tree(tmp_path / "absent")  # nothing to do
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "memory.max").write_text("1")  # like a cgroup still in use: rmdir refuses
    cgroups._remove_tree(busy)
    assert busy.exists()


def test_a_busy_cgroup_is_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  kills: list[tuple[int, int]]) -> None:
    target = tmp_path / "job"
    target.mkdir()
    tries: list[str] = []
    real_rmdir = Path.rmdir

    def rmdir(self: Path) -> None:
        if self == target:
            tries.append(self.name)
            if len(tries) < 3:
                raise OSError(errno.EBUSY, "busy")
        real_rmdir(self)

    monkeypatch.setattr(Path, "rmdir", rmdir)
    cgroups._remove_tree(target)
    assert tries == ["job"] * 3 and not target.exists()
    assert SLEEPS == [0.01, 0.01]
    stuck = tmp_path / "stuck"
    stuck.mkdir()
    tries.clear()

    def always_busy(self: Path) -> None:
        tries.append(self.name)
        raise OSError(errno.EBUSY, "busy")

    monkeypatch.setattr(Path, "rmdir", always_busy)
    cgroups._remove_tree(stuck)
    assert tries == ["stuck"] * 50


# ---- one job's cgroups ------------------------------------------------------------------------


def mechanism(tmp_path: Path, version: int) -> Mechanism:
    if version == 2:
        top = tmp_path / "unified" / "torchdrill-i"
        return Mechanism(2, top, top, True)
    return Mechanism(1, tmp_path / "memory" / "torchdrill-i", tmp_path / "pids" / "torchdrill-i", True)


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str]]]:
    done: list[tuple[str, str]] = []
    real = cgroups._write

    def write(path: Path, value: str) -> None:
        done.append((f"{path.parent.name}/{path.name}", value))
        real(path, value)

    monkeypatch.setattr(cgroups, "_write", write)
    yield done


def test_a_v2_job_gets_memory_swap_oom_group_and_pids_limits(tmp_path: Path,
                                                              writes: list[tuple[str, str]]) -> None:
    (tmp_path / "unified").mkdir()
    job = JobCgroup(mechanism(tmp_path, 2), "slot0-job1")
    assert job.memory == job.pids == tmp_path / "unified" / "torchdrill-i" / "slot0-job1"
    job.create()
    assert job.memory.is_dir()
    job.set_limits(300, 64)
    assert writes == [("torchdrill-i/cgroup.subtree_control", "+memory +pids"),
                      ("slot0-job1/memory.max", "314572800"), ("slot0-job1/memory.swap.max", "0"),
                      ("slot0-job1/memory.oom.group", "1"), ("slot0-job1/pids.max", "64")]


def test_a_v1_job_raises_memsw_first_then_lowers_both(tmp_path: Path,
                                                      writes: list[tuple[str, str]]) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "pids").mkdir()
    job = JobCgroup(mechanism(tmp_path, 1), "slot1-job2")
    assert (job.memory, job.pids) == (tmp_path / "memory" / "torchdrill-i" / "slot1-job2",
                                      tmp_path / "pids" / "torchdrill-i" / "slot1-job2")
    job.create()
    assert job.memory.is_dir() and job.pids.is_dir()
    job.set_limits(2, 16)
    assert writes == [("slot1-job2/memory.memsw.limit_in_bytes", "-1"),
                      ("slot1-job2/memory.limit_in_bytes", "2097152"),
                      ("slot1-job2/memory.memsw.limit_in_bytes", "2097152"),
                      ("slot1-job2/memory.swappiness", "0"), ("slot1-job2/pids.max", "16")]


@pytest.mark.parametrize(("version", "weight"), [(1, ("cpu.shares", "1024")), (2, ("cpu.weight", "100"))])
def test_a_job_gets_a_cpu_group_of_the_same_weight_as_every_other(
        tmp_path: Path, writes: list[tuple[str, str]], version: int, weight: tuple[str, str]) -> None:
    base = mechanism(tmp_path, version)
    cpu_top = tmp_path / "cpu" / "torchdrill-i" if version == 1 else base.memory
    for top in (base.memory.parent, base.pids.parent, cpu_top.parent):
        top.mkdir(parents=True, exist_ok=True)
    job = JobCgroup(Mechanism(version, base.memory, base.pids, True, cpu=cpu_top), "job-1f")
    assert job.cpu == cpu_top / "job-1f"
    job.create()
    job.set_limits(1, 2)
    assert (job.cpu / weight[0]).read_text() == weight[1]
    assert writes[-1] == (f"job-1f/{weight[0]}", weight[1])
    for directory in job.dirs:  # fake cgroup.procs files: the job's pid is written to each
        (directory / "cgroup.procs").write_text("")
    job.add(4242)
    assert (job.cpu / "cgroup.procs").read_text() == "4242"
    assert job.dirs == {job.memory, job.pids, job.cpu}


@pytest.mark.parametrize(("version", "usage", "limit"), [(1, "memory.usage_in_bytes", "memory.limit_in_bytes"),
                                                    (2, "memory.current", "memory.max")])
def test_a_judge_case_caps_its_memory_at_its_usage_plus_the_allowance(
        tmp_path: Path, version: int, usage: str, limit: str) -> None:
    base = mechanism(tmp_path, version)
    for top in (base.memory.parent, base.pids.parent):
        top.mkdir(parents=True, exist_ok=True)
    job = JobCgroup(base, "job-ab")
    job.create()
    job.set_limits(1024, 64)
    (job.memory / usage).write_text("52428800\n")  # 50 MB in use as the case arms
    assert job.usage_bytes() == 50 * 2**20
    assert job.cap_memory_above_usage(160 * 2**20) is True
    assert (job.memory / limit).read_text() == str(210 * 2**20)
    if version == 1:  # memsw follows, so swap cannot hold the rest
        assert (job.memory / "memory.memsw.limit_in_bytes").read_text() == str(210 * 2**20)
    (job.memory / usage).write_text(f"{1000 * 2**20}\n")  # never above the job's own limit
    assert job.cap_memory_above_usage(160 * 2**20) is True
    assert (job.memory / limit).read_text() == str(210 * 2**20)
    (job.memory / limit).unlink()
    (job.memory / limit).mkdir()  # the kernel refuses: the case is told, nothing raises
    assert job.cap_memory_above_usage(160 * 2**20) is False


def test_optional_limit_files_may_be_missing_but_the_limits_may_not(tmp_path: Path) -> None:
    (tmp_path / "unified").mkdir()
    job = JobCgroup(mechanism(tmp_path, 2), "j")
    job.create()
    for optional in ("memory.swap.max", "memory.oom.group"):
        (job.memory / optional).mkdir()
    job.set_limits(1, 2)
    assert (job.memory / "memory.max").read_text() == "1048576"
    assert (job.pids / "pids.max").read_text() == "2"
    v1 = JobCgroup(mechanism(tmp_path / "v1", 1), "j")
    (tmp_path / "v1" / "memory").mkdir(parents=True)
    (tmp_path / "v1" / "pids").mkdir()
    v1.create()
    for optional in ("memory.memsw.limit_in_bytes", "memory.swappiness"):
        (v1.memory / optional).mkdir()
    v1.set_limits(1, 2)
    assert (v1.memory / "memory.limit_in_bytes").read_text() == "1048576"
    (v1.memory / "memory.limit_in_bytes").unlink()
    (v1.memory / "memory.limit_in_bytes").mkdir()
    with pytest.raises(IsADirectoryError):
        v1.set_limits(1, 2)


def test_a_leftover_job_cgroup_of_the_same_name_is_replaced(tmp_path: Path,
                                                            kills: list[tuple[int, int]]) -> None:
    (tmp_path / "unified").mkdir()
    job = JobCgroup(mechanism(tmp_path, 2), "j")
    (job.memory / "child").mkdir(parents=True)
    job.create()
    assert job.memory.is_dir() and list(job.memory.iterdir()) == []
    job.create()  # the top exists already: fine
    assert job.memory.is_dir()
    (job.mechanism.memory / "cgroup.subtree_control").unlink()
    (job.mechanism.memory / "cgroup.subtree_control").mkdir()  # not writable: still created
    other = JobCgroup(job.mechanism, "k")
    other.create()
    assert other.memory.is_dir()


def test_a_job_process_joins_each_hierarchy(tmp_path: Path, writes: list[tuple[str, str]]) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "pids").mkdir()
    job = JobCgroup(mechanism(tmp_path, 1), "j")
    job.create()
    writes.clear()
    job.add(4242)
    assert sorted(writes) == [("j/cgroup.procs", "4242")] * 2
    assert (job.memory / "cgroup.procs").read_text() == (job.pids / "cgroup.procs").read_text() == "4242"


@pytest.mark.parametrize("version", [1, 2])
def test_counters_and_peak_come_from_the_kernels_files(tmp_path: Path, version: int) -> None:
    (tmp_path / "unified").mkdir()
    (tmp_path / "memory").mkdir()
    (tmp_path / "pids").mkdir()
    job = JobCgroup(mechanism(tmp_path, version), "j")
    job.create()
    assert job.counters() == Counters(0, 0) and job.peak_bytes() == 0
    if version == 2:
        (job.memory / "memory.events").write_text("low 0\nhigh 0\nmax 5\noom 2\noom_kill 1\n")
        (job.memory / "memory.peak").write_text("1048576\n")
    else:
        (job.memory / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 4\n")
        (job.memory / "memory.max_usage_in_bytes").write_text("2097152\n")
    (job.pids / "pids.events").write_text("max 3\n")
    assert job.counters() == Counters(1 if version == 2 else 4, 3)
    assert job.peak_bytes() == (1048576 if version == 2 else 2097152)
    job.reset_peak()
    assert job.peak_bytes() == 0
    name = "memory.peak" if version == 2 else "memory.max_usage_in_bytes"
    assert (job.memory / name).read_text() == "0"


def test_resetting_the_peak_of_a_vanished_cgroup_is_harmless(tmp_path: Path) -> None:
    job = JobCgroup(mechanism(tmp_path, 2), "gone")
    job.reset_peak()
    assert not job.memory.exists()


def test_the_oom_eventfd_is_registered_on_v1_only(tmp_path: Path) -> None:
    (tmp_path / "unified").mkdir()
    assert JobCgroup(mechanism(tmp_path, 2), "j").oom_eventfd() is None
    (tmp_path / "memory").mkdir()
    (tmp_path / "pids").mkdir()
    job = JobCgroup(mechanism(tmp_path, 1), "j")
    job.create()
    (job.memory / "memory.oom_control").write_text("oom_kill 0\n")
    efd = job.oom_eventfd()
    assert efd is not None
    try:
        efd_text, control_text = (job.memory / "cgroup.event_control").read_text().split()
        assert efd_text == str(efd)
        os.eventfd_write(efd, 1)
        assert os.eventfd_read(efd) == 1
        with pytest.raises(BlockingIOError):
            os.eventfd_read(efd)  # non-blocking
        assert os.get_inheritable(efd) is False
        with pytest.raises(OSError):
            os.fstat(int(control_text))  # the control file's fd is closed again
    finally:
        os.close(efd)
    (job.memory / "cgroup.event_control").unlink()
    (job.memory / "cgroup.event_control").mkdir()
    before = sorted(os.listdir("/proc/self/fd"))
    assert job.oom_eventfd() is None
    assert sorted(os.listdir("/proc/self/fd")) == before


def test_members_kill_and_remove_cover_both_hierarchies(tmp_path: Path,
                                                        kills: list[tuple[int, int]]) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "pids").mkdir()
    job = JobCgroup(mechanism(tmp_path, 1), "j")
    job.create()
    assert job.members() == [] and job.kill_all() is True
    (job.memory / "cgroup.procs").write_text("30\n10\n")
    (job.pids / "cgroup.procs").write_text("20\n10\n")
    assert job.members() == [10, 20, 30]
    (job.memory / "cgroup.procs").unlink()
    (job.pids / "cgroup.procs").unlink()
    job.remove()
    assert not job.memory.exists() and not job.pids.exists()
    assert (tmp_path / "memory" / "torchdrill-i").is_dir()
    cgroups.remove_instance(job.mechanism)
    assert list((tmp_path / "memory").iterdir()) == list((tmp_path / "pids").iterdir()) == []


def test_job_kill_all_is_false_when_one_hierarchy_keeps_refilling(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kills: list[tuple[int, int]]) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "pids").mkdir()
    job = JobCgroup(mechanism(tmp_path, 1), "j")
    job.create()
    (job.pids / "cgroup.procs").write_text("77\n")
    monkeypatch.setattr(cgroups, "KILL_ROUNDS", 3)
    assert job.kill_all() is False
    assert kills == [(77, 9)] * 3


def test_stale_instances_of_dead_workers_are_swept(tmp_path: Path, proc: Path,
                                                   kills: list[tuple[int, int]]) -> None:
    (proc / "456").mkdir()
    mine = Mechanism(1, tmp_path / "memory" / "torchdrill-123-own", tmp_path / "pids" / "torchdrill-123-own",
                     True)
    names = ["torchdrill-123-own", "torchdrill-123-old", "torchdrill-456-alive", "torchdrill-abc",
             "torchdrill-", "other-123-x", "torchdrill-789"]
    for hierarchy in ("memory", "pids"):
        for name in names:
            (tmp_path / hierarchy / name / "slot0").mkdir(parents=True)
    cgroups.sweep_stale(mine)
    kept = ["other-123-x", "torchdrill-", "torchdrill-123-own", "torchdrill-456-alive", "torchdrill-abc"]
    for hierarchy in ("memory", "pids"):
        assert sorted(p.name for p in (tmp_path / hierarchy).iterdir()) == kept
    cgroups.sweep_stale(Mechanism(2, tmp_path / "absent" / "x", tmp_path / "absent" / "x", True))
