"""Prometheus metrics, in a registry of our own.

Not the global default registry: tests (and an embedding host) get exactly our metrics, and
importing this module twice never fails on duplicate names. Label values must come from
small fixed sets (platform names, interaction kinds, job states, device kinds, failure
reasons); never put ids, user names or code in a label.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

REGISTRY = CollectorRegistry(auto_describe=True)
CONTENT_TYPE = CONTENT_TYPE_LATEST

ANSWERS_RECORDED = Counter(
    "torchdrill_answers_recorded", "Answers stored (first answer per user and post)",
    ["platform"], registry=REGISTRY,
)
INTERACTION_SECONDS = Histogram(
    "torchdrill_interaction_seconds",
    "Time from receiving an interaction to finishing our work on it; platforms allow 3 s to ack",
    ["platform", "kind"], registry=REGISTRY,
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0),
)
RUNNER_QUEUE_DEPTH = Gauge(
    "torchdrill_runner_queue_depth", "Snippet jobs waiting for a sandbox", registry=REGISTRY,
)
RUNNER_JOB_SECONDS = Histogram(
    "torchdrill_runner_job_seconds", "Wall time of finished snippet jobs, by outcome and device",
    ["state", "device"], registry=REGISTRY,
    buckets=(0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0),
)
SANDBOX_FAILURES = Counter(
    "torchdrill_sandbox_failures",
    "Jobs the sandbox itself failed (not user errors): start failure, OOM kill, timeout...",
    ["reason"], registry=REGISTRY,
)
POSTING_QUEUE_DEPTH = Gauge(
    "torchdrill_posting_queue_depth", "Scheduled posts waiting for a posting worker",
    registry=REGISTRY,
)
POSTS_LATE = Counter(
    "torchdrill_posts_late",
    "Scheduled posts found missing past their time by the sweep (then posted late), by kind",
    ["kind"], registry=REGISTRY,
)
POSTS_MISSED = Counter(
    "torchdrill_posts_missed",
    "Scheduled posts still missing when their catch-up grace ran out, by kind",
    ["kind"], registry=REGISTRY,
)


@contextmanager
def observe_interaction(platform: str, kind: str) -> Iterator[None]:
    """Time the body into INTERACTION_SECONDS, also when it raises (slow failures count)."""
    start = time.perf_counter()
    try:
        yield
    finally:
        _interaction_timer(platform, kind).observe(time.perf_counter() - start)


@functools.lru_cache(maxsize=1024)
def _interaction_timer(platform: str, kind: str) -> Any:
    """The histogram's child for these labels, looked up once (a click is timed every time)."""
    return INTERACTION_SECONDS.labels(platform=platform, kind=kind)


def render_latest() -> bytes:
    """The Prometheus text exposition of our registry (serve with CONTENT_TYPE)."""
    return generate_latest(REGISTRY)
