"""`python -m runner [isolation]`: a worker for hosts that install only the runner."""

from __future__ import annotations

import logging
import sys

from runner.isolation import WeakIsolationError, detect
from runner.settings import RunnerSettings
from runner.worker import run_worker


def main(argv: list[str]) -> int:
    if argv[:1] == ["isolation"]:
        print(detect().describe())
        return 0
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    try:
        run_worker(RunnerSettings())
    except WeakIsolationError as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
