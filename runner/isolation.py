"""What isolation this host can give a snippet, and the command that starts a sandbox.

Two levels, detected (never assumed):
- `full`: bubblewrap works here. The zygote runs in new network, PID, IPC, UTS and mount
  namespaces with a minimal read-only filesystem (the Python install only, not the bot's
  files), a size-capped private /tmp, and an empty environment. When the worker is root,
  jobs run as an unprivileged per-slot uid, so they cannot signal the zygote.
- `weak`: no bubblewrap. Jobs still get rlimits, a session of their own, a scrubbed
  environment and (as root) an unprivileged uid, but share the host's network and
  filesystem. Workers refuse this unless `allow_weak_isolation` is set.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from pathlib import Path

ZYGOTE_SOURCE = Path(__file__).with_name("zygote.py")
ZYGOTE_IN_SANDBOX = "/opt/torchdrill/zygote.py"
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
    problem: str | None = None  # why bubblewrap could not be used
    features: tuple[str, ...] = field(default=())

    def describe(self) -> str:
        lines = [f"isolation level: {self.level.value}"]
        lines += [f"  - {f}" for f in self.features]
        if self.problem:
            lines.append(f"  ! {self.problem}")
        return "\n".join(lines)


def python_roots() -> list[str]:
    """Directories the sandboxed interpreter needs: the venv and the base install."""
    roots = {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix),
             os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))}
    # /usr is mounted anyway; nested roots are covered by their parent
    keep = sorted(r for r in roots if not r.startswith("/usr/") and r != "/usr")
    return [r for r in keep if not any(r != o and r.startswith(o + "/") for o in keep)]


def bwrap_command(bwrap: str, *, root: bool, disk_mb: int, env: dict[str, str],
                  gpu: bool) -> list[str]:
    """The bubblewrap invocation for one zygote."""
    cmd = [bwrap, "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
           "--unshare-cgroup-try", "--die-with-parent", "--new-session",
           "--hostname", "sandbox"]
    if root:
        # Stay root inside (no user namespace) so the zygote can drop each job to its own
        # uid; it keeps capabilities, jobs lose all of them with setuid.
        cmd += ["--cap-add", "ALL"]
    else:
        cmd += ["--unshare-user"]
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
    cmd += ["--ro-bind", str(ZYGOTE_SOURCE), ZYGOTE_IN_SANDBOX]
    if gpu:
        for dev in sorted(glob.glob("/dev/nvidia*")):
            cmd += ["--dev-bind", dev, dev]
        cmd += ["--ro-bind", "/sys", "/sys"]
    cmd += ["--clearenv"]
    for key, value in env.items():
        cmd += ["--setenv", key, value]
    cmd += ["--chdir", "/tmp", "--"]
    return cmd


def sandbox_python() -> str:
    return sys.executable


@lru_cache
def detect() -> Isolation:
    """Probe (by starting a real, tiny sandbox) rather than trust `which`."""
    root = os.geteuid() == 0
    user = ("jobs run as an unprivileged per-slot uid (worker is root)" if root
            else f"jobs run as the worker's own non-root uid {os.geteuid()}")
    common = ["rlimits: CPU time, file size, process count, open files, core dumps off",
              "memory: RSS watchdog over the job's processes; RLIMIT_AS on CPU slots",
              "wall-time limit kills the job's whole session and every process it left",
              "scrubbed environment (no tokens, no database URL)",
              "no_new_privs; fresh per-job working directory, deleted after the job"]
    bwrap = shutil.which("bwrap")
    problem = None
    if bwrap:
        probe = [*bwrap_command(bwrap, root=root, disk_mb=8, env={"PATH": "/usr/bin:/bin"},
                                gpu=False), sandbox_python(), "-c", "import os"]
        try:
            done = subprocess.run(probe, capture_output=True, timeout=30, check=False)
            if done.returncode == 0:
                return Isolation(Level.FULL, bwrap, root, None, (
                    "bubblewrap: network, PID, IPC, UTS, mount namespaces",
                    "filesystem: read-only /usr and Python install; bot files not visible",
                    "private size-capped /tmp; /dev/shm and /tmp wiped between jobs",
                    user, *common))
            problem = f"bubblewrap failed: {done.stderr.decode(errors='replace').strip()[:300]}"
        except (OSError, subprocess.TimeoutExpired) as exc:
            problem = f"bubblewrap failed: {exc}"
    else:
        problem = f"bubblewrap not found; {INSTALL_HINT}"
    return Isolation(Level.WEAK, None, root, problem, (
        "NO network namespace: snippets can reach the network",
        "NO mount namespace: snippets can read world-readable files on this host",
        user, *common))


def require(allow_weak: bool, isolation: Isolation | None = None) -> Isolation:
    """Refuse to serve jobs with weak isolation unless explicitly allowed."""
    iso = isolation or detect()
    if iso.level is Level.WEAK and not allow_weak:
        raise WeakIsolationError(
            "refusing to run untrusted snippets with weak isolation "
            f"({iso.problem}). Fix that, or set RUNNER_ALLOW_WEAK_ISOLATION=true "
            "to accept the risk.")
    return iso
