"""A private PostgreSQL cluster for tests that restart, stop or lock down a server: initdb
in a temporary directory on its own port, so the shared server is never touched."""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

BIN = Path("/usr/lib/postgresql/15/bin")
needs_server_binaries = pytest.mark.skipif(
    not (BIN / "pg_ctl").exists() or shutil.which("runuser") is None or os.geteuid() != 0,
    reason="needs PostgreSQL 15 server binaries and root (to run them as postgres)",
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    def __init__(self, root: Path) -> None:
        self.data = root / "data"
        self.port = _free_port()
        self.url = f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/postgres"

    def _ctl(self, *args: str, timeout: float = 30) -> None:
        subprocess.run(
            ["runuser", "-u", "postgres", "--", str(BIN / "pg_ctl"), "-D", str(self.data), "-w",
             "-t", "20", *args],
            check=True, capture_output=True, timeout=timeout,
        )

    def init(self, password: str | None = None) -> None:
        """With ``password``, connections need it (scram-sha-256); else trust."""
        self.data.parent.mkdir(parents=True, exist_ok=True)
        shutil.chown(self.data.parent, "postgres")
        auth = ["-A", "trust"]
        if password is not None:
            pwfile = self.data.parent / "pw"
            pwfile.write_text(password)
            shutil.chown(pwfile, "postgres")
            auth = ["-A", "scram-sha-256", f"--pwfile={pwfile}"]
        subprocess.run(
            ["runuser", "-u", "postgres", "--", str(BIN / "initdb"), "-D", str(self.data),
             *auth, "-U", "postgres", "--no-sync"],
            check=True, capture_output=True, timeout=60,
        )
        self.start()

    def start(self) -> None:
        opts = f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.data} -c fsync=off"
        self._ctl("-o", opts, "-l", str(self.data / "log"), "start")

    def restart(self) -> None:
        self._ctl("-m", "fast", "-l", str(self.data / "log"), "restart")

    def stop(self) -> None:
        self._ctl("-m", "immediate", "stop")

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()


def private_cluster(password: str | None = None) -> Iterator[Cluster]:
    """Start a cluster (skip the test if this host cannot), stop and delete it afterwards."""
    root = Path("/tmp") / f"td-pg-{os.getpid()}-{random.randrange(10**6)}"
    c = Cluster(root)
    try:
        c.init(password)
    except (subprocess.SubprocessError, OSError) as exc:
        shutil.rmtree(root, ignore_errors=True)
        pytest.skip(f"cannot start a private PostgreSQL cluster: {exc}")
    try:
        yield c
    finally:
        try:
            if c.running():
                c.stop()
        finally:
            shutil.rmtree(root, ignore_errors=True)


