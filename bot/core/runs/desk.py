"""`/run`: hand code to the runner and post its result back into the chat thread.

The member gets an immediate acknowledgement (queue position or a clear refusal); the result
arrives later through the runner's callback and is published with the bot's own credentials
into the thread of the acknowledgement, so no interaction token has to stay alive.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from bot.core.content.bank import Library, fenced_code
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Attachment, Message, truncate
from bot.core.publisher import Publisher
from bot.core.render.notices import notice
from bot.observability.metrics import RUNNER_JOB_SECONDS, RUNNER_QUEUE_DEPTH, SANDBOX_FAILURES

if TYPE_CHECKING:
    from runner.jobs import JobRejected, JobResult
    from runner.service import RunnerService

log = logging.getLogger(__name__)

STATE_TITLES = {
    "done": "✅ Finished",
    "failed": "❌ Failed",
    "timeout": "⏱ Timed out",
    "cancelled": "🛑 Cancelled",
    "interrupted": "⚠️ Interrupted",
}
INLINE_CHARS = 1500
NO_CODE = "There is no code to run. Paste a snippet or a ```python block."
CANCELLED_BY_AUTHOR = "Cancelled by its author."
ALREADY_ACTIVE = ("You already have a job queued or running (`{job_id}`): wait for its result in "
                  "its thread, or cancel it with {cancel}.")
CANCEL_COMMAND = "/run cancel"  # the dispatcher passes each platform's own spelling


def rejection(exc: JobRejected, cancel_with: str = CANCEL_COMMAND) -> Message:
    """What a member reads when the runner turns a job down: an unfinished job of theirs is
    named with the command that cancels it."""
    if exc.active_job is not None:
        return notice(ALREADY_ACTIVE.format(job_id=exc.active_job, cancel=cancel_with))
    return notice(exc.message)


def clean_code(text: str) -> str:
    """Accept a raw snippet or a message with a ```python fenced block."""
    fenced = fenced_code(text)
    return (text if fenced is None else fenced).strip("\n")


def requester_key(who: Who) -> str:
    return f"{who.platform}:{who.workspace}:{who.user_id}"


def result_message(result: JobResult, library: Library | None = None) -> Message:
    state = result.state.value
    msg = Message(title=STATE_TITLES.get(state, state))
    if state == "cancelled":  # only its author can cancel a job: what it printed so far is moot
        return msg.text(CANCELLED_BY_AUTHOR)
    facts = [f"{result.duration_s:.2f} s", f"device: {result.device_used}"]
    if result.torch_version:  # the torch it ran on: the answers were verified on one torch
        facts.append(f"torch {result.torch_version}")
    if result.peak_rss_mb is not None:
        facts.append(f"peak RAM {result.peak_rss_mb:.0f} MB")
    if result.gpu_max_allocated_mb is not None:
        facts.append(f"GPU max allocated {result.gpu_max_allocated_mb:.0f} MB")
    msg.text(" · ".join(facts))
    if result.device_note:
        msg.text(f"_{result.device_note}_")
    if result.error_message:
        msg.text(f"**{result.error_message}**")
    for label, stream in (("stdout", result.stdout), ("stderr", result.stderr)):
        if stream.strip():
            shown, cut = truncate(stream.rstrip(), INLINE_CHARS, "… (truncated; full output attached)")
            msg.text(f"{label}:")
            msg.code(shown, "text")
            if cut and result.full_output is None:
                msg.attachments.append(Attachment(f"{label}.txt", stream.encode()))
    if result.output_truncated:
        msg.text("_Output was cut at the runner's cap._")
    if result.full_output:
        msg.attachments.append(Attachment("output.txt", result.full_output))
    exp = result.explanation
    if exp is not None:
        msg.text(f"💡 **{exp.title}** — {exp.explanation}")
        msg.text(f"**Fix:** {exp.fix}")
        if exp.fix_code:
            msg.code(exp.fix_code)
        related = [library[r] for r in exp.related if r in library] if library else []
        if related:
            msg.text("**Practise this** (in /quiz and /review):\n" + "\n".join(f"• {q.prompt}" for q in related[:3]))
    if result.state.value == "done" and not result.stdout.strip() and not result.stderr.strip():
        msg.text("(no output — use print() to see values)")
    return msg


class RunDesk:
    """Submits jobs for members and routes results back to where they asked."""

    def __init__(
        self, runner: RunnerService, publisher: Publisher, library: Library | None = None
    ) -> None:
        self.runner = runner
        self.publisher = publisher
        self.library = library  # to name the related questions of an explained error
        runner.on_result(self.deliver)
        # results of other kinds of jobs (reply_to["kind"], e.g. a judged /challenge) go to
        # their desk; without one registered they are still shown as a plain result
        self.handlers: dict[str, Callable[[JobResult], Awaitable[None]]] = {}

    def precheck(self, code: str) -> Message | None:
        """Refusals that need no queue: empty or oversized code (before anything is public)."""
        from runner.fairness import check_code_size
        from runner.jobs import JobRejected

        if not code.strip():
            return notice(NO_CODE)
        settings = getattr(self.runner, "settings", None)
        if settings is not None:
            try:
                check_code_size(code, settings.max_code_bytes)
            except JobRejected as exc:
                return notice(exc.message)
        return None

    async def submit(
        self, who: Who, where: Where, code: str, *, thread_of: str | None = None, device: str = "auto",
        cancel_with: str = CANCEL_COMMAND,
    ) -> Message:
        from runner.jobs import Device, JobRejected, JobRequest

        code = clean_code(code)
        refusal = self.precheck(code)
        if refusal is not None:
            return refusal
        try:
            wanted = Device(device.lower())
        except ValueError:
            return notice(f"unknown device {device!r}; use auto, gpu or cpu")
        reply_to = {
            "platform": where.platform, "workspace": where.workspace, "channel_id": where.channel_id,
            "user_id": who.user_id,
        }
        if thread_of:
            reply_to["thread_of"] = thread_of
        request = JobRequest(code=code, requester=requester_key(who), reply_to=reply_to, device=wanted)
        try:
            submitted = await self.runner.submit(request)
        except JobRejected as exc:
            return rejection(exc, cancel_with)
        RUNNER_QUEUE_DEPTH.set(max(0, submitted.position))
        where_in_line = "running now" if submitted.position <= 0 else f"position {submitted.position} in the queue"
        # the whole id: the runner's refusals ("you already have a running job (…)") name it so
        return Message().text(f"⏳ Job `{submitted.job_id}` queued ({where_in_line}). The result will appear in this thread.")

    async def cancel(self, who: Who) -> str | None:
        """Cancel the member's own queued or running job (a /run or a /submit); its id, or None
        when there was none. Its thread is told when the runner delivers the result."""
        return await self.runner.cancel_mine(requester_key(who))

    async def deliver(self, result: JobResult) -> None:
        RUNNER_JOB_SECONDS.labels(state=result.state.value, device=result.device_used.split(" ")[0]).observe(
            result.duration_s
        )
        if result.error_message and result.state.value in ("timeout", "failed", "interrupted"):
            SANDBOX_FAILURES.labels(reason=result.error_message.split(":")[0][:40]).inc()
        reply = result.request.reply_to
        handler = self.handlers.get(reply.get("kind", ""))
        if handler is not None:
            await handler(result)
            return
        where = Where(reply["platform"], reply["workspace"], reply["channel_id"])
        message = result_message(result, self.library)
        message.mention = reply.get("user_id")
        await self.publisher.publish(where, message, thread_of=reply.get("thread_of"))
