"""Dispatch: validate a request against the catalogue, check permissions, call the feature.

Adapters hand over who asked (with the platform's ``is_admin`` fact), where, and either the
raw text (Slack, console) or typed values (Discord). Every reply, refusal and error message
is built here, so a rule or a text cannot differ between platforms.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Protocol

from bot.core.commands import replies
from bot.core.commands.catalogue import COMMANDS, Catalogue, Command
from bot.core.commands.grammar import FileOpener, OptionError, Request, parse, resolve, validate
from bot.core.commands.help import help_message
from bot.core.model.actions import BadActionError, Verb, decode
from bot.core.model.identity import Where, Who
from bot.core.model.messages import Message
from bot.core.model.publisher import Publisher
from bot.core.model.tasks import BackgroundTasks
from bot.core.model.topics import TOPICS
from bot.core.play.answers import Outcome
from bot.core.play.bank_desk import BankDesk
from bot.core.play.challenge_desk import KIND as CHALLENGE_KIND
from bot.core.play.challenge_desk import SUBMISSION_MAX, SUBMIT_HOW, ChallengeDesk
from bot.core.play.delivery import tell_privately
from bot.core.play.drill import Drill
from bot.core.play.runs import clean_code
from bot.core.play.user_errors import USER_ERRORS
from bot.core.play.weekly import NO_WEEKLY as WEEKLY_NONE
from bot.core.play.weekly import WeeklyKind, WeeklyPosting
from bot.observability.metrics import observe_interaction

if TYPE_CHECKING:
    from bot.core.play.daily import DailyPosting
    from bot.core.play.runs import RunDesk

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Caller:
    """Who asked, where (None in a direct message), and what their platform says of them."""

    who: Who
    where: Where | None
    is_admin: bool = False
    words: replies.Words = field(default_factory=replies.Words)


class RunnerAccess(Protocol):
    def desk(self) -> RunDesk | None: ...

    def unavailable(self) -> str:
        """Why there is no desk: still starting, or not available (and why)."""
        ...


class AckChannel(Protocol):
    """How an adapter posts, edits and retracts the public acknowledgement of a /run."""

    async def post(self, ack: Message) -> str | None: ...

    async def edit(self, ref: str, ack: Message, status: Message) -> None:
        """``ack`` now ends with ``status`` (queued, position): show either."""
        ...

    async def retract(self, ref: str) -> None: ...


Handler = Callable[[Caller, Request], Awaitable[Message]]


class PublishedAck:
    """A /run acknowledgement posted as a plain channel message (for runs a command starts,
    such as /bank check); a refused run edits it to say so, as no platform lets us unsend."""

    def __init__(self, publisher: Publisher, where: Where) -> None:
        self.publisher, self.where = publisher, where

    async def post(self, ack: Message) -> str | None:
        return await self.publisher.publish(self.where, ack)

    async def edit(self, ref: str, ack: Message, status: Message) -> None:
        await self.publisher.update(self.where, ref, ack)

    async def retract(self, ref: str) -> None:
        await self.publisher.update(self.where, ref, replies.notice(replies.RUN_WITHDRAWN))


@dataclass(frozen=True)
class CodeForm:
    """What a platform's code box shows: /run's snippet box or /submit's prefilled stub."""

    title: str
    submit_label: str
    initial: str = ""
    max_chars: int | None = None  # None: the runner's code limit


@dataclass(frozen=True)
class Pending:
    """A validated command whose durable first step (if any) is done; ``finish`` runs the rest."""

    run: Callable[[], Awaitable[Message]]

    @staticmethod
    def done(message: Message) -> Pending:
        async def answered() -> Message:
            return message

        return Pending(answered)

    async def finish(self) -> Message:
        return await self.run()


class CommandDesk:
    """The port adapters call for commands, buttons and /run."""

    def __init__(
        self, drill: Drill, daily: DailyPosting, publisher: Publisher, runner: RunnerAccess,
        catalogue: Catalogue = COMMANDS,
    ) -> None:
        self.drill = drill
        self.daily = daily
        self.publisher = publisher
        self.runner = runner
        self.catalogue = catalogue
        self.tasks = BackgroundTasks()
        self.handlers: dict[str, Handler] = {
            "quiz": self._quiz, "review": self._review, "round": self._round,
            "stats": self._stats, "leaderboard": self._leaderboard, "group": self._group,
            "daily schedule": self._daily_schedule, "daily pause": self._daily_pause,
            "daily resume": self._daily_resume, "daily now": self._daily_now,
            "daily status": self._daily_status, "daily challenge": self._daily_challenge,
            "daily digest": self._daily_digest,
            "help": self._help,
            "challenge": self._challenge,
            "bank upload": self._bank_upload, "bank list": self._bank_list, "bank show": self._bank_show,
            "bank disable": self._bank_disable, "bank enable": self._bank_enable,
            "bank export": self._bank_export, "bank review": self._bank_review,
            "bank import": self._bank_import, "bank check": self._bank_check, "suggest": self._suggest,
        }
        self.challenges = ChallengeDesk(drill.db, drill.clock)
        self.banks = BankDesk(drill.db, drill.library, drill.clock, drill.shelf)
        self.weekly = WeeklyPosting(drill.db, drill.clock, publisher, on_change=daily.changed,
                                    library=drill.library)

    # ---- entry points --------------------------------------------------------------------
    # Adapters call ``prepare_*`` before they acknowledge the platform and ``Pending.finish``
    # after: what must be durable before the acknowledgement (today's /daily now claim) is
    # done in ``prepare``, which stays well inside the 3 s the platforms allow.
    async def prepare_text(self, caller: Caller, name: str, text: str,
                           open_file: FileOpener | None = None) -> Pending:
        """A command typed as text (Slack, console): parse and validate."""
        command = self.catalogue.find(name.lower().lstrip("/"))
        if command is None:
            log.warning("unknown command", extra={"command": name})
            return Pending.done(replies.unknown_command(caller.words, name.lstrip("/")))
        try:
            request = parse(command, text, open_file)
        except OptionError as exc:
            return Pending.done(replies.notice(str(exc)))
        return await self.prepare(caller, request)

    async def prepare_values(
        self, caller: Caller, path: tuple[str, ...], values: dict[str, object]
    ) -> Pending:
        """A command with typed options (Discord): the same validation as text."""
        command = self.catalogue.find(path[0])
        if command is None:
            log.warning("unknown command", extra={"command": path[0]})
            return Pending.done(replies.unknown_command(caller.words, path[0]))
        try:
            leaf, full, _ = resolve(command, list(path[1:]))
            request = validate(leaf, {k: v for k, v in values.items() if v is not None}, full)
        except OptionError as exc:
            return Pending.done(replies.notice(str(exc)))
        return await self.prepare(caller, request)

    async def prepare(self, caller: Caller, request: Request) -> Pending:
        refusal = self._refusal(caller, request)
        if refusal is not None:
            return Pending.done(refusal)
        if request.key == "daily now":
            assert caller.where is not None
            try:
                claim = await self.daily.claim_now(caller.where)
            except Exception:
                log.exception("/daily now could not record its claim")
                return Pending.done(replies.notice(replies.SORRY))
            return Pending(lambda: self._guarded(caller, request, lambda: self.daily.finish_now(claim)))
        return Pending(lambda: self.execute(caller, request))

    async def execute_text(self, caller: Caller, name: str, text: str) -> Message:
        return await (await self.prepare_text(caller, name, text)).finish()

    async def execute_values(
        self, caller: Caller, path: tuple[str, ...], values: dict[str, object]
    ) -> Message:
        return await (await self.prepare_values(caller, path, values)).finish()

    def _refusal(self, caller: Caller, request: Request) -> Message | None:
        return self.refusal_of(caller, request.path)

    def refusal_of(self, caller: Caller, path: tuple[str, ...]) -> Message | None:
        """Why ``caller`` may not use the command at ``path`` (None: they may), before any
        form is shown for it."""
        commands, key = self.catalogue.along(path), " ".join(path)
        if not commands:
            return replies.unknown_command(caller.words, path[0])
        if self.catalogue.admin_only(path) and not caller.is_admin:
            return replies.admin_only(caller.words, key)
        if any(c.in_channel_only for c in commands) and caller.where is None:
            return replies.in_channel_only(caller.words, key)
        if key not in self.handlers:
            return replies.unknown_command(caller.words, key)
        return None

    async def execute(self, caller: Caller, request: Request) -> Message:
        refusal = self._refusal(caller, request)
        if refusal is not None:
            return refusal
        handler = self.handlers[request.key]
        return await self._guarded(caller, request, lambda: handler(caller, request))

    async def _guarded(
        self, caller: Caller, request: Request, work: Callable[[], Awaitable[Message]]
    ) -> Message:
        with observe_interaction(caller.who.platform, request.key):
            try:
                return await work()
            except USER_ERRORS as exc:
                return replies.notice(str(exc))
            except Exception:
                log.exception("command failed", extra={"command": request.key})
                return replies.notice(replies.SORRY)

    async def press(self, who: Who, action_id: str) -> Outcome:
        """A button click; the core decides what it means (or that it is not ours)."""
        try:
            action = decode(action_id)
        except BadActionError:
            action = None
        if action is not None and action.verb is Verb.PROGRESS:
            progress = await self.stats_of(who, None)
            progress.ephemeral = True
            return Outcome(progress)
        if action is not None and action.verb is Verb.TAKE:
            item = await self.weekly.item_of(action.post_id)
            if item is None:
                return Outcome(replies.notice(WEEKLY_NONE))
            words = replies.Words()  # a button carries no platform words; both use these names
            how = SUBMIT_HOW.format(submit=words.command("submit"), challenge=words.command("challenge"))
            return Outcome(await self.challenges.open_id(who, item, how))
        return await self.drill.handle_action(who, action_id)

    def command(self, name: str) -> Command | None:
        return self.catalogue.find(name)

    def topic_choices(self, prefix: str = "") -> list[tuple[str, str]]:
        """Topics that have questions, for autocomplete and the playground's list."""
        return self.drill.topic_choices(prefix)

    # ---- /run ------------------------------------------------------------------------------
    async def run_code(self, caller: Caller, code: str, channel: AckChannel) -> Message | None:
        """Check, acknowledge publicly, submit. Returns what to tell the member privately."""
        desk = self.runner.desk()
        if desk is None:
            return replies.notice(self.runner.unavailable())
        if caller.where is None:
            return replies.in_channel_only(caller.words, "run")
        code = clean_code(code)
        refusal = desk.precheck(code)
        if refusal is not None:  # refused before anything public exists
            return refusal
        ack = replies.run_acknowledgement(caller.who.display_name or caller.who.user_id, code, caller.words)
        ref = await channel.post(ack)
        if ref is None:
            return replies.notice(replies.NOT_IN_CHANNEL.format(invite=caller.words.invite))
        try:
            status = await desk.submit(caller.who, caller.where, code, thread_of=ref)
        except Exception:
            log.exception("/run submission failed")
            status = replies.notice(replies.SORRY)
        if status.ephemeral:  # refused after all (rate, queue): leave nothing public behind
            await channel.retract(ref)
            return status
        ack.blocks.extend(status.blocks)
        await channel.edit(ref, ack, status)
        return None

    # ---- code boxes: /run and /submit ----------------------------------------------------
    async def code_form(self, caller: Caller, command: str) -> CodeForm | Message:
        """The box to open for a code_input command, or why not (no open challenge)."""
        if command != "submit":
            return CodeForm("Run a PyTorch snippet", "Run")
        challenge = await self.challenges.current(caller.who)
        if challenge is None:
            return replies.notice(f"You have no open challenge. Start one with "
                                  f"{caller.words.command('challenge')}.")
        return CodeForm("Submit your solution", "Submit", challenge.stub, SUBMISSION_MAX)

    async def submit_code(self, caller: Caller, command: str, code: str, channel: AckChannel) -> Message | None:
        """What a submitted code box does: judge a /submit, run anything else."""
        if command == "submit":
            return await self.submit_challenge(caller, code, channel)
        return await self.run_code(caller, code, channel)

    # ---- /challenge submissions -----------------------------------------------------------
    def attach_runs(self, desk: RunDesk) -> None:
        """Judged results go to the challenge desk, also those delivered right at start-up."""
        desk.handlers.setdefault(CHALLENGE_KIND, lambda r: self.challenges.deliver(r, desk.publisher))

    async def submit_challenge(self, caller: Caller, code: str, channel: AckChannel) -> Message | None:
        """Like run_code: check, acknowledge publicly (the code is not shown), submit the
        judging job; the verdict lands in the acknowledgement's thread."""
        desk = self.runner.desk()
        if desk is None:
            return replies.notice(self.runner.unavailable())
        if caller.where is None:
            return replies.in_channel_only(caller.words, "submit")
        self.attach_runs(desk)
        refusal = self.challenges.precheck(clean_code(code))
        if refusal is None and await self.challenges.current(caller.who) is None:
            refusal = replies.notice(f"You have no open challenge. Start one with "
                                     f"{caller.words.command('challenge')}.")
        if refusal is not None:
            return refusal
        challenge = await self.challenges.current(caller.who)
        assert challenge is not None
        name = caller.who.display_name or caller.who.user_id
        ack = Message(title=f"🧩 {name} submitted a solution to {challenge.title}")
        ref = await channel.post(ack)
        if ref is None:
            return replies.notice(replies.NOT_IN_CHANNEL.format(invite=caller.words.invite))
        try:
            status = await self.challenges.submit(desk.runner, caller.who, caller.where, code, thread_of=ref,
                                                  open_how=caller.words.command("challenge"))
        except Exception:
            log.exception("/challenge submission failed")
            status = replies.notice(replies.SORRY)
        if status.ephemeral:
            await channel.retract(ref)
            return status
        ack.blocks.extend(status.blocks)
        await channel.edit(ref, ack, status)
        return None

    # ---- handlers ------------------------------------------------------------------------
    async def _challenge(self, caller: Caller, r: Request) -> Message:
        action, who = r.values["action"], caller.who
        if action == "hint":
            return await self.challenges.hint(who, caller.words.command("challenge"))
        if action == "board":
            return await self.challenges.board(who.platform, who.workspace, caller.words.workspace)
        if action == "mine":
            return await self.challenges.mine(who)
        how = SUBMIT_HOW.format(submit=caller.words.command("submit"),
                                challenge=caller.words.command("challenge"))
        if action == "week":
            item = await self.weekly.current_item(caller.where)
            if item is None:
                return replies.notice(WEEKLY_NONE)
            return await self.challenges.open_id(who, item, how)
        return await self.challenges.open(
            who, r.values["topic"], r.values["difficulty"], how)  # type: ignore[arg-type]

    async def _quiz(self, caller: Caller, r: Request) -> Message:
        v = r.values
        return await self.drill.practice.quiz(
            caller.who, topic=v["topic"], count=v["count"], difficulty=v["difficulty"],  # type: ignore[arg-type]
            source=v["banks"],  # type: ignore[arg-type]
        )

    # ---- /bank and /suggest --------------------------------------------------------------
    async def _bank_upload(self, caller: Caller, r: Request) -> Message:
        return await self.banks.upload(caller.who, r.values["file"])  # type: ignore[arg-type]

    async def _bank_list(self, caller: Caller, r: Request) -> Message:
        return await self.banks.list(caller.who, caller.words.workspace)

    async def _bank_show(self, caller: Caller, r: Request) -> Message:
        return await self.banks.show(caller.who, str(r.values["bank"]))

    async def _bank_disable(self, caller: Caller, r: Request) -> Message:
        return await self.banks.set_enabled(caller.who, str(r.values["bank"]), False)

    async def _bank_enable(self, caller: Caller, r: Request) -> Message:
        return await self.banks.set_enabled(caller.who, str(r.values["bank"]), True)

    async def _bank_export(self, caller: Caller, r: Request) -> Message:
        return await self.banks.export(caller.who, str(r.values["bank"]))

    async def _bank_import(self, caller: Caller, r: Request) -> Message:
        return self.banks.draft(r.values["file"], str(r.values["format"]))  # type: ignore[arg-type]

    async def _bank_check(self, caller: Caller, r: Request) -> Message:
        """An admin checks a community snippet through /run: same sandbox, same limits."""
        assert caller.where is not None
        found = await self.banks.snippet(caller.who, str(r.values["question"]))
        if isinstance(found, Message):
            return found
        private = await self.run_code(caller, found, PublishedAck(self.publisher, caller.where))
        if private is not None:
            return private
        return replies.notice(f"Running the snippet of {r.values['question']}; the output lands in the thread.")

    async def _bank_review(self, caller: Caller, r: Request) -> Message:
        v, review = r.values, caller.words.command("bank") + " review"
        if v["action"] == "next":
            return await self.banks.review_next(caller.who)
        if v["id"] is None:
            return replies.notice(f"Name the suggestion: {review} {v['action']} id:N")
        tell = partial(tell_privately, self.publisher)
        if v["action"] == "approve":
            return await self.banks.approve(caller.who, int(v["id"]), v["bank"], tell)  # type: ignore[call-overload]
        return await self.banks.reject(caller.who, int(v["id"]), v["reason"], tell)  # type: ignore[call-overload, arg-type]

    async def _suggest(self, caller: Caller, r: Request) -> Message:
        v = r.values
        return await self.banks.suggest(
            caller.who, prompt=str(v["prompt"]), choices=str(v["choices"]), explanation=str(v["explanation"]),
            topic=str(v["topic"]), difficulty=int(v["difficulty"]),  # type: ignore[call-overload]
        )

    async def _review(self, caller: Caller, r: Request) -> Message:
        return await self.drill.practice.review(caller.who, count=r.values["count"])  # type: ignore[arg-type]

    async def _round(self, caller: Caller, r: Request) -> Message:
        assert caller.where is not None
        count, seconds = int(r.values["count"]), int(r.values["seconds"])  # type: ignore[call-overload]
        started = await self.drill.rounds.start(
            caller.where, caller.who, count=count, seconds=seconds, topic=r.values["topic"],  # type: ignore[arg-type]
        )
        if isinstance(started, Message):
            return started
        self.tasks.spawn(self.drill.rounds.play(started, caller.where, self.publisher), f"round {started}")
        return replies.round_started(count, seconds)

    async def _stats(self, caller: Caller, r: Request) -> Message:
        return await self.stats_of(caller.who, caller.where)

    async def stats_of(self, who: Who, where: Where | None) -> Message:
        """/stats, and the "My progress" button under a weekly digest."""
        message = await self.drill.practice.stats(who, where)
        solved = await self.challenges.solved_by_topic(who)
        if solved:
            message.text("🧩 Challenges solved: " + ", ".join(
                f"{TOPICS.get(t, t)} {n}" for t, n in sorted(solved.items())))
        return message

    async def _leaderboard(self, caller: Caller, r: Request) -> Message:
        assert caller.where is not None
        v = r.values
        return await self.drill.boards.leaderboard(
            caller.who, caller.where, scope=v["scope"], period=v["period"], group=v["group"],  # type: ignore[arg-type]
            workspace_word=caller.words.workspace, chart=bool(v["chart"]),
        )

    async def _group(self, caller: Caller, r: Request) -> Message:
        action, name = r.values["action"], r.values["name"]
        if action == "stats":
            if not name:
                return replies.notice(f"{caller.words.command('group')} stats needs a group name.")
            assert caller.where is not None
            return await self.drill.boards.group_stats(caller.who, caller.where, str(name))
        return await self.drill.boards.group(caller.who, action, name)  # type: ignore[arg-type]

    async def _daily_schedule(self, caller: Caller, r: Request) -> Message:
        assert caller.where is not None
        v = r.values
        return await self.daily.set_schedule(
            caller.where, at=v["time"], timezone=v["timezone"], weekdays=v["weekdays"],  # type: ignore[arg-type]
            topic=v["topic"], reveal_after_hours=v["reveal_after_hours"],  # type: ignore[arg-type]
            source=v["banks"],  # type: ignore[arg-type]
        )

    async def _daily_pause(self, caller: Caller, r: Request) -> Message:
        assert caller.where is not None
        return await self.daily.set_paused(caller.where, True)

    async def _daily_resume(self, caller: Caller, r: Request) -> Message:
        assert caller.where is not None
        return await self.daily.set_paused(caller.where, False)

    async def _daily_now(self, caller: Caller, r: Request) -> Message:
        assert caller.where is not None
        return await self.daily.post_now(caller.where)

    async def _daily_status(self, caller: Caller, r: Request) -> Message:
        assert caller.where is not None
        return await self.daily.status(caller.where)

    async def _daily_challenge(self, caller: Caller, r: Request) -> Message:
        assert caller.where is not None
        return await self.weekly.set_weekly(caller.where, WeeklyKind.CHALLENGE, r.values["day"],  # type: ignore[arg-type]
                                            r.values["time"])  # type: ignore[arg-type]

    async def _daily_digest(self, caller: Caller, r: Request) -> Message:
        assert caller.where is not None
        return await self.weekly.set_weekly(caller.where, WeeklyKind.DIGEST, r.values["day"],  # type: ignore[arg-type]
                                            r.values["time"])  # type: ignore[arg-type]

    async def _help(self, caller: Caller, r: Request) -> Message:
        return help_message(caller.words, self.catalogue)

    async def close(self) -> None:
        await self.tasks.cancel_all()
