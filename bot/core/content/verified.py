"""content/verified.yaml: the torch the banks were verified with, and where each device claim ran.

CPU CI cannot run a ``device: cuda`` question, so ``torchdrill content verify --device cuda``
runs them on a GPU and records, per question, the device's name and the torch that ran it.
Only a question whose every snippet agreed on that device is recorded; one that disagrees
loses an older record, so the file never vouches for a claim the last run contradicted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

HEADER = """\
# The torch the question banks and their executable answer keys were verified with.
# The one place the running bot and runner read it from (the runner image ships content/,
# not .ci/); tests/runner/test_runner_versions.py keeps it equal to the pin in .ci/constraints.txt.
"""
DEVICE_HEADER = """\
# Questions marked `device: cuda`, each run by `torchdrill content verify --device cuda` on a
# GPU: the device (as nvidia-smi names it) and the torch build that ran every snippet of it.
"""
RECORDS_KEY = "cuda_runs"


@dataclass(frozen=True)
class DeviceRun:
    """Where one device claim was last verified."""

    device: str
    torch: str


@dataclass
class Verified:
    torch: str | None
    runs: dict[str, DeviceRun]


class VerifiedFileError(ValueError):
    """verified.yaml exists but is not what this module writes (one line for the operator)."""


def load(path: Path) -> Verified:
    """The file's pin and records; an absent file has neither."""
    if not path.exists():
        return Verified(None, {})
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise VerifiedFileError(f"{path}: cannot read it: {exc}") from None
    if not isinstance(data, dict):
        raise VerifiedFileError(f"{path}: expected a mapping with 'torch'")
    runs: dict[str, DeviceRun] = {}
    raw = data.get(RECORDS_KEY) or {}
    if not isinstance(raw, dict):
        raise VerifiedFileError(f"{path}: '{RECORDS_KEY}' must map question ids to records")
    for qid, record in raw.items():
        if not (isinstance(record, dict) and isinstance(record.get("device"), str)
                and isinstance(record.get("torch"), str)):
            raise VerifiedFileError(f"{path}: {RECORDS_KEY}.{qid} needs 'device' and 'torch'")
        runs[str(qid)] = DeviceRun(record["device"], record["torch"])
    torch = data.get("torch")
    return Verified(str(torch) if torch is not None else None, runs)


def render(verified: Verified) -> str:
    """The file's text: the pin first (what the runner reads), then the records by id."""
    text = HEADER + (f"torch: {verified.torch}\n" if verified.torch else "")
    if verified.runs:
        body = {qid: {"device": r.device, "torch": r.torch} for qid, r in sorted(verified.runs.items())}
        text += "\n" + DEVICE_HEADER + yaml.safe_dump({RECORDS_KEY: body}, sort_keys=False,
                                                       allow_unicode=True, width=100)
    return text


def record(path: Path, agreed: dict[str, DeviceRun], disagreed: list[str]) -> Verified:
    """Merge one device run into the file: agreed questions get (new) records, disagreeing
    ones lose theirs; every other record stays."""
    verified = load(path)
    runs = {qid: run for qid, run in verified.runs.items() if qid not in disagreed}
    runs.update(agreed)
    updated = Verified(verified.torch, runs)
    path.write_text(render(updated), encoding="utf-8")
    return updated
