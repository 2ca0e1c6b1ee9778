"""/challenge: pick a problem, reveal hints one by one, judge a submission, score first solves.

The member's code goes to the runner like /run (same queue, fairness and limits) as a judge job:
the problem's cases and reference travel with it, and the worker judges it where torch lives
(runner.judging). What comes back is a small JSON verdict; this module never imports torch and
never reads a tensor. Member text in a verdict (an exception message, printed output) is shown
in code blocks, which each platform's renderer escapes. What a member did with each problem is
kept behind ``ChallengeProgressStore`` (bot.core.challenges.ports).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from bot.core.challenges.ports import ChallengeProgressStore
from bot.core.content.challenges import Challenge, ChallengeBank, shipped_challenges
from bot.core.domain.clock import Clock
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Message, truncate
from bot.core.domain.topics import TOPICS
from bot.core.publisher import Publisher
from bot.core.render.notices import counted, notice
from bot.core.render.questions import stars
from bot.core.runs.desk import (
    CANCEL_COMMAND,
    CANCELLED_BY_AUTHOR,
    clean_code,
    rejection,
    requester_key,
)
from runner.judge import Verdict, forbidden_uses, judge_job

if TYPE_CHECKING:
    from runner.jobs import JobResult
    from runner.service import RunnerService

log = logging.getLogger(__name__)
KIND = "challenge"  # reply_to["kind"] of a judged job
SUBMISSION_MAX = 3000  # fits the smaller modal (Slack 3,000; Discord 4,000)
NONE_OPEN = "You have no open challenge. Start one with {command}."
NO_MATCH = "No challenge matches {what}."
TOO_LONG = ("Your solution is {size:,} characters; submissions take at most {limit:,}. "
            "Trim comments or helper code and submit again.")
SUBMIT_HOW = "`{submit}` to submit your solution; `{challenge} hint` for a hint"
EMPTY = "There is no code to judge. Paste your solution (the stub filled in)."
BOARD_SIZE = 10
NO_ANSWER = "the judge's answer is missing"


def challenge_message(challenge: Challenge, submit_how: str) -> Message:
    """The problem as a member sees it: statement, stub, how to submit and get hints."""
    msg = Message(title=f"🧩 {challenge.title} · {stars(challenge.difficulty)} · "
                        f"{TOPICS[challenge.topic]}", ephemeral=True)
    msg.text(challenge.statement.strip())
    msg.code(challenge.stub.rstrip())
    msg.footer = (f"{challenge.points} points for a first solve · {counted(len(challenge.hints), 'hint')} · "
                  f"{submit_how}")
    return msg


def verdict_message(challenge: Challenge, verdict: Verdict, earned: int | None) -> Message:
    """The judge's verdict: k/n, the first failing test, time, memory, device, points."""
    if verdict.solved:
        head = "✅ Solved"
    elif verdict.total:
        head = f"❌ {verdict.passed}/{verdict.total} tests passed"
    else:
        head = "❌ Not judged"
    msg = Message(title=f"{head}: {challenge.title}")
    if verdict.solved:
        msg.text(f"Passed {verdict.passed}/{verdict.total} tests.")
    elif verdict.failure:
        msg.text(f"First failure: {verdict.failure}")
        if verdict.detail:  # the member's own text: inert in a code block on every platform
            msg.code(verdict.detail, "text")
    facts = []
    if verdict.elapsed_s is not None:
        facts.append(f"{verdict.elapsed_s:.2f} s")
    if verdict.peak_memory_mb is not None:
        facts.append(f"peak RAM {verdict.peak_memory_mb:.0f} MB")
    facts.append(f"device: {verdict.device}")
    msg.text(" · ".join(facts))
    if earned:
        msg.text(f"🏅 +{earned} points (first solve)")
    elif verdict.solved and earned == 0:
        msg.text("Solved before: resubmissions earn no extra points.")
    if verdict.solved:
        msg.text(f"**Why it works:** {challenge.explanation.strip()}")
    elif verdict.detail:
        tip = _explained(verdict.detail)
        if tip:
            msg.text(tip)
    if verdict.output.strip():
        shown, _ = truncate(verdict.output.rstrip(), 800, "… (truncated)")
        msg.text("Your code printed:")
        msg.code(shown, "text")
    return msg


def _explained(error: str) -> str | None:
    """content/errors.yaml applies to submissions too: the error the member's code raised."""
    try:
        from runner.explain import explain
    except ImportError:
        return None
    try:
        exp = explain(error)
    except Exception:  # the catalogue must never lose a verdict
        log.exception("explain() failed on a challenge verdict")
        return None
    return f"💡 **{exp.title}** — {exp.explanation}" if exp else None


class ChallengeDesk:
    """Opens problems, hints, submissions and the board; rules and texts live here."""

    def __init__(self, store: ChallengeProgressStore, clock: Clock, bank: ChallengeBank | None = None,
                 rng: random.Random | None = None) -> None:
        self.store = store
        self.clock = clock
        self._bank = bank
        self.rng = rng or random.Random()
        # told of every judged verdict (who, challenge id, passed, total, solved): /mock counts it
        self.verdict_listeners: list[Callable[[Who, str, int, int, bool], Awaitable[None]]] = []

    @property
    def bank(self) -> ChallengeBank:
        """Loaded on first use: most processes that build a desk never open a challenge."""
        if self._bank is None:
            self._bank = shipped_challenges()
        return self._bank

    # ---- opening and hints -----------------------------------------------------------------
    async def open(self, who: Who, topic: str | None, difficulty: int | None,
                   submit_how: str) -> Message:
        pool = [c for c in self.bank.challenges
                if (topic is None or c.topic == topic) and (difficulty is None or c.difficulty == difficulty)]
        if not pool:
            what = " and ".join(p for p in (topic and f"topic {topic}",
                                            difficulty and f"difficulty {difficulty}") if p)
            return notice(NO_MATCH.format(what=what or "this filter"))
        async with self.store.write() as tx:
            solved = await self.store.solved_ids(tx, who)
            fresh = [c for c in pool if c.id not in solved] or pool
            pick = self.rng.choice(fresh)
            await self.store.make_current(tx, who, pick, self.clock.now())
        return challenge_message(pick, submit_how)

    async def open_id(self, who: Who, challenge_id: str, submit_how: str) -> Message:
        """Open a named problem (the channel's weekly challenge) as the member's current one."""
        pick = self.bank.get(challenge_id)
        if pick is None:
            return notice(NO_MATCH.format(what=f"id {challenge_id}"))
        async with self.store.write() as tx:
            await self.store.make_current(tx, who, pick, self.clock.now())
        return challenge_message(pick, submit_how)

    async def current(self, who: Who) -> Challenge | None:
        async with self.store.read() as tx:
            row = await self.store.latest(tx, who)
        return self.bank.get(row.challenge_id) if row else None

    async def open_unsolved(self, who: Who) -> Challenge | None:
        """The member's latest opened problem when it is not solved yet (the dashboard's)."""
        async with self.store.read() as tx:
            row = await self.store.latest(tx, who, unsolved=True)
        return self.bank.get(row.challenge_id) if row else None

    async def hint(self, who: Who, open_how: str) -> Message:
        async with self.store.write() as tx:
            row = await self.store.latest(tx, who)
            challenge = self.bank.get(row.challenge_id) if row else None
            if row is None or challenge is None:
                return notice(NONE_OPEN.format(command=open_how))
            shown = min(row.hints_shown + 1, len(challenge.hints))
            await self.store.show_hints(tx, who, challenge.id, shown)
        msg = Message(title=f"💡 Hint {shown}/{len(challenge.hints)}: {challenge.title}", ephemeral=True)
        for i, hint in enumerate(challenge.hints[:shown], 1):
            msg.text(f"{i}. {hint}")
        if shown == len(challenge.hints):
            msg.footer = "That was the last hint."
        return msg

    # ---- judging ---------------------------------------------------------------------------
    def precheck(self, code: str) -> Message | None:
        """Refusals that need no queue: empty or too long (said before anything is public)."""
        if not code.strip():
            return notice(EMPTY)
        if len(code) > SUBMISSION_MAX:
            return notice(TOO_LONG.format(size=len(code), limit=SUBMISSION_MAX))
        return None

    async def submit(self, runner: RunnerService, who: Who, where: Where, code: str, *,
                     thread_of: str | None = None, open_how: str = "/challenge",
                     cancel_with: str = CANCEL_COMMAND) -> Message:
        """Queue the judging job; the verdict is published in ``thread_of`` by ``deliver``."""
        from runner.jobs import Device, JobRejected, JobRequest

        code = clean_code(code)
        refusal = self.precheck(code)
        if refusal is not None:
            return refusal
        challenge = await self.current(who)
        if challenge is None:
            return notice(NONE_OPEN.format(command=open_how))
        used = forbidden_uses(code, challenge.forbid)
        if used:
            return notice(f"This challenge asks you to write it yourself: "
                          f"{', '.join(used)} is not allowed here.")
        reply_to = {"platform": where.platform, "workspace": where.workspace,
                    "channel_id": where.channel_id, "user_id": who.user_id,
                    "display_name": who.display_name, "kind": KIND, "challenge": challenge.id}
        if thread_of:
            reply_to["thread_of"] = thread_of
        try:
            submitted = await runner.submit(JobRequest(
                code, requester_key(who), reply_to, Device.CPU, limits=challenge.job_limits,
                judge=judge_job(challenge.id, challenge.spec, challenge.reference)))
        except JobRejected as exc:
            return rejection(exc, cancel_with)
        line = "judging now" if submitted.position <= 0 else f"position {submitted.position} in the queue"
        return Message().text(f"⏳ Judging your solution to **{challenge.title}** ({line}); "
                              "the verdict will appear here.")

    def verdict(self, result: JobResult) -> tuple[Challenge, Verdict] | None:
        """The worker's verdict as sent (typed and capped), or why there is none."""
        challenge = self.bank.get(result.request.reply_to.get("challenge", ""))
        if challenge is None:
            return None
        if result.verdict is not None:
            return challenge, Verdict.from_dict(result.verdict)
        reason = result.error_message or NO_ANSWER
        return challenge, Verdict(0, 0, f"no verdict: {reason}", device=result.device_used,
                                  peak_memory_mb=result.peak_rss_mb)

    async def record(self, who: Who, challenge: Challenge, solved: bool) -> int:
        """Count the attempt; a first solve earns the challenge's points once. Returns them."""
        async with self.store.write() as tx:
            first = await self.store.record(tx, who, challenge, solved, self.clock.now())
        return challenge.points if first else 0

    async def deliver(self, result: JobResult, publisher: Publisher) -> None:
        reply = result.request.reply_to
        where = Where(reply["platform"], reply["workspace"], reply["channel_id"])
        judged = self.verdict(result)
        if judged is None:
            await publisher.publish(where, notice("That challenge is no longer in the bank."),
                                    thread_of=reply.get("thread_of"))
            return
        challenge, verdict = judged
        if result.state.value == "cancelled":  # its author stopped it: not judged, no attempt
            cancelled = Message(title=f"🛑 Cancelled: {challenge.title}").text(CANCELLED_BY_AUTHOR)
            cancelled.mention = reply.get("user_id")
            await publisher.publish(where, cancelled, thread_of=reply.get("thread_of"))
            return
        who = Who(reply["platform"], reply["workspace"], reply["user_id"], reply.get("display_name", ""))
        earned = await self.record(who, challenge, verdict.solved)
        for listener in self.verdict_listeners:
            try:
                await listener(who, challenge.id, verdict.passed, verdict.total, verdict.solved)
            except Exception:  # the verdict is published whatever a listener does
                log.exception("a verdict listener failed")
        message = verdict_message(challenge, verdict, earned if verdict.solved else None)
        message.mention = reply.get("user_id")
        await publisher.publish(where, message, thread_of=reply.get("thread_of"))

    # ---- boards ----------------------------------------------------------------------------
    async def board(self, platform: str, workspace: str, workspace_word: str) -> Message:
        """The challenges board of a workspace: points of first solves; ties to the earlier."""
        async with self.store.read() as tx:
            rows = await self.store.board(tx, platform, workspace, BOARD_SIZE)
        msg = Message(title=f"🧩 Challenges board · this {workspace_word}")
        if not rows:
            return msg.text("No solves yet. Be the first: /challenge")
        lines = [f"{i}. {row.name} — {row.points} pts · {row.solved} solved"
                 for i, row in enumerate(rows, 1)]
        return msg.text("\n".join(lines))

    async def solved_by_topic(self, who: Who) -> dict[str, int]:
        async with self.store.read() as tx:
            return await self.store.solved_by_topic(tx, who)

    async def mine(self, who: Who) -> Message:
        solved = await self.solved_by_topic(who)
        totals: dict[str, int] = {}
        for c in self.bank.challenges:
            totals[c.topic] = totals.get(c.topic, 0) + 1
        msg = Message(title="🧩 Your challenges", ephemeral=True)
        lines = [f"{TOPICS[t]}: {solved.get(t, 0)}/{n}" for t, n in sorted(totals.items())]
        msg.text(f"Solved {sum(solved.values())} of {len(self.bank.challenges)}.\n" + "\n".join(lines))
        return msg
