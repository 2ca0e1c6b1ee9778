#!/usr/bin/env python3
"""Wait (bounded) until services accept TCP connections, then run a command in our place.

Why: podman-compose ignores `depends_on: condition: service_healthy`, so on podman `migrate`
ran before PostgreSQL listened. Compose starts bot, migrate and runner through this script,
which makes the order hold on every engine. Standard library only: it runs in both images.

Usage: wait-for [--timeout SECONDS] HOST:PORT [HOST:PORT ...] -- COMMAND [ARGS ...]
"""

from __future__ import annotations

import os
import socket
import sys
import time

USAGE = "usage: wait-for [--timeout SECONDS] HOST:PORT [HOST:PORT ...] -- COMMAND [ARGS ...]"
DEFAULT_TIMEOUT_S = 120.0
RETRY_S = 0.5


def parse(argv: list[str]) -> tuple[float, list[tuple[str, int]], list[str]]:
    """(timeout, addresses, command); raises ValueError with a one-line reason."""
    if "--" not in argv:
        raise ValueError("no command after --")
    split = argv.index("--")
    head, command = argv[:split], argv[split + 1:]
    if not command:
        raise ValueError("no command after --")
    timeout = DEFAULT_TIMEOUT_S
    if head[:1] == ["--timeout"]:
        if len(head) < 2:
            raise ValueError("--timeout needs a number of seconds")
        timeout = float(head[1])
        head = head[2:]
    addresses = []
    for item in head:
        host, sep, port = item.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ValueError(f"{item!r} is not HOST:PORT")
        addresses.append((host, int(port)))
    if not addresses:
        raise ValueError("no HOST:PORT to wait for")
    return timeout, addresses, command


def wait(addresses: list[tuple[str, int]], timeout: float) -> list[str]:
    """The addresses still refusing connections when the time ran out (empty: all up)."""
    deadline = time.monotonic() + timeout
    pending = list(addresses)
    while True:
        still = []
        for host, port in pending:
            try:
                with socket.create_connection((host, port), timeout=min(2.0, timeout)):
                    pass
            except OSError:
                still.append((host, port))
        pending = still
        if not pending or time.monotonic() >= deadline:
            return [f"{host}:{port}" for host, port in pending]
        time.sleep(RETRY_S)


def main(argv: list[str]) -> int:
    try:
        timeout, addresses, command = parse(argv)
    except ValueError as exc:
        print(f"wait-for: {exc}\n{USAGE}", file=sys.stderr)
        return 2
    down = wait(addresses, timeout)
    if down:
        print(f"wait-for: {', '.join(down)} not reachable after {timeout:g} s", file=sys.stderr)
        return 1
    os.execvp(command[0], command)
    return 1  # not reached: execvp replaces this process or raises


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
