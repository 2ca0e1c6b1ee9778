"""Issues 30/31: the worker's cgroup v2 set-up against the real kernel, not a directory tree.

The kernel enables a controller for a cgroup's children only while that cgroup holds no
processes ("no internal processes"); the worker lives in its own cgroup, so it must first
move every process of that cgroup into a leaf (`<own>/worker`). These tests build such a
cgroup under this host's real cgroup2 mount, put a live process in it, and let
`cgroups.find` set it up. They need root and a cgroup2 mount. Where memory and pids are
bound to cgroup v1 (a hybrid host such as the CI machine) they are not offered on v2, so the
tests use a controller v2 does offer (hugetlb, enabled at the v2 root for the test and
disabled again) in their place: that proves the leaf move, the write order and the job
cgroups beside the leaf, not the memory and pids limits themselves.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from runner import cgroups
from runner.cgroups import JobCgroup, Mechanism

REAL_PATH = Path


def _cgroup2_mount() -> Path | None:
    with contextlib.suppress(OSError):
        for line in REAL_PATH("/proc/self/mounts").read_text().splitlines():
            fields = line.split()
            if fields[2] == "cgroup2" and "rw" in fields[3].split(","):
                return REAL_PATH(fields[1])
    return None


MOUNT = _cgroup2_mount()
pytestmark = pytest.mark.skipif(os.geteuid() != 0 or MOUNT is None,
                                reason="needs root and a read-write cgroup2 mount")


@dataclass
class Host:
    mount: Path
    controllers: tuple[str, ...]  # what stands for memory and pids here


@pytest.fixture
def host(monkeypatch: pytest.MonkeyPatch) -> Iterator[Host]:
    assert MOUNT is not None
    offered = (MOUNT / "cgroup.controllers").read_text().split()
    enabled = (MOUNT / "cgroup.subtree_control").read_text().split()
    if set(cgroups.V2_REQUIRED) <= set(enabled):
        controllers = cgroups.V2_REQUIRED  # a v2 host: the real thing
    elif [c for c in offered if c not in cgroups.V2_REQUIRED]:
        controllers = (next(c for c in offered if c not in cgroups.V2_REQUIRED),)
        monkeypatch.setattr(cgroups, "V2_REQUIRED", controllers)
        monkeypatch.setattr(cgroups, "V2_OPTIONAL", ())
    else:
        pytest.skip("the cgroup2 root offers no controller to test with")
    ours = [c for c in controllers if c not in enabled]
    for name in ours:  # the root cgroup may hold processes: the rule exempts it
        try:
            (MOUNT / "cgroup.subtree_control").write_text(f"+{name}")
        except OSError as exc:  # a namespace's root holding processes is not exempt
            pytest.skip(f"cannot enable {name} at {MOUNT}: {exc.strerror}")
    monkeypatch.setattr(cgroups, "ROOT", MOUNT)
    try:
        yield Host(MOUNT, controllers)
    finally:
        for name in ours:
            with contextlib.suppress(OSError):
                (MOUNT / "cgroup.subtree_control").write_text(f"-{name}")


@pytest.fixture
def worker_cgroup(host: Host, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, list[int]]]:
    """A cgroup holding two live processes, named as the worker's own in /proc/self/cgroup."""
    own = host.mount / f"torchdrill-test-{uuid.uuid4().hex[:12]}"
    own.mkdir()
    children = [subprocess.Popen(["sleep", "60"]) for _ in range(2)]
    for child in children:
        (own / "cgroup.procs").write_text(str(child.pid))
    monkeypatch.setattr(cgroups, "_own_paths", lambda: {"": f"/{own.name}"})
    try:
        yield own, [c.pid for c in children]
    finally:
        for child in children:
            child.kill()
            child.wait(timeout=10)
        for directory in sorted((d for d in own.rglob("*") if d.is_dir()), reverse=True):
            directory.rmdir()
        own.rmdir()


def test_the_kernel_refuses_controllers_for_a_cgroup_with_processes(
        host: Host, worker_cgroup: tuple[Path, list[int]]) -> None:
    """What the worker met before: its own cgroup still held it, so this write failed."""
    own, _ = worker_cgroup
    with pytest.raises(OSError) as refused:
        (own / "cgroup.subtree_control").write_text(f"+{host.controllers[0]}")
    assert refused.value.errno == errno.EBUSY


def test_the_worker_moves_into_a_leaf_and_jobs_get_controllers_beside_it(
        host: Host, worker_cgroup: tuple[Path, list[int]], monkeypatch: pytest.MonkeyPatch) -> None:
    own, pids = worker_cgroup
    top = own / "torchdrill-t"
    found = cgroups.find("t")
    assert found == Mechanism(2, top, top, swap_accounted=True,
                              cpu=top if "cpu" in cgroups.V2_OPTIONAL else None)
    assert (own / "cgroup.procs").read_text() == ""
    assert sorted(int(p) for p in (own / "worker" / "cgroup.procs").read_text().split()) == sorted(pids)
    assert set(host.controllers) <= set((own / "cgroup.subtree_control").read_text().split())
    job = JobCgroup(found, "job-0123456789abcdef")
    job.create()
    assert set(host.controllers) <= set((job.memory / "cgroup.controllers").read_text().split())
    job.add(pids[0])  # the kernel takes a process into the job's leaf cgroup
    assert (job.memory / "cgroup.procs").read_text().split() == [str(pids[0])]
    assert cgroups.find("t") == found  # again: nothing nests, nothing moves back
    monkeypatch.setattr(cgroups, "_own_paths", lambda: {"": f"/{own.name}/worker"})
    assert cgroups.find("t") == found  # as /proc/self/cgroup reads from inside the leaf
    assert not (own / "worker" / "worker").exists()


def test_a_controller_the_v2_hierarchy_does_not_offer_is_refused_in_one_line(
        host: Host, worker_cgroup: tuple[Path, list[int]], monkeypatch: pytest.MonkeyPatch) -> None:
    own, pids = worker_cgroup
    offered = (own / "cgroup.controllers").read_text().split()
    monkeypatch.setattr(cgroups, "V2_REQUIRED", (*host.controllers, "nosuch"))
    with pytest.raises(cgroups.Unavailable) as refused:
        cgroups.find("t")
    assert str(refused.value) == (
        f"cgroup v2: controller nosuch not available in {own} (it offers: {' '.join(offered)}); "
        "the parent cgroup must delegate them (systemd: Delegate=yes; Docker: cgroup v2 with "
        "--cgroupns=private)")
    assert sorted(int(p) for p in (own / "cgroup.procs").read_text().split()) == sorted(pids)


ENTRYPOINT = REAL_PATH(__file__).parent.parent.parent / "docker" / "runner-entrypoint.sh"


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs util-linux unshare")
def test_the_entrypoint_roots_a_cgroup_namespace_where_only_its_subtree_is_mounted() -> None:
    """As an engine that mounts only the container's cgroup: /proc/self/cgroup must then say
    "/", or the worker would look for its cgroup where it is not mounted."""
    assert MOUNT is not None
    own = MOUNT / f"torchdrill-test-{uuid.uuid4().hex[:12]}"
    own.mkdir()
    try:
        script = (f'echo $$ > {own}/cgroup.procs && mount --bind {own} /sys/fs/cgroup && '
                  f'exec sh {ENTRYPOINT} cat /proc/self/cgroup')
        done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True,
                              text=True, timeout=30, check=False)
        assert (done.returncode, done.stderr) == (0, "")
        assert [line for line in done.stdout.splitlines() if line.startswith("0::")] == ["0::/"]
    finally:
        own.rmdir()
