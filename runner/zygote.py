"""The warm interpreter inside the sandbox: imports torch once, forks one child per job.

Standalone on purpose (stdlib only, no `runner` imports): it is bind-mounted alone into
the bubblewrap sandbox, where the bot's source tree is not visible. It speaks JSON lines
on stdin/stdout with the worker (`runner.sandbox`).

Why a zygote: `import torch` costs seconds, a fork costs milliseconds. The zygote itself
runs inside the namespaces (no network, private /tmp, minimal read-only filesystem, its
own PID namespace); each job child then drops to an unprivileged uid, gets rlimits, a fresh
job directory and a new session. CUDA is never touched here, only in children.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import json
import os
import resource
import selectors
import shutil
import signal
import sys
import time
import traceback

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
JOB_DIR = os.environ.get("TORCHDRILL_JOB_DIR", "/tmp/job")
PROTOCOL_OUT = sys.stdout


def send(message: dict) -> None:
    PROTOCOL_OUT.write(json.dumps(message) + "\n")
    PROTOCOL_OUT.flush()


def warm_up() -> bool:
    """Import what snippets usually import, and run a tiny op so lazy imports are done."""
    if os.environ.get("TORCHDRILL_WARM", "1") != "1":
        return False
    try:
        import torch
        import torch.nn
        import torch.nn.functional
        import torch.optim
    except ImportError:
        return False
    with contextlib.suppress(Exception):
        import numpy  # noqa: F401
    x = torch.randn(4, 4, requires_grad=True)
    (x @ x).relu().sum().backward()
    str(x)
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    return True


def vm_size_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1])
    return 0


def proc_info(pid: int) -> tuple[int, int, str] | None:
    """(uid, rss_kb, state) of a process, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            uid, rss, state = -1, 0, "?"
            for line in f:
                if line.startswith("Uid:"):
                    uid = int(line.split()[1])
                elif line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("State:"):
                    state = line.split()[1]
            return uid, rss, state
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
    """Finds the processes that belong to the current job, to measure and to kill them."""

    def __init__(self, namespaced: bool, job_uid: int | None) -> None:
        self.namespaced = namespaced  # inside our own PID namespace: all but us and pid 1 are jobs
        self.job_uid = job_uid
        self.me = os.getpid()

    def pids(self, main_pid: int) -> list[int]:
        if not self.namespaced and self.job_uid is None:
            return [main_pid]
        found = []
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            pid = int(name)
            if pid in (1, self.me):
                continue
            if self.namespaced:
                found.append(pid)
            else:
                info = proc_info(pid)
                if info and info[0] == self.job_uid:
                    found.append(pid)
        return found

    def rss_kb(self, main_pid: int) -> int:
        """Proportional set size of the job: pages shared by forks count once, not N times."""
        total = 0
        for pid in self.pids(main_pid):
            total += pss_kb(pid)
        return total

    def kill_all(self, main_pid: int) -> None:
        """Kill the job's session and every process it left behind, until none is alive."""
        with contextlib.suppress(OSError):
            os.killpg(main_pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            alive = []
            for pid in self.pids(main_pid):
                info = proc_info(pid)
                if info and info[2] != "Z":
                    alive.append(pid)
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
            if not alive:
                return
            time.sleep(0.01)


def child_main(req: dict, out_w: int, err_w: int, meta_w: int, base_vm_kb: int) -> None:
    """Runs in the forked child: drop privileges, apply limits, run the snippet, never return."""
    code = 1
    try:
        os.setsid()
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.dup2(meta_w, 3)
        os.closerange(4, 65536)
        os.chdir(req["job_dir"])
        for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGXCPU, signal.SIGTERM, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        limits = req["limits"]
        mem = int(limits["memory_mb"]) * 1024 * 1024
        cpu = int(limits["cpu_time_s"])
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        fsize = int(limits["file_size_mb"]) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
        if req.get("address_space_limit"):
            # CUDA reserves huge virtual ranges, so GPU slots rely on the RSS watchdog only.
            cap = base_vm_kb * 1024 + mem
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        uid = req.get("uid")
        if uid is not None and os.geteuid() == 0:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
        nproc = int(limits["max_procs"])
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        os.environ.clear()
        os.environ.update(req["env"])
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", buffering=1, encoding="utf-8",  # noqa: SIM115
                          errors="backslashreplace", closefd=False)
        sys.stderr = open(2, "w", buffering=1, encoding="utf-8",  # noqa: SIM115
                          errors="backslashreplace", closefd=False)
        sys.argv = ["snippet.py"]
        sys.path[0] = req["job_dir"]
        glb = {"__name__": "__main__", "__file__": "snippet.py", "__builtins__": __builtins__}
        try:
            exec(compile(req["code"], "snippet.py", "exec"), glb)
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
        meta: dict = {}
        torch = sys.modules.get("torch")
        with contextlib.suppress(BaseException):
            if torch is not None and torch.cuda.is_initialized():
                meta["gpu_max_allocated_bytes"] = int(torch.cuda.max_memory_allocated())
        with contextlib.suppress(BaseException):
            os.write(3, json.dumps(meta).encode())
    except BaseException:
        with contextlib.suppress(BaseException):
            os.write(2, traceback.format_exc().encode())
    os._exit(code & 0xFF)


KEEP = [p for p in os.environ.get("TORCHDRILL_KEEP", "").split(os.pathsep) if p]


def wipe(directory: str) -> None:
    """Empty a scratch directory, sparing the read-only interpreter mounts inside it."""
    if not os.path.isdir(directory):
        return
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        if path in KEEP:
            continue
        if any(keep.startswith(path + "/") for keep in KEEP):
            wipe(path)
            continue
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(path)


def run_job(req: dict, jobs: Jobs) -> dict:
    limits = req["limits"]
    job_dir = req["job_dir"]
    shutil.rmtree(job_dir, ignore_errors=True)
    os.makedirs(job_dir, mode=0o700)
    if req.get("uid") is not None and os.geteuid() == 0:
        os.chown(job_dir, req["uid"], req["uid"])
    pipes = [os.pipe() for _ in range(3)]
    base_vm = vm_size_kb()
    sys.stdout.flush()
    sys.stderr.flush()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        for r, _ in pipes:
            os.close(r)
        child_main(req, pipes[0][1], pipes[1][1], pipes[2][1], base_vm)
    for _, w in pipes:
        os.close(w)
    out_r, err_r, meta_r = (r for r, _ in pipes)
    cap = int(limits["output_cap_bytes"])
    mem_cap_kb = int(limits["memory_mb"]) * 1024
    base_rss_kb = jobs.rss_kb(pid)  # pages shared with the zygote are not the job's doing
    deadline = start + float(limits["timeout_s"])
    buffers = {out_r: bytearray(), err_r: bytearray(), meta_r: bytearray()}
    sel = selectors.DefaultSelector()
    for fd in buffers:
        sel.register(fd, selectors.EVENT_READ)
    sel.register(sys.stdin, selectors.EVENT_READ)
    killed: str | None = None
    status: int | None = None
    rusage = None
    peak_kb = 0
    next_poll = 0.0
    while status is None:
        now = time.monotonic()
        for key, _ in sel.select(timeout=0.05):
            if key.fileobj is sys.stdin:
                line = sys.stdin.readline()
                if not line or json.loads(line).get("op") == "cancel":
                    killed = killed or "cancelled"
                    jobs.kill_all(pid)
                    sel.unregister(sys.stdin)
                continue
            fd = key.fd
            chunk = os.read(fd, 65536)
            if not chunk:
                sel.unregister(fd)
                continue
            buffers[fd] += chunk
            if len(buffers[out_r]) + len(buffers[err_r]) > cap and not killed:
                killed = "output"
                jobs.kill_all(pid)
        done, st, ru = os.wait4(pid, os.WNOHANG)
        if done:
            status, rusage = st, ru
            break
        if now >= next_poll:
            next_poll = now + 0.05
            rss = jobs.rss_kb(pid)
            peak_kb = max(peak_kb, rss)
            if rss - base_rss_kb > mem_cap_kb and not killed:
                killed = "memory"
                jobs.kill_all(pid)
        if now >= deadline and not killed:
            killed = "timeout"
            jobs.kill_all(pid)
    duration = time.monotonic() - start
    jobs.kill_all(pid)  # whatever the snippet left behind dies with the job
    drain_until = time.monotonic() + 1.0
    while sel.get_map() and time.monotonic() < drain_until:
        for key, _ in sel.select(timeout=0.05):
            if key.fileobj is sys.stdin:
                sel.unregister(sys.stdin)
                continue
            chunk = os.read(key.fd, 65536)
            if chunk:
                buffers[key.fd] += chunk
            else:
                sel.unregister(key.fd)
        if set(sel.get_map()) <= {sys.stdin.fileno()}:
            break
    sel.close()
    for fd in buffers:
        os.close(fd)
    shutil.rmtree(job_dir, ignore_errors=True)
    if jobs.namespaced:  # private scratch space: nothing may leak into the next job
        for scratch in ("/dev/shm", "/tmp"):
            wipe(scratch)
    try:
        meta = json.loads(buffers[meta_r] or b"{}")
    except ValueError:
        meta = {}
    out, err = bytes(buffers[out_r]), bytes(buffers[err_r])
    return {
        "op": "result", "job_id": req["job_id"],
        "exit_code": os.waitstatus_to_exitcode(status) if status is not None else None,
        "killed": killed, "duration_s": duration,
        "peak_rss_kb": max(peak_kb, rusage.ru_maxrss if rusage else 0),
        "stdout_b64": base64.b64encode(out[:cap]).decode(),
        "stderr_b64": base64.b64encode(err[:cap]).decode(),
        "output_over_cap": len(out) + len(err) > cap,
        "gpu_max_allocated_bytes": meta.get("gpu_max_allocated_bytes"),
    }


def main() -> None:
    namespaced = os.environ.get("TORCHDRILL_NAMESPACED") == "1"
    job_uid = os.environ.get("TORCHDRILL_JOB_UID")
    warm = warm_up()
    jobs = Jobs(namespaced, int(job_uid) if job_uid and os.geteuid() == 0 else None)
    send({"op": "ready", "pid": os.getpid(), "torch": warm, "uid": os.geteuid()})
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        if req.get("op") == "ping":
            send({"op": "pong"})
        elif req.get("op") == "run":
            try:
                send(run_job(req, jobs))
            except Exception:
                send({"op": "error", "job_id": req.get("job_id"), "error": traceback.format_exc()})


if __name__ == "__main__":
    main()
