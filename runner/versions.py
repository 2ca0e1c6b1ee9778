"""Which torch serves /run, and whether it is the torch the banks were verified with.

The verified version lives once, in ``content/verified.yaml`` (the runner image ships
content/, not .ci/). The serving version is what each slot's template imported inside the
sandbox, so the report describes the interpreter that runs members' code, not the worker's.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

VERIFIED_FILE = Path(__file__).resolve().parents[1] / "content" / "verified.yaml"
VERSION_RE = re.compile(r"^[0-9A-Za-z.+_-]{1,40}$")  # what a template may report


def verified_torch(path: Path | None = None) -> str | None:
    """The torch version the banks were verified with; None when the file is absent or bad."""
    try:
        data = yaml.safe_load((path or VERIFIED_FILE).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    value = data.get("torch") if isinstance(data, dict) else None
    return str(value) if value is not None and VERSION_RE.match(str(value)) else None


def release(version: str) -> str:
    """`2.13.0+cu128` -> `2.13.0`: a CUDA or CPU build of the same release is the same torch."""
    return version.split("+", 1)[0]


def clean_version(value: object) -> str | None:
    """A version string reported by a template, or None if it is anything else."""
    return value if isinstance(value, str) and VERSION_RE.match(value) else None


@dataclass(frozen=True)
class Runtime:
    """What one runner host serves /run with."""

    torch: str | None  # None: the template could not import torch (or was not warmed)
    cuda: str | None  # torch's CUDA build (torch.version.cuda); None for a CPU build
    devices: tuple[str, ...]
    verified: str | None

    @property
    def matches(self) -> bool:
        return (self.torch is not None and self.verified is not None
                and release(self.torch) == release(self.verified))

    def describe(self) -> str:
        torch = self.torch or "unknown"
        cuda = self.cuda or "none"
        verified = self.verified or "unknown (content/verified.yaml missing)"
        return (f"torch {torch} (CUDA {cuda}), devices: {', '.join(self.devices) or 'none'}; "
                f"banks verified with torch {verified}")

    def mismatch(self) -> str | None:
        """The operator's warning when members would run another torch than our answers."""
        if self.matches:
            return None
        return (f"runner torch {self.torch or 'unknown'} differs from torch "
                f"{self.verified or 'unknown'}, the version the question banks and their answer "
                "keys were verified with: /run output may contradict the answers "
                "(use the runner image built with that TORCH_VERSION)")

    def to_dict(self) -> dict[str, Any]:
        return {"torch": self.torch, "cuda": self.cuda, "devices": list(self.devices),
                "verified_torch": self.verified, "matches_verified": self.matches}


def report(runtime: Runtime, log: logging.Logger) -> None:
    """One INFO line at start; a WARNING naming both versions when they differ."""
    log.info("runner serves %s", runtime.describe())
    problem = runtime.mismatch()
    if problem:
        log.warning("%s", problem)
