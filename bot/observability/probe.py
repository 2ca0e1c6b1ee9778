"""`python -m bot.observability.probe`: the container HEALTHCHECK.

Standard library only, so it works in a slim image without curl and starts fast.
Exit 0 when the bot's /healthz answers 200, 1 otherwise.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request


def probe(url: str, timeout: float = 3.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def main(argv: list[str]) -> int:
    port = os.environ.get("HTTP_PORT", "8080")
    path = argv[1] if len(argv) > 1 else "/healthz"
    ok = probe(f"http://127.0.0.1:{port}{path}")
    print("ok" if ok else f"unhealthy: http://127.0.0.1:{port}{path}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
