"""Answer-count refreshes are folded per message; the reveal is never overwritten by one."""

from __future__ import annotations

import asyncio

from bot.adapters.coalesce import CoalescingPublisher
from bot.core.domain.identity import Where
from bot.core.domain.messages import Message

HERE = Where("discord", "g", "c")


def count(n: int) -> Message:
    return Message(footer=f"{n} answered")


async def test_first_refresh_is_immediate_and_a_burst_becomes_one_trailing_edit(publisher) -> None:
    coalescing = CoalescingPublisher(publisher, interval_s=0.05)
    await coalescing.refresh(HERE, "m1", count(1))
    assert [m.footer for _, m in publisher.updates] == ["1 answered"]
    for n in (2, 3, 4):
        await coalescing.refresh(HERE, "m1", count(n))
    assert len(publisher.updates) == 1  # folded, not yet sent
    await coalescing.flush()
    assert [m.footer for _, m in publisher.updates] == ["1 answered", "4 answered"]
    await asyncio.sleep(0.06)  # quiet again: the next refresh goes out at once
    await coalescing.refresh(HERE, "m1", count(5))
    assert publisher.updates[-1][1].footer == "5 answered"


async def test_messages_are_independent(publisher) -> None:
    coalescing = CoalescingPublisher(publisher, interval_s=10)
    await coalescing.refresh(HERE, "a", count(1))
    await coalescing.refresh(HERE, "b", count(1))
    assert [ref for ref, _ in publisher.updates] == ["a", "b"]


async def test_reveal_cancels_a_pending_refresh_and_is_never_overwritten(publisher) -> None:
    coalescing = CoalescingPublisher(publisher, interval_s=0.05)
    await coalescing.refresh(HERE, "m1", count(1))
    await coalescing.refresh(HERE, "m1", count(2))  # pending trailing edit
    await coalescing.update(HERE, "m1", Message(title="results"))
    await asyncio.sleep(0.1)
    await coalescing.flush()
    assert [m.title or m.footer for _, m in publisher.updates] == ["1 answered", "results"]


async def test_a_failed_trailing_edit_is_logged_not_raised(publisher, caplog) -> None:
    class Flaky:
        def __init__(self) -> None:
            self.calls = 0

        async def publish(self, where, message, *, thread_of=None) -> str:
            return "x"

        async def update(self, where, ref, message) -> None:
            self.calls += 1
            if self.calls > 1:
                raise RuntimeError("message deleted")

    flaky = Flaky()
    coalescing = CoalescingPublisher(flaky, interval_s=0.01)
    await coalescing.refresh(HERE, "m1", count(1))
    await coalescing.refresh(HERE, "m1", count(2))
    await coalescing.flush()
    assert flaky.calls == 2 and "could not refresh the answer count of m1" in caplog.text


async def test_flush_sends_the_pending_edit_now_instead_of_waiting_the_interval(publisher) -> None:
    coalescing = CoalescingPublisher(publisher, interval_s=3600)  # shutdown cannot wait this
    await coalescing.refresh(HERE, "m1", count(1))
    await coalescing.refresh(HERE, "m1", count(2))
    await asyncio.wait_for(coalescing.flush(), timeout=2)
    assert [m.footer for _, m in publisher.updates] == ["1 answered", "2 answered"]
    await coalescing.refresh(HERE, "m1", count(3))  # after a flush, folding works as before
    assert len(publisher.updates) == 2
    await asyncio.wait_for(coalescing.flush(), timeout=2)
    assert publisher.updates[-1][1].footer == "3 answered"


async def test_refreshes_share_the_channels_edit_budget(publisher) -> None:
    """Three open posts in one channel: their refreshes together stay within the channel's
    window; the ones over it are folded and sent when it moves on."""
    coalescing = CoalescingPublisher(publisher, interval_s=0.0, channel_refreshes=3, window_s=0.2)
    loop = asyncio.get_running_loop()
    started = loop.time()
    for n in range(1, 5):
        for ref in ("a", "b", "c"):
            await coalescing.refresh(HERE, ref, count(n))
    assert [ref for ref, _ in publisher.updates] == ["a", "b", "c"]  # the window is full
    other = Where("discord", "g", "elsewhere")
    await coalescing.refresh(other, "d", count(1))  # another channel has its own window
    assert [ref for ref, _ in publisher.updates][-1] == "d"
    sent_at: list[float] = []
    inner_update = publisher.update

    async def timed(where, ref, message) -> None:
        sent_at.append(loop.time())
        await inner_update(where, ref, message)

    publisher.update = timed
    await asyncio.wait_for(asyncio.gather(*list(coalescing._pending.values())), timeout=5)
    assert sorted(m.footer for ref, m in publisher.updates[4:]) == ["4 answered"] * 3  # the latest views
    assert len(sent_at) == 3 and min(sent_at) >= started + 0.2  # not before the window moved on
