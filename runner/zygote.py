"""The template inside the sandbox: imports torch once, then only forks, one child per job.

Standalone on purpose (stdlib only, no `runner` imports): it is bind-mounted alone into
the bubblewrap sandbox, where the bot's source tree is not visible.

A clean template: this process never holds job data. The worker (`runner.sandbox`) sends
it, over a unix socket, a fork request with three fresh file descriptors (a job socket,
stdout and stderr pipes). The template forks and closes its copies at once. The worker asks
for the next job's child while the slot is idle, so the child sets up what no job decides
(its namespaces, /proc) and waits; when a job comes, the worker sends the child, over the job
socket, that job's limits and then its code. Its output and metadata go straight back to the
worker. So a job's memory image is a copy of a process that has only ever imported torch.
What the template reports is integers: the child's pid, its wait status and rusage.

Each job child, before the snippet runs: a PID namespace of its own (PID 1 a tiny reaper,
so it sees only its own processes and /proc is that namespace's), a new session, new IPC
and mount namespaces, fresh size-capped tmpfs mounts on /tmp and /dev/shm (gone with the
namespace when the job ends), the capability bounding set emptied, an unprivileged
per-slot uid, undumpable, fds 0-3 only, rlimits, no_new_privs and a second, stricter
seccomp filter. CUDA is never touched here, only in children.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import selectors
import signal
import socket
import stat
import sys
import time
import traceback
import types

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
MS_NOSUID, MS_NODEV, MS_RDONLY, MS_NOEXEC = 2, 4, 1, 8
# PID 1 of each job's namespace: dash waits for its `sleep` with wait3(-1), which reaps
# every orphan the job leaves; it never sees job data (spawned before the code arrives)
REAPER = ["/bin/sh", "-c", "while :; do sleep 2147483647; done"]
PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus")  # as bwrap
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MAX_CODE_BYTES = 256 << 20  # what the worker sends (a snippet is capped at submission)
CODE_CHUNK = 65536  # one datagram of the code; the worker sends it in pieces of this size
META_FD = 3
KEEP = [p for p in os.environ.get("TORCHDRILL_KEEP", "").split(os.pathsep) if p]
KEEP_SOURCE = "/opt/torchdrill/keep"  # where bwrap also binds installs that live under /tmp
libc = ctypes.CDLL(None, use_errno=True)


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def warm_up() -> bool:
    """Import what snippets usually import, and run a tiny op so lazy imports are done.

    A GPU slot's template runs no backward pass: autograd's first backward starts its device
    threads, which counts the CUDA devices and so initialises the CUDA driver in this process,
    and a forked child can then never initialise CUDA ("CUDA error: initialization error",
    seen on an H200 with torch 2.11). Its jobs pay that first backward themselves."""
    if os.environ.get("TORCHDRILL_WARM", "1") != "1":
        return False
    try:
        import torch
        import torch.nn
        import torch.nn.functional
        import torch.optim
        import torch.utils.data
    except ImportError:
        return False
    with contextlib.suppress(Exception):
        import multiprocessing.pool  # noqa: F401

        import numpy  # noqa: F401
    gpu_slot = bool(os.environ.get("CUDA_VISIBLE_DEVICES"))
    x = torch.randn(4, 4, requires_grad=not gpu_slot)
    y = (x @ x).relu().sum()
    if not gpu_slot:
        y.backward()
    str(x)
    torch.seed()  # its first call imports each backend's seeding (~1 ms); jobs reseed anyway
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    return True


def torch_versions() -> dict[str, str | None]:
    """The torch jobs will import here and its CUDA build, read without initialising CUDA."""
    torch = sys.modules.get("torch")
    if torch is not None:
        return {"torch_version": str(torch.__version__), "cuda_version": torch.version.cuda}
    try:  # not warmed: the installed distribution (its CUDA build is known only after import)
        from importlib.metadata import version

        return {"torch_version": version("torch"), "cuda_version": None}
    except Exception:
        return {"torch_version": None, "cuda_version": None}


def check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    check(libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None,
                     ctypes.c_ulong(flags), data.encode() if data else None), f"mount {target}")


def tmpfs_options(size: int) -> str:
    """As many inodes as the size holds pages: a file with data takes a page anyway, so only
    empty files could use more, and without a cap millions of them outlast the wall limit."""
    return f"size={size},nr_inodes={max(size // resource.getpagesize(), 1024)},mode=1777"


def own_namespaces(req: dict) -> None:
    """New IPC + mount namespaces and a /proc of the job's own PID namespace (only its
    processes): nothing here depends on the job, so the child does it before one comes."""
    check(libc.unshare(CLONE_NEWNS | CLONE_NEWIPC), "unshare")
    mount("none", "/", None, MS_REC | MS_PRIVATE, None)
    if req.get("pid_namespace"):
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
        for path in PROC_READ_ONLY:
            if os.path.exists(path):
                mount(path, path, None, MS_BIND | MS_REC, None)
                mount("none", path, None, MS_BIND | MS_REMOUNT | MS_RDONLY, None)


def fresh_scratch(req: dict) -> None:
    """Empty tmpfs on /tmp and /dev/shm for this job only, sized from its limits (in the
    mount namespace of `own_namespaces`, so they go with the job)."""
    flags = MS_NOSUID | MS_NODEV
    mount("tmpfs", "/tmp", "tmpfs", flags, tmpfs_options(int(req["disk_bytes"])))
    mount("tmpfs", "/dev/shm", "tmpfs", flags, tmpfs_options(int(req["shm_bytes"])))
    for i, path in enumerate(KEEP):  # a Python install living under /tmp is bound again
        if path.startswith("/tmp/"):
            os.makedirs(path, mode=0o755, exist_ok=True)
            mount(f"{KEEP_SOURCE}/{i}", path, None, MS_BIND | MS_REC, None)
            mount("none", path, None, MS_BIND | MS_REMOUNT | MS_RDONLY, None)


def drop_privileges(uid: int | None) -> None:
    if os.geteuid() == 0:
        for cap in range(64):
            if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                break  # past the last capability this kernel knows
        if uid is not None:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)  # clears permitted, effective and ambient capabilities
    clear_capabilities()


class CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def clear_capabilities() -> None:
    """Empty every capability set (the inheritable one survives setuid otherwise)."""
    header = CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (CapData * 2)()
    check(libc.capset(ctypes.byref(header), data), "capset")


def apply_limits(req: dict) -> None:
    limits = req["limits"]
    cpu = int(limits["cpu_time_s"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    if not req.get("scratch"):  # per-job tmpfs sizes cap /tmp and /dev/shm instead: a file
        # size limit would also kill shared memory (a DataLoader worker's 64 MB batch)
        fsize = int(limits["file_size_mb"]) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    if req.get("rlimit_as_extra_bytes"):  # only without a memory cgroup, on CPU slots
        cap = vm_size_bytes() + int(req["rlimit_as_extra_bytes"])
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    if req.get("rlimit_nproc"):  # only without a pids cgroup
        n = int(req["rlimit_nproc"])
        resource.setrlimit(resource.RLIMIT_NPROC, (n, n))


def vm_size_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def load_filter(bpf: bytes) -> None:
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    if not bpf:
        return
    buf = ctypes.create_string_buffer(bpf, len(bpf))
    prog = SockFprog(len(bpf) // 8, ctypes.cast(buf, ctypes.c_void_p))
    check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0), "seccomp")


def receive_job(sock: socket.socket) -> tuple[dict, str]:
    """The job's limits and the code's size, then the code in chunks, from the worker (who
    moved us into the job's cgroup after our hello); an empty read means the worker dropped
    this child unused. A judge's case program carries its inputs: megabytes, more than one
    datagram holds."""
    header = sock.recv(65536)
    if not header:
        os._exit(125)
    job = json.loads(header)
    size = min(int(job.pop("code_bytes")), MAX_CODE_BYTES)
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(CODE_CHUNK)
        if not chunk:
            os._exit(125)
        data += chunk
    return job, data.decode("utf-8", errors="replace")


def send_meta(meta: dict[str, int]) -> None:
    """Integers only, one short message; the worker ignores anything else."""
    line = "\n".join(f"{k}={int(v)}" for k, v in meta.items()).encode()[:1024]
    with contextlib.suppress(BaseException):
        os.set_blocking(META_FD, False)
        os.write(META_FD, line or b"none=0")


def as_script(source: str) -> dict:
    """Run like `python snippet.py`: the file exists (inspect, tracebacks with source lines,
    torch.export) and `__main__` is a real module (pickle, mp.spawn find its functions)."""
    try:
        with open("snippet.py", "w", encoding="utf-8") as f:
            f.write(source)
    except OSError:
        pass  # a full disk still runs the code, without its source on disk
    torch = sys.modules.get("torch")
    if torch is not None:  # a new interpreter's random seed, not the template's (Python's
        # `random` reseeds itself after fork); CUDA's too on a GPU slot (torch.seed() queues
        # it for CUDA's start, at ~1 ms a call, so CPU slots reseed the CPU generator only)
        if os.environ.get("CUDA_VISIBLE_DEVICES"):
            torch.seed()
        else:
            torch.default_generator.seed()
    main = types.ModuleType("__main__")
    main.__file__ = os.path.abspath("snippet.py")
    main.__builtins__ = __builtins__  # type: ignore[attr-defined]  # a module has __builtins__ at run time; typeshed omits it
    sys.modules["__main__"] = main
    return main.__dict__


def child_main(req: dict, fds: list[int], job_bpf: bytes) -> None:
    """Runs in the forked child: set up, get the code, run it, never return."""
    code = 1
    try:
        os.setsid()
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        job_sock, out_w, err_w = fds
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.dup2(job_sock, META_FD)
        os.closerange(META_FD + 1, 65536)
        with socket.socket(fileno=os.dup(META_FD)) as sock:  # the dup closes; fd 3 stays
            sock.send(b"hello")  # the worker reads our host pid from SCM_CREDENTIALS
            if req.get("scratch"):
                own_namespaces(req)
            job, source = receive_job(sock)  # here the slot sits idle until a job comes
        req = {**req, **job}
        if req.get("scratch"):
            fresh_scratch(req)
        job_dir, uid = req["job_dir"], req.get("uid")
        os.makedirs(job_dir, mode=0o700, exist_ok=True)
        if uid is not None and os.geteuid() == 0:
            os.chown(job_dir, uid, uid)
        drop_privileges(uid)
        # no core dump of a job anywhere, even where core_pattern is a pipe (which ignores
        # RLIMIT_CORE); inherited by forks, reset by exec (see runner/README.md)
        check(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "undumpable")
        os.chdir(job_dir)
        for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGXCPU, signal.SIGTERM,
                    signal.SIGCHLD, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        apply_limits(req)
        load_filter(job_bpf)
        os.environ.clear()
        os.environ.update(req["env"])
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", buffering=1, encoding="utf-8",  # noqa: SIM115
                          errors="backslashreplace", closefd=False)
        sys.stderr = open(2, "w", buffering=1, encoding="utf-8",  # noqa: SIM115
                          errors="backslashreplace", closefd=False)
        sys.argv = ["snippet.py"]
        sys.path[0] = job_dir
        glb = as_script(source)
        try:
            exec(compile(source, "snippet.py", "exec"), glb)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if exc.code is not None and not isinstance(exc.code, int):
                print(exc.code, file=sys.stderr)
        except BaseException as exc:
            tb = exc.__traceback__.tb_next if exc.__traceback__ else None  # hide this frame
            traceback.print_exception(type(exc), exc, tb)
            code = 1
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        meta: dict[str, int] = {}
        torch = sys.modules.get("torch")
        with contextlib.suppress(BaseException):
            if torch is not None and torch.cuda.is_initialized():
                meta["gpu_max_allocated_bytes"] = int(torch.cuda.max_memory_allocated())
        send_meta(meta)
    except BaseException as exc:  # our own setup failed: say what, briefly, no traceback
        with contextlib.suppress(BaseException):
            os.write(2, f"sandbox setup failed: {type(exc).__name__}: {exc}\n".encode())
        code = 126
    os._exit(code & 0xFF)


def proc_uid_state(pid: int) -> tuple[int, str] | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            uid, state = -1, "?"
            for line in f:
                if line.startswith("Uid:"):
                    uid = int(line.split()[1])
                elif line.startswith("State:"):
                    state = line.split()[1]
            return uid, state
    except (OSError, ValueError, IndexError):
        return None


def pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


class Jobs:
    """Fallback (no cgroups): finds the job's processes, to measure and to kill them."""

    def __init__(self, namespaced: bool, job_uid: int | None) -> None:
        self.namespaced = namespaced  # our own PID namespace: all but us and pid 1 are jobs
        self.job_uid = job_uid
        self.me = os.getpid()

    def pids(self, main_pid: int) -> list[int]:
        if not self.namespaced and self.job_uid is None:
            return [main_pid]
        found = []
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) in (1, self.me):
                continue
            if self.namespaced:
                found.append(int(name))
            else:
                info = proc_uid_state(int(name))
                if info and info[0] == self.job_uid:
                    found.append(int(name))
        return found

    def pss_kb(self, main_pid: int) -> int:
        return sum(pss_kb(pid) for pid in self.pids(main_pid))

    def kill_all(self, main_pid: int) -> None:
        with contextlib.suppress(OSError):
            os.killpg(main_pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            alive = []
            for pid in self.pids(main_pid):
                info = proc_uid_state(pid)
                if info and info[1] != "Z" and pid != self.me:
                    alive.append(pid)
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
            if not alive:
                return
            time.sleep(0.005)


def remove_tree(top: str) -> None:
    """Empty a directory without recursion (a member's 10,000-deep tree cannot break it)."""
    stack = [top]
    while stack:
        path = stack[-1]
        try:
            entries = list(os.scandir(path))
        except OSError:
            stack.pop()
            continue
        pushed = False
        for entry in entries:
            full = entry.path
            if full in KEEP or any(k.startswith(full + "/") for k in KEEP):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(full)
                    pushed = True
                else:
                    os.unlink(full)
            except OSError:
                pass
        if not pushed:
            stack.pop()
            if path != top:
                with contextlib.suppress(OSError):
                    os.rmdir(path)


def clean_shared_scratch(tops: list[str]) -> None:
    """Fallback without per-job tmpfs: empty the scratch space in a short-lived child, so
    the names the member made never enter the template's memory."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            for top in tops:
                if os.path.isdir(top) and stat.S_ISDIR(os.lstat(top).st_mode):
                    remove_tree(top)
        except BaseException:
            code = 1
        os._exit(code)
    os.waitpid(pid, 0)


class Template:
    def __init__(self, control: socket.socket) -> None:
        self.control = control
        self.namespaced = os.environ.get("TORCHDRILL_NAMESPACED") == "1"
        job_uid = os.environ.get("TORCHDRILL_JOB_UID")
        self.jobs = Jobs(self.namespaced, int(job_uid) if job_uid and os.geteuid() == 0 else None)
        self.job_bpf = b""
        self.own_pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        fd = os.environ.get("TORCHDRILL_JOB_BPF_FD")
        if fd:
            with os.fdopen(int(fd), "rb") as f:
                self.job_bpf = f.read()

    def send(self, message: dict) -> None:
        try:
            self.control.send(json.dumps(message).encode())
        except (BrokenPipeError, ConnectionResetError):
            os._exit(0)  # the worker has gone (closed or restarting the slot): so do we

    def run(self) -> None:
        warm = warm_up()
        self.send({"op": "ready", "pid": os.getpid(), "torch": warm, "uid": os.geteuid(),
                   **torch_versions()})
        while True:
            msg, fds, _, _ = socket.recv_fds(self.control, 65536, 8)
            if not msg:
                return
            req = json.loads(msg)
            if req.get("op") == "fork" and len(fds) == 3:
                self.job(req, fds)
            elif req.get("op") in ("kill", "watch") and not fds:
                continue  # the job it meant has already ended
            elif req.get("op") == "clean" and not fds:
                clean_shared_scratch([str(p) for p in req.get("dirs", [])])
                self.send({"op": "cleaned"})
            else:
                for fd in fds:
                    os.close(fd)
                self.send({"op": "error", "error": f"unexpected request {req.get('op')!r}"})

    def job(self, req: dict, fds: list[int]) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        reaper = self.new_pid_namespace(fds) if req.get("pid_namespace") else None
        try:
            pid = os.fork()
        except OSError:
            pid = -1
        if pid == 0:
            self.control.close()
            child_main(req, fds, self.job_bpf)  # never returns
        if reaper is not None:  # our own later children: back in our namespace, so the
            check(libc.setns(self.own_pid_ns, CLONE_NEWPID), "setns")  # next unshare works
        if pid < 0:
            raise OSError("fork failed")
        for fd in fds:
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        self.send({"op": "forked", "job": req["job"], "pid": pid})
        watchdog_kb = 0  # set by a "watch" when the job comes, on hosts without cgroups
        sel = selectors.DefaultSelector()
        sel.register(pidfd, selectors.EVENT_READ)
        sel.register(self.control, selectors.EVENT_READ)
        killed = None
        peak_kb = base_kb = 0
        while True:
            events = sel.select(timeout=0.05 if watchdog_kb else None)
            if any(key.fd == pidfd for key, _ in events):
                break
            if any(key.fileobj is self.control for key, _ in events):
                msg = self.control.recv(4096)
                if not msg:
                    self.jobs.kill_all(pid)
                    os._exit(0)
                order = json.loads(msg)
                if "job" in order and order["job"] != req["job"]:
                    continue  # meant for a job that has ended
                if order.get("op") == "kill":
                    self.jobs.kill_all(pid)
                elif order.get("op") == "watch":
                    watchdog_kb = int(order.get("kb") or 0)
                    base_kb = self.jobs.pss_kb(pid)  # pages still shared with us
                else:  # the worker restarts us on this, as on any surprise
                    self.send({"op": "error", "error": f"unexpected request {order.get('op')!r}"})
            if watchdog_kb:  # fallback only: the kernel's memory cgroup is the real limit
                used = self.jobs.pss_kb(pid) - base_kb
                peak_kb = max(peak_kb, used)
                if used > watchdog_kb and not killed:
                    killed = "memory"
                    self.jobs.kill_all(pid)
        sel.close()
        _, status, usage = os.wait4(pid, 0)
        os.close(pidfd)
        if not req.get("cgroup"):
            self.jobs.kill_all(pid)  # whatever the snippet left behind dies with the job
        self.send({"op": "exit", "job": req["job"], "status": status, "killed": killed,
                   "maxrss_kb": max(int(usage.ru_maxrss), peak_kb)})
        if reaper is not None:  # the namespace dies with its PID 1, and whatever is left in it
            with contextlib.suppress(OSError):
                os.kill(reaper, signal.SIGKILL)
                os.waitpid(reaper, 0)

    def new_pid_namespace(self, fds: list[int]) -> int:
        """Make our next child PID 1 of a fresh PID namespace: a tiny reaper (dash, spawned
        without copying our address space), so the job's main process, forked next, is PID 2
        there and sees only its own processes; orphans are reaped as on any host. Returns
        the reaper's pid."""
        check(libc.unshare(CLONE_NEWPID), "unshare")
        return os.posix_spawn(REAPER[0], REAPER, {"PATH": "/usr/bin:/bin"},
                              file_actions=[(os.POSIX_SPAWN_CLOSE, fd) for fd in fds])


def main() -> None:
    control = socket.socket(fileno=int(os.environ["TORCHDRILL_CONTROL_FD"]))
    try:
        Template(control).run()
    except Exception:
        traceback.print_exc()  # to the worker's log, never to a member
        sys.exit(1)


if __name__ == "__main__":
    main()
