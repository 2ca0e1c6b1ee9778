"""bench.fanout keeps running at a tiny size and counts what it claims to count: every channel
posted once by the bot as it ships, with its floor and ratio printed beside the time."""

from __future__ import annotations

import re

from tests.support.bench import bench


def test_fanout_bench_posts_every_channel_once_and_prints_its_floor() -> None:
    out = bench("bench.fanout", "--db", "sqlite", "--channels", "20")
    assert re.search(r"sqlite +N= +20 replicas=1: all posted in [\d.]+ s \(floor 0\.4 s\) missing=0 "
                     r"duplicates=0 peak RSS=\d+ MB rows read/post=n/a 429s=\d+ failed tries=0", out), out
    assert re.search(r"ratio time to all posted / floor: [\d.]+", out), out
