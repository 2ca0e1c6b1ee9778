"""What isolation this host can give a snippet, and the command that starts a sandbox.

Two levels, detected (never assumed):
- `full`: bubblewrap works here, the worker is root, cgroups give kernel memory and pids
  limits, and libseccomp builds the syscall filters. The template runs in new network,
  PID, IPC, UTS and mount namespaces with a minimal read-only filesystem (the Python
  install only, not the bot's files) and an empty environment; each job gets its own IPC
  and mount namespaces, fresh tmpfs scratch space and an unprivileged uid.
- `weak`: any of those missing. Jobs still get rlimits, a session of their own, a
  scrubbed environment and (as root) an unprivileged uid. Workers refuse this unless
  `allow_weak_isolation` is set. Threat model: runner/README.md.

A missing cgroup `cpu` controller (no per-job CPU share) is a warning, not a step down to
`weak`: the levels are about what a job can read, reach or keep, and fairness is about time.
Without it a hostile job can make another member's concurrent job run slower, up to its
wall-time limit, but not see or change it; the rate limit bounds how often; a host with one
slot has no one to be unfair to; and refusing would take `/run` off every host whose parent
cgroup delegates memory and pids but not cpu. So the report and the worker's start-up log say
it in a `!` line instead, and runner/README.md states the condition.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from pathlib import Path

from runner import cgroups, syscall_filter

ZYGOTE_SOURCE = Path(__file__).with_name("zygote.py")
ZYGOTE_IN_SANDBOX = "/opt/torchdrill/zygote.py"
KEEP_SOURCE = "/opt/torchdrill/keep"  # same as zygote.KEEP_SOURCE
TEMPLATE_CAPS = ("CAP_SYS_ADMIN", "CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_CHOWN",
                 "CAP_KILL", "CAP_DAC_OVERRIDE", "CAP_FOWNER")
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install -y bubblewrap)"


class Level(StrEnum):
    FULL = "full"
    WEAK = "weak"


class WeakIsolationError(RuntimeError):
    """Raised instead of silently running untrusted code with less isolation."""


@dataclass(frozen=True)
class Isolation:
    level: Level
    bwrap: str | None
    root: bool
    problem: str | None = None  # why the level is not full
    features: tuple[str, ...] = field(default=())
    cgroup_version: int | None = None  # kernel memory + pids limits in force, or None
    seccomp: bool = False
    warnings: tuple[str, ...] = field(default=())  # in force at any level, but weaker than it could be

    @property
    def per_job_scratch(self) -> bool:
        """Fresh IPC/mount namespaces and tmpfs per job (needs the template to be root)."""
        return self.bwrap is not None and self.root

    def describe(self) -> str:
        lines = [f"isolation level: {self.level.value}"]
        lines += [f"  - {f}" for f in self.features]
        if self.problem:
            lines.append(f"  ! {self.problem}")
        lines += [f"  ! {w}" for w in self.warnings]
        return "\n".join(lines)


def python_roots() -> list[str]:
    """Directories the sandboxed interpreter needs: the venv and the base install."""
    roots = {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix),
             os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))}
    # /usr is mounted anyway; nested roots are covered by their parent
    keep = sorted(r for r in roots if not r.startswith("/usr/") and r != "/usr")
    return [r for r in keep if not any(r != o and r.startswith(o + "/") for o in keep)]


GPU_SHARED_NODES = ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
                    "/dev/nvidia-modeset", "/dev/nvidia-caps")  # every GPU's job needs these


def gpu_devices(minor: int) -> list[str]:
    """The device nodes a GPU slot binds: its own GPU's `/dev/nvidia<minor>` and the shared
    control nodes present here, never another GPU's node (as container runtimes assign GPUs:
    the driver lists every GPU, a job opens only the one whose node it has)."""
    return [dev for dev in (f"/dev/nvidia{minor}", *GPU_SHARED_NODES) if os.path.exists(dev)]


def bwrap_command(bwrap: str, *, root: bool, disk_mb: int, env: dict[str, str],
                  gpu: int | None, seccomp_fd: int | None = None) -> list[str]:
    """The bubblewrap invocation for one zygote; `gpu` is the device minor of a GPU slot's GPU."""
    cmd = [bwrap, "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
           "--unshare-cgroup-try", "--die-with-parent", "--new-session",
           "--hostname", "sandbox", "--cap-drop", "ALL"]
    if root:
        # No user namespace, so the template can give each job its own uid. It keeps only
        # what that needs (fresh mount + IPC namespaces, setuid); each job child empties its
        # bounding set and loses the rest with setuid.
        cmd += [arg for cap in TEMPLATE_CAPS for arg in ("--cap-add", cap)]
    else:
        cmd += ["--unshare-user"]
    if seccomp_fd is not None:
        cmd += ["--seccomp", str(seccomp_fd)]
    cmd += ["--ro-bind", "/usr", "/usr"]
    for link in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        target = os.readlink(f"/{link}") if os.path.islink(f"/{link}") else None
        if target:
            cmd += ["--symlink", target, f"/{link}"]
        elif os.path.isdir(f"/{link}"):
            cmd += ["--ro-bind", f"/{link}", f"/{link}"]
    for etc in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
                "/etc/alternatives"):
        if os.path.exists(etc):
            cmd += ["--ro-bind", etc, etc]
    # the private /tmp first: a Python install living under /tmp (a CI checkout, say) is then
    # bound on top of it instead of being hidden by it
    cmd += ["--proc", "/proc", "--dev", "/dev",
            # root-owned 0755: the job uid can write nowhere but its own directory
            "--size", str(disk_mb * 1024 * 1024), "--perms", "0755", "--tmpfs", "/tmp",
            "--size", str(1024 * 1024), "--perms", "0755", "--tmpfs", "/dev/shm"]
    made: set[str] = set()
    for root_dir in python_roots():
        parts = Path(root_dir).parts
        for i in range(2, len(parts)):
            parent = str(Path(*parts[:i]))
            if parent not in made:  # bwrap would create these 0700 and the job uid could not pass
                cmd += ["--perms", "0755", "--dir", parent]
                made.add(parent)
        cmd += ["--ro-bind", root_dir, root_dir]
    for i, root_dir in enumerate(python_roots()):
        if root_dir.startswith("/tmp/"):  # each job's fresh /tmp binds it again from here
            cmd += ["--ro-bind", root_dir, f"{KEEP_SOURCE}/{i}"]
    cmd += ["--ro-bind", str(ZYGOTE_SOURCE), ZYGOTE_IN_SANDBOX]
    if gpu is not None:
        for dev in gpu_devices(gpu):
            cmd += ["--dev-bind", dev, dev]
        # CUDA and NVML read PCI, NUMA and CPU topology under /sys/bus, /sys/devices and
        # /sys/module; /sys/fs (the host's cgroup tree with every job's cgroup, bpf, fuse,
        # pstore) is covered by an empty read-only tmpfs
        cmd += ["--ro-bind", "/sys", "/sys", "--perms", "0555", "--tmpfs", "/sys/fs",
                "--remount-ro", "/sys/fs"]
    cmd += ["--clearenv"]
    for key, value in env.items():
        cmd += ["--setenv", key, value]
    cmd += ["--chdir", "/tmp", "--"]
    return cmd


def sandbox_python() -> str:
    return sys.executable


SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
BWRAP_ENV: dict[str, str] = {}  # bubblewrap itself starts with an empty environment


def sandbox_env() -> dict[str, str]:
    """What every process inside a sandbox starts with (a slot adds its own keys)."""
    return {"PATH": SANDBOX_PATH, "LANG": "C.UTF-8", "HOME": "/tmp", "MALLOC_ARENA_MAX": "2",
            "PYTHONDONTWRITEBYTECODE": "1", "USER": "sandbox"}


def _probe_bwrap(bwrap: str, root: bool, seccomp_ok: bool) -> str | None:
    """Start a real, tiny sandbox the way a slot starts one (the same bubblewrap arguments,
    interpreter, flags and environments, inside and out); None when it worked, else why not."""
    fd = seccomp_memfd() if seccomp_ok else None
    probe = [*bwrap_command(bwrap, root=root, disk_mb=8, env=sandbox_env(), gpu=None,
                            seccomp_fd=fd), sandbox_python(), "-I", "-c", "import os"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=30, check=False, env=BWRAP_ENV,
                              pass_fds=(fd,) if fd is not None else (), start_new_session=True)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap failed: {exc}"
    finally:
        if fd is not None:
            os.close(fd)
    if done.returncode != 0:
        return f"bubblewrap failed: {done.stderr.decode(errors='replace').strip()[:300]}"
    return None


def seccomp_memfd() -> int:
    """The sandbox-wide filter as an fd for `bwrap --seccomp` (read once, then closed)."""
    fd = os.memfd_create("torchdrill-seccomp", 0)
    os.write(fd, syscall_filter.sandbox_bpf())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


@lru_cache
def detect() -> Isolation:
    """Probe (cgroups by making one, bubblewrap by starting it) rather than trust `which`."""
    root = os.geteuid() == 0
    try:
        mechanism: cgroups.Mechanism | None = cgroups.find("probe")
        no_cgroups = None
    except cgroups.Unavailable as exc:
        mechanism, no_cgroups = None, str(exc)
    no_seccomp = syscall_filter.available()
    user = ("jobs run as an unprivileged per-instance, per-slot uid (worker is root)" if root
            else f"jobs run as the worker's own non-root uid {os.geteuid()}")
    if mechanism:
        limits = [f"memory and processes: {mechanism.describe()} (shmem, memfd, tmpfs "
                  "pages and threads count); the kernel's counters give the verdict"]
    else:
        limits = ["memory: only a PSS watchdog and RLIMIT_AS (no kernel memory limit)",
                  "processes: only RLIMIT_NPROC per uid"]
    common = [*limits,
              "rlimits: CPU time, open files, core dumps off (file size only without a "
              "per-job tmpfs); jobs are undumpable",
              "wall-time limit kills every process of the job",
              "clean template: jobs fork from a process that has only imported torch; "
              "code and output never pass through it",
              "scrubbed environment (no tokens, no database URL)"]
    bwrap = shutil.which("bwrap")
    problems = []
    if not bwrap:
        problems.append(f"bubblewrap not found; {INSTALL_HINT}")
    elif (failed := _probe_bwrap(bwrap, root, no_seccomp is None)) is not None:
        problems.append(failed)
        bwrap = None
    if no_cgroups:
        problems.append(f"no kernel memory limits: {no_cgroups}")
    if no_seccomp:
        problems.append(f"no seccomp filter: {no_seccomp}")
    if not root:
        problems.append("not root: jobs share the template's uid and /tmp")
    if bwrap:
        features = [
            "bubblewrap: network, PID, UTS namespaces; filesystem: read-only /usr and "
            "Python install, bot files not visible",
            "per job: new PID, IPC and mount namespaces, fresh size-capped tmpfs on /tmp "
            "and /dev/shm writable by the job, discarded at job end" if root else
            "per job: shared /tmp and /dev/shm, emptied after the job",
            ("seccomp (bwrap --seccomp, plus a stricter per-job filter): no new "
             "namespaces, mount, ptrace, process_vm_*, io_uring, bpf, perf_event_open, "
             "keyctl, kexec, modules, file watches; sockets: unix, IP and netlink route "
             "only" if no_seccomp is None else "NO seccomp filter"),
            "capabilities: bwrap --cap-drop ALL; jobs have an empty bounding set, "
            "no_new_privs" if root else "capabilities: none (user namespace)",
            user, *common]
    else:
        features = ["NO network namespace: snippets can reach the network",
                    "NO mount namespace: snippets can read world-readable files on this host",
                    user, *common]
    level = Level.FULL if bwrap and mechanism and no_seccomp is None and root else Level.WEAK
    no_cpu_share = (mechanism.no_cpu_share if mechanism else
                    f"{cgroups.NO_CPU_SHARE} (no cgroups); {cgroups.NO_CPU_SHARE_COST}")
    return Isolation(level, bwrap, root, "; ".join(problems) or None, tuple(features),
                     cgroup_version=mechanism.version if mechanism else None,
                     seccomp=no_seccomp is None,
                     warnings=(no_cpu_share,) if no_cpu_share else ())


def require(allow_weak: bool, isolation: Isolation | None = None) -> Isolation:
    """Refuse to serve jobs with weak isolation unless explicitly allowed."""
    iso = isolation or detect()
    if iso.level is Level.WEAK and not allow_weak:
        raise WeakIsolationError(
            "refusing to run untrusted snippets with weak isolation "
            f"({iso.problem}). Fix that, or set RUNNER_ALLOW_WEAK_ISOLATION=true "
            "to accept the risk.")
    return iso
