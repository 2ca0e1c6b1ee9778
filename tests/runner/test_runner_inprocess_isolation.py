"""Issue 21: mutation survivors of runner/isolation.py. The real detection runs once per process
and the bubblewrap command is only ever seen by bwrap; these call both in-process with the
host's answers (euid, cgroups, seccomp, bwrap, the filesystem) injected, and compare the exact
command and the exact text an operator reads."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from runner import cgroups, isolation, syscall_filter
from runner.cgroups import Mechanism
from runner.isolation import Isolation, Level, WeakIsolationError

KEEP = "/opt/torchdrill/keep"
ZYGOTE = str(isolation.ZYGOTE_SOURCE)


def test_isolation_describes_its_level_features_and_problem() -> None:
    weak = Isolation(Level.WEAK, None, False, "no bwrap; not root", ("one", "two"))
    assert weak.describe() == "isolation level: weak\n  - one\n  - two\n  ! no bwrap; not root"
    assert Isolation(Level.FULL, "/usr/bin/bwrap", True).describe() == "isolation level: full"
    assert (weak.cgroup_version, weak.seccomp) == (None, False)


@pytest.mark.parametrize(("bwrap", "root", "scratch"), [
    ("/usr/bin/bwrap", True, True), ("/usr/bin/bwrap", False, False), (None, True, False)])
def test_per_job_scratch_needs_bwrap_and_root(bwrap: str | None, root: bool, scratch: bool) -> None:
    assert Isolation(Level.WEAK, bwrap, root).per_job_scratch is scratch


# ---- python_roots -----------------------------------------------------------------------------


def roots_with(monkeypatch: pytest.MonkeyPatch, prefix: str, base: str, executable: str) -> list[str]:
    monkeypatch.setattr(isolation.sys, "prefix", prefix)
    monkeypatch.setattr(isolation.sys, "base_prefix", base)
    monkeypatch.setattr(isolation.sys, "executable", executable)
    return isolation.python_roots()


@pytest.mark.parametrize(("prefix", "base", "executable", "roots"), [
    ("/opt/venv", "/usr", "/opt/venv/bin/python", ["/opt/venv"]),
    ("/tmp/ci/venv", "/opt/py", "/opt/py/bin/python3", ["/opt/py", "/tmp/ci/venv"]),
    ("/opt/py/venv", "/opt/py", "/opt/py/venv/bin/python", ["/opt/py"]),
    ("/opt/py2", "/opt/py", "/opt/py/bin/python", ["/opt/py", "/opt/py2"]),
    ("/usr/local", "/usr", "/usr/local/bin/python3", []),
    ("/usrx/venv", "/usr", "/usrx/venv/bin/python", ["/usrx/venv"]),
    ("/srv/a", "/srv/b", "/srv/c/bin/python", ["/srv/a", "/srv/b", "/srv/c"]),
])
def test_python_roots_are_the_installs_outside_usr_without_nesting(
        monkeypatch: pytest.MonkeyPatch, prefix: str, base: str, executable: str, roots: list[str]) -> None:
    assert roots_with(monkeypatch, prefix, base, executable) == roots


# ---- bwrap_command ----------------------------------------------------------------------------


@pytest.fixture
def host(monkeypatch: pytest.MonkeyPatch) -> None:
    """A host with merged /bin and /lib, a real /sbin and /lib64, the /etc files, two GPUs
    (/dev/nvidia0, /dev/nvidia1) with their shared nodes but no nvidia-modeset, and Python
    installed in /opt/py with a venv under /tmp."""
    links = {"/bin": "usr/bin", "/lib": "usr/lib", "/libx32": "usr/libx32"}
    dirs = {"/sbin", "/lib64", "/lib32", "/bin", "/lib"}
    files = {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
             "/etc/alternatives", *NVIDIA_NODES}
    monkeypatch.setattr(isolation.os.path, "islink", lambda p: p in links)
    monkeypatch.setattr(isolation.os, "readlink", lambda p: links[p])
    monkeypatch.setattr(isolation.os.path, "isdir", lambda p: p in dirs)
    monkeypatch.setattr(isolation.os.path, "exists", lambda p: p in files)
    monkeypatch.setattr(isolation, "python_roots", lambda: ["/opt/py", "/tmp/ci/venv"])


NVIDIA_NODES = ("/dev/nvidia0", "/dev/nvidia1", "/dev/nvidiactl", "/dev/nvidia-uvm",
                "/dev/nvidia-uvm-tools", "/dev/nvidia-caps")


HEAD = ["bwrap", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
        "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--hostname", "sandbox",
        "--cap-drop", "ALL"]
CAPS = ["--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
        "--cap-add", "CAP_SETPCAP", "--cap-add", "CAP_CHOWN", "--cap-add", "CAP_KILL",
        "--cap-add", "CAP_DAC_OVERRIDE", "--cap-add", "CAP_FOWNER"]
FILESYSTEM = ["--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
              "--ro-bind", "/sbin", "/sbin", "--symlink", "usr/lib", "/lib",
              "--ro-bind", "/lib32", "/lib32", "--ro-bind", "/lib64", "/lib64",
              "--symlink", "usr/libx32", "/libx32",
              "--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache",
              "--ro-bind", "/etc/ld.so.conf", "/etc/ld.so.conf",
              "--ro-bind", "/etc/ld.so.conf.d", "/etc/ld.so.conf.d",
              "--ro-bind", "/etc/localtime", "/etc/localtime",
              "--ro-bind", "/etc/alternatives", "/etc/alternatives",
              "--proc", "/proc", "--dev", "/dev",
              "--size", str(64 * 1024 * 1024), "--perms", "0755", "--tmpfs", "/tmp",
              "--size", "1048576", "--perms", "0755", "--tmpfs", "/dev/shm",
              "--perms", "0755", "--dir", "/opt", "--ro-bind", "/opt/py", "/opt/py",
              "--perms", "0755", "--dir", "/tmp", "--perms", "0755", "--dir", "/tmp/ci",
              "--ro-bind", "/tmp/ci/venv", "/tmp/ci/venv",
              "--ro-bind", "/tmp/ci/venv", f"{KEEP}/1",
              "--ro-bind", ZYGOTE, "/opt/torchdrill/zygote.py"]


def test_the_root_cpu_command_keeps_the_template_caps(host: None) -> None:
    cmd = isolation.bwrap_command("bwrap", root=True, disk_mb=64, env={"PATH": "/usr/bin", "A": "b"},
                                  gpu=None, seccomp_fd=7)
    assert cmd == [*HEAD, *CAPS, "--seccomp", "7", *FILESYSTEM, "--clearenv",
                   "--setenv", "PATH", "/usr/bin", "--setenv", "A", "b", "--chdir", "/tmp", "--"]


SHARED_GPU_NODES = ["--dev-bind", "/dev/nvidiactl", "/dev/nvidiactl",
                    "--dev-bind", "/dev/nvidia-uvm", "/dev/nvidia-uvm",
                    "--dev-bind", "/dev/nvidia-uvm-tools", "/dev/nvidia-uvm-tools",
                    "--dev-bind", "/dev/nvidia-caps", "/dev/nvidia-caps"]
SYS_WITHOUT_CGROUPS = ["--ro-bind", "/sys", "/sys",
                       "--perms", "0555", "--tmpfs", "/sys/fs", "--remount-ro", "/sys/fs"]


def test_the_unprivileged_gpu_command_has_a_user_namespace_and_the_devices(host: None) -> None:
    cmd = isolation.bwrap_command("bwrap", root=False, disk_mb=64, env={}, gpu=0)
    assert cmd == [*HEAD, "--unshare-user", *FILESYSTEM,
                   "--dev-bind", "/dev/nvidia0", "/dev/nvidia0", *SHARED_GPU_NODES,
                   *SYS_WITHOUT_CGROUPS, "--clearenv", "--chdir", "/tmp", "--"]


@pytest.mark.parametrize(("minor", "other"), [(0, "/dev/nvidia1"), (1, "/dev/nvidia0")])
def test_a_gpu_slot_binds_only_its_own_gpu_and_hides_the_cgroup_tree(host: None, minor: int,
                                                                     other: str) -> None:
    cmd = isolation.bwrap_command("bwrap", root=True, disk_mb=64, env={}, gpu=minor, seccomp_fd=3)
    binds = [cmd[i + 1] for i, arg in enumerate(cmd) if arg == "--dev-bind"]
    assert binds == [f"/dev/nvidia{minor}", "/dev/nvidiactl", "/dev/nvidia-uvm",
                     "/dev/nvidia-uvm-tools", "/dev/nvidia-caps"]
    assert other not in cmd and "/dev/nvidia-modeset" not in cmd  # absent on this host
    # /sys/fs (and so /sys/fs/cgroup, every job's cgroup) is covered after /sys is bound
    start = cmd.index("/sys") - 1
    assert cmd[start:start + len(SYS_WITHOUT_CGROUPS)] == SYS_WITHOUT_CGROUPS
    assert isolation.gpu_devices(minor) == binds


def test_a_cpu_slot_binds_no_gpu_node_and_no_sys(host: None) -> None:
    cmd = isolation.bwrap_command("bwrap", root=True, disk_mb=64, env={}, gpu=None)
    assert not [arg for arg in cmd if arg.startswith(("/dev/nvidia", "/sys"))]


def test_every_parent_of_a_deep_install_is_made_passable_once(
        host: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(isolation, "python_roots", lambda: ["/srv/a/b/py", "/srv/a/c"])
    cmd = isolation.bwrap_command("bwrap", root=True, disk_mb=8, env={}, gpu=None, seccomp_fd=0)
    assert cmd[cmd.index("--seccomp") + 1] == "0"
    start = cmd.index("/dev/shm") + 1
    assert cmd[start:cmd.index("--clearenv")] == [
        "--perms", "0755", "--dir", "/srv", "--perms", "0755", "--dir", "/srv/a",
        "--perms", "0755", "--dir", "/srv/a/b", "--ro-bind", "/srv/a/b/py", "/srv/a/b/py",
        "--ro-bind", "/srv/a/c", "/srv/a/c", "--ro-bind", ZYGOTE, "/opt/torchdrill/zygote.py"]
    assert cmd[cmd.index("/tmp") - 5:cmd.index("/tmp") + 1] == [
        "--size", str(8 * 1024 * 1024), "--perms", "0755", "--tmpfs", "/tmp"]


def test_the_real_command_binds_this_python() -> None:
    cmd = isolation.bwrap_command("/usr/bin/bwrap", root=False, disk_mb=1, env={}, gpu=None)
    for root in isolation.python_roots():
        assert cmd[cmd.index(root) - 1:cmd.index(root) + 2] == ["--ro-bind", root, root]
    assert cmd[-3:] == ["--chdir", "/tmp", "--"] and cmd[0] == "/usr/bin/bwrap"


# ---- probing bubblewrap and seccomp -----------------------------------------------------------


class Run:
    def __init__(self, returncode: int = 0, stderr: bytes = b"", error: Exception | None = None) -> None:
        self.returncode, self.stderr, self.error = returncode, stderr, error
        self.calls: list[tuple[list[str], dict[str, Any]]] = []

    def __call__(self, args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        self.calls.append((args, kwargs))
        if self.error:
            raise self.error
        return subprocess.CompletedProcess(args, self.returncode, b"", self.stderr)


@pytest.fixture
def memfds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    made: list[int] = []

    def memfd() -> int:
        made.append(os.memfd_create("test-seccomp", 0))
        return made[-1]

    monkeypatch.setattr(isolation, "seccomp_memfd", memfd)
    return made


def closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return True
    os.close(fd)
    return False


def test_a_working_probe_passes_the_filter_and_closes_it(monkeypatch: pytest.MonkeyPatch,
                                                         memfds: list[int]) -> None:
    run = Run()
    monkeypatch.setattr(isolation.subprocess, "run", run)
    assert isolation._probe_bwrap("/usr/bin/bwrap", True, True) is None
    [fd] = memfds
    [(args, kwargs)] = run.calls
    assert args[:1] == ["/usr/bin/bwrap"] and "--cap-add" in args
    assert args[args.index("--seccomp") + 1] == str(fd)
    assert args[args.index("--size") + 1] == str(8 * 1024 * 1024)
    assert args[args.index("--clearenv"):] == [
        "--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "LANG", "C.UTF-8",
        "--setenv", "HOME", "/tmp", "--setenv", "MALLOC_ARENA_MAX", "2", "--setenv", "PYTHONDONTWRITEBYTECODE",
        "1", "--setenv", "USER", "sandbox", "--chdir", "/tmp", "--", sys.executable, "-I", "-c", "import os"]
    assert "--dev-bind" not in args and "/sys" not in args
    # bubblewrap itself gets the empty environment a slot gives it, not the worker's
    assert kwargs == {"capture_output": True, "timeout": 30, "check": False, "env": {},
                      "pass_fds": (fd,), "start_new_session": True}
    assert closed(fd)


def test_a_probe_without_seccomp_passes_no_fd(monkeypatch: pytest.MonkeyPatch, memfds: list[int]) -> None:
    run = Run()
    monkeypatch.setattr(isolation.subprocess, "run", run)
    assert isolation._probe_bwrap("bwrap", False, False) is None
    [(args, kwargs)] = run.calls
    assert memfds == [] and "--seccomp" not in args and "--unshare-user" in args
    assert kwargs["pass_fds"] == ()


@pytest.mark.parametrize(("make", "problem"), [
    (lambda: Run(1, b"  bwrap: No permissions to create new namespace\n"),
     "bubblewrap failed: bwrap: No permissions to create new namespace"),
    (lambda: Run(1, b"x" * 400), "bubblewrap failed: " + "x" * 300),
    (lambda: Run(1, b"bad \xff byte"), "bubblewrap failed: bad \ufffd byte"),
    (lambda: Run(error=OSError("no such file")), "bubblewrap failed: no such file"),
    (lambda: Run(error=subprocess.TimeoutExpired(["bwrap"], 30)),
     "bubblewrap failed: Command '['bwrap']' timed out after 30 seconds"),
])
def test_a_failing_probe_says_why_and_closes_the_filter(monkeypatch: pytest.MonkeyPatch, memfds: list[int],
                                                        make: Callable[[], Run], problem: str) -> None:
    monkeypatch.setattr(isolation.subprocess, "run", make())
    assert isolation._probe_bwrap("bwrap", True, True) == problem
    assert closed(memfds[0])


def test_the_sandbox_filter_is_a_readable_memfd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(syscall_filter, "sandbox_bpf", lambda: b"\x01\x02program")
    fd = isolation.seccomp_memfd()
    try:
        assert os.read(fd, 100) == b"\x01\x02program"
        assert os.readlink(f"/proc/self/fd/{fd}") == "/memfd:torchdrill-seccomp (deleted)"
        assert os.get_inheritable(fd) is True  # no MFD_CLOEXEC: bwrap inherits it
    finally:
        os.close(fd)


# ---- detect and require -----------------------------------------------------------------------


V1 = Mechanism(1, Path("/m/w/torchdrill-probe"), Path("/p/w/torchdrill-probe"), True,
               cpu=Path("/c/w/torchdrill-probe"))
LIMITS_V1 = ("memory and processes: cgroup v1: memory.limit_in_bytes + memory.memsw under /m/w, "
             "pids.max under /p/w, cpu.shares per job under /c/w (shmem, memfd, tmpfs pages and "
             "threads count); the kernel's counters give the verdict")
NO_CPU_COST = ("jobs running at once compete per process, so a job with many busy processes can "
               "push another member's job past its wall-time limit")
COMMON = ["rlimits: CPU time, open files, core dumps off (file size only without a per-job tmpfs); "
          "jobs are undumpable",
          "wall-time limit kills every process of the job",
          "clean template: jobs fork from a process that has only imported torch; code and "
          "output never pass through it",
          "scrubbed environment (no tokens, no database URL)"]
NO_CGROUPS = ["memory: only a PSS watchdog and RLIMIT_AS (no kernel memory limit)",
              "processes: only RLIMIT_NPROC per uid"]
BWRAP = ("bubblewrap: network, PID, UTS namespaces; filesystem: read-only /usr and Python install, "
         "bot files not visible")
SECCOMP = ("seccomp (bwrap --seccomp, plus a stricter per-job filter): no new namespaces, mount, "
           "ptrace, process_vm_*, io_uring, bpf, perf_event_open, keyctl, kexec, modules, file watches; "
           "sockets: unix, IP and netlink route only")
ROOT_USER = "jobs run as an unprivileged per-instance, per-slot uid (worker is root)"
CGROUPS_WHY = ("cgroup v2: controller memory, pids not available in /sys/fs/cgroup/w (it offers: "
               "hugetlb); the parent cgroup must delegate them (systemd: Delegate=yes; Docker: "
               "cgroup v2 with --cgroupns=private)")
NO_KERNEL = f"no kernel memory limits: {CGROUPS_WHY}"


def fake_host(monkeypatch: pytest.MonkeyPatch, *, euid: int = 0, mechanism: Mechanism | None = V1,
              no_seccomp: str | None = None, bwrap: str | None = "/usr/bin/bwrap",
              probe: str | None = None) -> list[tuple[Any, ...]]:
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(isolation.os, "geteuid", lambda: euid)

    def find_cgroups(instance: str) -> Mechanism:
        calls.append(("cgroups", instance))
        if mechanism is None:
            raise cgroups.Unavailable(CGROUPS_WHY)
        return mechanism

    def probe_bwrap(path: str, root: bool, seccomp_ok: bool) -> str | None:
        calls.append(("probe", path, root, seccomp_ok))
        return probe

    monkeypatch.setattr(cgroups, "find", find_cgroups)
    monkeypatch.setattr(syscall_filter, "available", lambda: no_seccomp)
    monkeypatch.setattr(isolation.shutil, "which", lambda name: bwrap if name == "bwrap" else None)
    monkeypatch.setattr(isolation, "_probe_bwrap", probe_bwrap)
    return calls


def detect() -> Isolation:
    return isolation.detect.__wrapped__()  # type: ignore[attr-defined,no-any-return]


def test_a_full_host(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = fake_host(monkeypatch)
    assert detect() == Isolation(
        Level.FULL, "/usr/bin/bwrap", True, None,
        (BWRAP, "per job: new PID, IPC and mount namespaces, fresh size-capped tmpfs on /tmp and /dev/shm "
         "writable by the job, discarded at job end", SECCOMP,
         "capabilities: bwrap --cap-drop ALL; jobs have an empty bounding set, no_new_privs",
         ROOT_USER, LIMITS_V1, *COMMON), cgroup_version=1, seccomp=True)
    assert calls == [("cgroups", "probe"), ("probe", "/usr/bin/bwrap", True, True)]


def test_a_host_without_bubblewrap(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = fake_host(monkeypatch, bwrap=None)
    found = detect()
    assert found == Isolation(
        Level.WEAK, None, True,
        "bubblewrap not found; install bubblewrap (Debian/Ubuntu: apt-get install -y bubblewrap)",
        ("NO network namespace: snippets can reach the network",
         "NO mount namespace: snippets can read world-readable files on this host",
         ROOT_USER, LIMITS_V1, *COMMON), cgroup_version=1, seccomp=True)
    assert calls == [("cgroups", "probe")]


def test_a_host_where_bubblewrap_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_host(monkeypatch, probe="bubblewrap failed: no user namespaces", no_seccomp="libseccomp missing")
    found = detect()
    assert (found.level, found.bwrap, found.seccomp, found.cgroup_version) == (Level.WEAK, None, False, 1)
    assert found.problem == "bubblewrap failed: no user namespaces; no seccomp filter: libseccomp missing"
    assert found.features[:2] == ("NO network namespace: snippets can reach the network",
                                  "NO mount namespace: snippets can read world-readable files on this host")


def test_an_unprivileged_host_without_cgroups_or_seccomp(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = fake_host(monkeypatch, euid=1000, mechanism=None, no_seccomp="no libseccomp")
    assert detect() == Isolation(
        Level.WEAK, "/usr/bin/bwrap", False,
        f"{NO_KERNEL}; no seccomp filter: no libseccomp; "
        "not root: jobs share the template's uid and /tmp",
        (BWRAP, "per job: shared /tmp and /dev/shm, emptied after the job", "NO seccomp filter",
         "capabilities: none (user namespace)", "jobs run as the worker's own non-root uid 1000",
         *NO_CGROUPS, *COMMON), cgroup_version=None, seccomp=False,
        warnings=("no per-job CPU share: the cgroup cpu controller is not the worker's (no "
                  f"cgroups); {NO_CPU_COST}",))
    assert calls[-1] == ("probe", "/usr/bin/bwrap", False, False)


def test_a_full_host_without_the_cpu_controller_stays_full_and_says_fairness_is_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    top = Path("/sys/fs/cgroup/w/torchdrill-probe")
    fake_host(monkeypatch, mechanism=Mechanism(2, top, top, True))
    found = detect()
    assert (found.level, found.problem) == (Level.FULL, None)
    no_share = ("no per-job CPU share: the cgroup cpu controller is not the worker's (cgroup v2: "
                f"/sys/fs/cgroup/w does not enable cpu for its children); {NO_CPU_COST}")
    assert found.warnings == (no_share,)
    assert found.describe().splitlines()[0] == "isolation level: full"
    assert found.describe().splitlines()[-1] == f"  ! {no_share}"



@pytest.mark.parametrize(("kwargs", "problem"), [
    ({"mechanism": None}, NO_KERNEL),
    ({"no_seccomp": "old kernel"}, "no seccomp filter: old kernel"),
    ({"euid": 5}, "not root: jobs share the template's uid and /tmp"),
])
def test_any_one_missing_piece_makes_it_weak(monkeypatch: pytest.MonkeyPatch, kwargs: dict[str, Any],
                                             problem: str) -> None:
    fake_host(monkeypatch, **kwargs)
    found = detect()
    assert (found.level, found.problem) == (Level.WEAK, problem)
    assert found.bwrap == "/usr/bin/bwrap"


WEAK = Isolation(Level.WEAK, None, True, "bubblewrap not found")
FULL = Isolation(Level.FULL, "/usr/bin/bwrap", True)


def test_weak_isolation_is_refused_unless_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(WeakIsolationError) as refused:
        isolation.require(False, WEAK)
    assert str(refused.value) == (
        "refusing to run untrusted snippets with weak isolation (bubblewrap not found). Fix that, "
        "or set RUNNER_ALLOW_WEAK_ISOLATION=true to accept the risk.")
    assert isolation.require(True, WEAK) is WEAK
    assert isolation.require(False, FULL) is FULL
    monkeypatch.setattr(isolation, "detect", lambda: WEAK)
    assert isolation.require(True) is WEAK
    with pytest.raises(WeakIsolationError):
        isolation.require(False)
    monkeypatch.setattr(isolation, "detect", lambda: FULL)
    assert isolation.require(False) is FULL


def test_a_host_without_libseccomp_refuses_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    # pyseccomp's import raises RuntimeError (not ImportError) when libseccomp.so is missing
    import ctypes.util

    real = ctypes.util.find_library
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None if name == "seccomp" else real(name))
    monkeypatch.delitem(sys.modules, "pyseccomp", raising=False)
    assert syscall_filter.available() == (
        "libseccomp failed to load: Unable to find libseccomp (apt-get install -y libseccomp2)")
    monkeypatch.setattr(isolation.os, "geteuid", lambda: 0)
    monkeypatch.setattr(cgroups, "find", lambda instance: V1)
    monkeypatch.setattr(isolation.shutil, "which", lambda name: None)
    with pytest.raises(WeakIsolationError) as refused:
        isolation.require(False, detect())
    assert str(refused.value) == (
        "refusing to run untrusted snippets with weak isolation (bubblewrap not found; install "
        "bubblewrap (Debian/Ubuntu: apt-get install -y bubblewrap); no seccomp filter: libseccomp "
        "failed to load: Unable to find libseccomp (apt-get install -y libseccomp2)). Fix that, or set "
        "RUNNER_ALLOW_WEAK_ISOLATION=true to accept the risk.")
