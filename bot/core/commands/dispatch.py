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

from bot.core.answers.recording import Outcome
from bot.core.challenges.desk import KIND as CHALLENGE_KIND
from bot.core.challenges.desk import SUBMISSION_MAX, SUBMIT_HOW
from bot.core.commands import replies
from bot.core.commands.catalogue import COMMANDS, Catalogue, Command
from bot.core.commands.grammar import FileOpener, OptionError, Request, parse, resolve, validate
from bot.core.commands.help import help_message
from bot.core.commands.services import Services
from bot.core.content.community import draft_from_message
from bot.core.domain.actions import BadActionError, Verb, decode
from bot.core.domain.forms import Form
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Message, Upload
from bot.core.domain.tasks import BackgroundTasks
from bot.core.domain.topics import TOPICS
from bot.core.drill.delivery import tell_privately
from bot.core.drill.user_errors import USER_ERRORS
from bot.core.learning.report_desk import form_of as report_form_of
from bot.core.publisher import Publisher
from bot.core.runs.desk import clean_code
from bot.core.weekly.service import NO_WEEKLY as WEEKLY_NONE
from bot.core.weekly.service import WeeklyKind
from bot.observability.metrics import observe_interaction

if TYPE_CHECKING:
    from bot.core.runs.desk import RunDesk

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Caller:
    """Who asked, where (None in a direct message), and what their platform says of them."""

    who: Who
    where: Where | None
    is_admin: bool = False
    words: replies.Words = field(default_factory=replies.Words)


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

    def __init__(self, services: Services, catalogue: Catalogue = COMMANDS) -> None:
        self.services = services
        self.catalogue = catalogue
        self.tasks = BackgroundTasks()
        self.handlers: dict[str, Handler] = {
            "quiz": self._quiz, "review": self._review, "round": self._round,
            "stats": self._stats, "leaderboard": self._leaderboard, "group": self._group,
            "daily schedule": self._daily_schedule, "daily pause": self._daily_pause,
            "daily resume": self._daily_resume, "daily now": self._daily_now,
            "daily status": self._daily_status, "daily challenge": self._daily_challenge,
            "daily digest": self._daily_digest, "daily rewards": self._daily_rewards,
            "daily streak": self._daily_streak,
            "help": self._help,
            "challenge": self._challenge,
            "bank upload": self._bank_upload, "bank list": self._bank_list, "bank show": self._bank_show,
            "bank disable": self._bank_disable, "bank enable": self._bank_enable,
            "bank export": self._bank_export, "bank review": self._bank_review,
            "bank import": self._bank_import, "bank check": self._bank_check, "suggest": self._suggest,
            "bank quality": self._bank_quality, "run": self._run, "report": self._report,
            "mock": self._mock,
        }

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
                claim = await self.services.daily.claim_now(caller.where)
            except Exception:
                log.exception("/daily now could not record its claim")
                return Pending.done(replies.notice(replies.SORRY))
            return Pending(lambda: self._guarded(caller, request, lambda: self.services.daily.finish_now(claim)))
        return Pending(lambda: self.execute(caller, request))

    async def execute_text(self, caller: Caller, name: str, text: str) -> Message:
        return await (await self.prepare_text(caller, name, text)).finish()

    async def execute_values(
        self, caller: Caller, path: tuple[str, ...], values: dict[str, object]
    ) -> Message:
        return await (await self.prepare_values(caller, path, values)).finish()

    def _refusal(self, caller: Caller, request: Request) -> Message | None:
        return self.refusal_of(caller, request.path) or self._choice_refusal(caller, request)

    @staticmethod
    def _choice_refusal(caller: Caller, request: Request) -> Message | None:
        """A value the catalogue marks admin-only (``mock schedule``): an admin, in a channel."""
        for option in request.command.options:
            chosen = request.values.get(option.name)
            for choice in option.choices:
                if choice.admin_only and chosen == choice.value:
                    key = f"{request.key} {choice.value}"
                    if not caller.is_admin:
                        return replies.admin_only(caller.words, key)
                    if caller.where is None:
                        return replies.in_channel_only(caller.words, key)
        return None

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

    def form_of(self, action_id: str) -> Form | None:
        """The modal a button opens instead of a reply (the 🚩 report form), decided without
        storage so an adapter can open it as the interaction's first response; None: ``press``."""
        try:
            return report_form_of(decode(action_id))
        except BadActionError:
            return None

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
        if action is not None and action.verb is Verb.MOCK:
            return Outcome(await self.services.mocks.press(who, action))
        if action is not None and action.verb is Verb.JOIN:
            return Outcome(await self.services.group_mocks.join(who, action.post_id, replies.Words()))
        if action is not None and action.verb is Verb.HOME:
            return await self.services.home.press(who, action)
        if action is not None and action.verb is Verb.FLAG:
            return Outcome(await self.services.reports.press(who, action.post_id, action.arg))
        if action is not None and action.verb is Verb.TAKE:
            item = await self.services.weekly.item_of(action.post_id)
            if item is None:
                return Outcome(replies.notice(WEEKLY_NONE))
            words = replies.Words()  # a button carries no platform words; both use these names
            how = SUBMIT_HOW.format(submit=words.command("submit"), challenge=words.command("challenge"))
            return Outcome(await self.services.challenges.open_id(who, item, how))
        return await self.services.drill.handle_action(who, action_id)

    def command(self, name: str) -> Command | None:
        return self.catalogue.find(name)

    async def track_choices(self, who: Who, prefix: str = "") -> list[tuple[str, str]]:
        """The built-in tracks and ``who``'s community's, for the track option's autocomplete."""
        return await self.services.mocks.track_choices(who, prefix)

    def topic_choices(self, prefix: str = "") -> list[tuple[str, str]]:
        """Topics that have questions, for autocomplete and the playground's list."""
        return self.services.drill.topic_choices(prefix)

    # ---- /run ------------------------------------------------------------------------------
    async def run_code(self, caller: Caller, code: str, channel: AckChannel) -> Message | None:
        """Check, acknowledge publicly, submit. Returns what to tell the member privately."""
        desk = self.services.runner.desk()
        if desk is None:
            return replies.notice(self.services.runner.unavailable())
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
            status = await desk.submit(caller.who, caller.where, code, thread_of=ref,
                                       cancel_with=caller.words.command("run cancel"))
        except Exception:
            log.exception("/run submission failed")
            status = replies.notice(replies.SORRY)
        if status.ephemeral:  # refused after all (rate, queue): leave nothing public behind
            await channel.retract(ref)
            return status
        ack.blocks.extend(status.blocks)
        await channel.edit(ref, ack, status)
        return None

    async def _run(self, caller: Caller, r: Request) -> Message:
        """``/run cancel`` (the code itself comes through ``run_code``, from a code box)."""
        desk = self.services.runner.desk()
        if desk is None:
            return replies.notice(self.services.runner.unavailable())
        # cancel is its only action: code never reaches here (Command.takes_words)
        job_id = await desk.cancel(caller.who)
        if job_id is None:
            return replies.notice(replies.NOTHING_TO_CANCEL)
        return replies.notice(replies.RUN_CANCELLED.format(job_id=job_id))

    def question_form(self, caller: Caller, text: str) -> dict[str, str] | Message:
        """"Ask as a question" on a message: the /suggest form's first values, for admins."""
        if not caller.is_admin:
            return replies.notice(f"Only {caller.words.admins} can use “Ask as a question”.")
        return self.refusal_of(caller, ("suggest",)) or draft_from_message(text)

    # ---- code boxes: /run and /submit ----------------------------------------------------
    async def code_form(self, caller: Caller, command: str) -> CodeForm | Message:
        """The box to open for a code_input command, or why not (no open challenge)."""
        if command != "submit":
            return CodeForm("Run a PyTorch snippet", "Run")
        challenge = await self.services.challenges.current(caller.who)
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
        desk.handlers.setdefault(CHALLENGE_KIND, lambda r: self.services.challenges.deliver(r, desk.publisher))

    async def submit_challenge(self, caller: Caller, code: str, channel: AckChannel) -> Message | None:
        """Like run_code: check, acknowledge publicly (the code is not shown), submit the
        judging job; the verdict lands in the acknowledgement's thread."""
        desk = self.services.runner.desk()
        if desk is None:
            return replies.notice(self.services.runner.unavailable())
        if caller.where is None:
            return replies.in_channel_only(caller.words, "submit")
        self.attach_runs(desk)
        refusal = self.services.challenges.precheck(clean_code(code))
        if refusal is None and await self.services.challenges.current(caller.who) is None:
            refusal = replies.notice(f"You have no open challenge. Start one with "
                                     f"{caller.words.command('challenge')}.")
        if refusal is not None:
            return refusal
        challenge = await self.services.challenges.current(caller.who)
        assert challenge is not None
        name = caller.who.display_name or caller.who.user_id
        ack = Message(title=f"🧩 {name} submitted a solution to {challenge.title}")
        ref = await channel.post(ack)
        if ref is None:
            return replies.notice(replies.NOT_IN_CHANNEL.format(invite=caller.words.invite))
        try:
            status = await self.services.challenges.submit(desk.runner, caller.who, caller.where, code, thread_of=ref,
                                                  open_how=caller.words.command("challenge"),
                                                  cancel_with=caller.words.command("run cancel"))
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
            return await self.services.challenges.hint(who, caller.words.command("challenge"))
        if action == "board":
            return await self.services.challenges.board(who.platform, who.workspace, caller.words.workspace)
        if action == "mine":
            return await self.services.challenges.mine(who)
        how = SUBMIT_HOW.format(submit=caller.words.command("submit"),
                                challenge=caller.words.command("challenge"))
        if action == "week":
            item = None if caller.where is None else await self.services.weekly.current_item(caller.where)
            if item is None:
                return replies.notice(WEEKLY_NONE)
            return await self.services.challenges.open_id(who, item, how)
        return await self.services.challenges.open(who, r.get("topic", str), r.get("difficulty", int), how)

    async def _mock(self, caller: Caller, r: Request) -> Message:
        action = r.get("action", str)
        if action in ("schedule", "cancel"):
            assert caller.where is not None  # _choice_refusal: in a channel
            if action == "cancel":
                return await self.services.group_mocks.cancel(caller.where, r.get("id", int), caller.words)
            return await self.services.group_mocks.schedule(
                caller.who, caller.where, day=r.get("day", str), at=r.get("at", str),
                timezone=r.get("timezone", str), track_word=r.get("track", str),
                minutes=r.need("minutes", int), words=caller.words)
        return await self.services.mocks.command(caller.who, r.get("action", str), r.get("track", str),
                                        r.need("minutes", int), r.get("text", str), caller.words,
                                        r.get("day", str))

    async def _quiz(self, caller: Caller, r: Request) -> Message:
        return await self.services.drill.practice.quiz(
            caller.who, topic=r.get("topic", str), count=r.need("count", int),
            difficulty=r.get("difficulty", int), source=r.get("banks", str),
        )

    # ---- /bank and /suggest --------------------------------------------------------------
    async def _bank_upload(self, caller: Caller, r: Request) -> Message:
        upload = r.need("file", Upload)
        if self.services.mocks.is_tracks_file(upload):  # a community's /mock tracks, beside its banks
            return await self.services.mocks.upload_tracks(caller.who, upload)
        return await self.services.banks.upload(caller.who, upload)

    async def _bank_list(self, caller: Caller, r: Request) -> Message:
        return await self.services.banks.list(caller.who, caller.words.workspace)

    async def _bank_show(self, caller: Caller, r: Request) -> Message:
        return await self.services.banks.show(caller.who, str(r.values["bank"]))

    async def _bank_disable(self, caller: Caller, r: Request) -> Message:
        return await self.services.banks.set_enabled(caller.who, str(r.values["bank"]), False)

    async def _bank_enable(self, caller: Caller, r: Request) -> Message:
        return await self.services.banks.set_enabled(caller.who, str(r.values["bank"]), True)

    async def _bank_export(self, caller: Caller, r: Request) -> Message:
        return await self.services.banks.export(caller.who, str(r.values["bank"]))

    async def _bank_quality(self, caller: Caller, r: Request) -> Message:
        bank, topic = r.values["bank"], r.values["topic"]
        return await self.services.quality.report(caller.who, None if bank is None else str(bank),
                                         None if topic is None else str(topic))

    async def _bank_import(self, caller: Caller, r: Request) -> Message:
        return self.services.banks.draft(r.need("file", Upload), r.need("format", str))

    async def _bank_check(self, caller: Caller, r: Request) -> Message:
        """An admin checks a community snippet through /run: same sandbox, same limits."""
        assert caller.where is not None
        found = await self.services.banks.snippet(caller.who, str(r.values["question"]))
        if isinstance(found, Message):
            return found
        private = await self.run_code(caller, found, PublishedAck(self.services.publisher, caller.where))
        if private is not None:
            return private
        return replies.notice(f"Running the snippet of {r.values['question']}; the output lands in the thread.")

    async def _bank_review(self, caller: Caller, r: Request) -> Message:
        action, number = r.need("action", str), r.get("id", int)
        review = caller.words.command("bank") + " review"
        if action in ("next", "reports"):
            # reports wait beside suggestions: next shows them once no suggestion is pending
            if action == "reports" or (await self.services.banks.pending_count(caller.who) == 0
                                       and await self.services.reports.waiting(caller.who) > 0):
                return await self.services.reports.review_next(caller.who)
            return await self.services.banks.review_next(caller.who)
        if number is None:
            return replies.notice(f"Name the suggestion: {review} {action} id:N")
        tell = partial(tell_privately, self.services.publisher)
        if action == "retire":
            return await self.services.reports.retire(caller.who, number)
        if action == "dismiss":
            return await self.services.reports.dismiss(caller.who, number)
        if action == "approve":
            return await self.services.banks.approve(caller.who, number, r.get("bank", str), tell)
        return await self.services.banks.reject(caller.who, number, r.get("reason", str), tell)

    async def _report(self, caller: Caller, r: Request) -> Message:
        return await self.services.reports.report(caller.who, r.need("post", int), r.need("reason", str),
                                         r.get("note", str))

    async def _suggest(self, caller: Caller, r: Request) -> Message:
        return await self.services.banks.suggest(
            caller.who, prompt=r.need("prompt", str), choices=r.need("choices", str),
            explanation=r.need("explanation", str), topic=r.need("topic", str),
            difficulty=r.need("difficulty", int),
        )

    async def _review(self, caller: Caller, r: Request) -> Message:
        if r.get("action", str) == "export":
            return await self.services.drill.practice.anki_export(caller.who)
        return await self.services.drill.practice.review(caller.who, count=r.need("count", int))

    async def _round(self, caller: Caller, r: Request) -> Message:
        assert caller.where is not None
        count, seconds = r.need("count", int), r.need("seconds", int)
        started = await self.services.drill.rounds.start(
            caller.where, caller.who, count=count, seconds=seconds, topic=r.get("topic", str),
        )
        if isinstance(started, Message):
            return started
        self.tasks.spawn(self.services.drill.rounds.play(started, caller.where, self.services.publisher), f"round {started}")
        return replies.round_started(count, seconds)

    async def _stats(self, caller: Caller, r: Request) -> Message:
        return await self.stats_of(caller.who, caller.where, caller.words)

    async def stats_of(self, who: Who, where: Where | None, words: replies.Words | None = None) -> Message:
        """/stats, and the "My progress" button under a weekly digest."""
        message = await self.services.drill.practice.stats(who, where)
        solved = await self.services.challenges.solved_by_topic(who)
        if solved:
            message.text("🧩 Challenges solved: " + ", ".join(
                f"{TOPICS.get(t, t)} {n}" for t, n in sorted(solved.items())))
        await self.services.mocks.stats_part(who, message, words)
        return message

    async def _leaderboard(self, caller: Caller, r: Request) -> Message:
        assert caller.where is not None
        return await self.services.drill.boards.leaderboard(
            caller.who, caller.where, scope=r.get("scope", str), period=r.get("period", str),
            group=r.get("group", str), workspace_word=caller.words.workspace,
            chart=r.need("chart", bool),
        )

    async def _group(self, caller: Caller, r: Request) -> Message:
        action, name = r.need("action", str), r.get("name", str)
        if action == "stats":
            if not name:
                return replies.notice(f"{caller.words.command('group')} stats needs a group name.")
            assert caller.where is not None
            return await self.services.drill.boards.group_stats(caller.who, caller.where, name)
        return await self.services.drill.boards.group(caller.who, action, name)

    async def _daily_schedule(self, caller: Caller, r: Request) -> Message:
        assert caller.where is not None
        return await self.services.daily.set_schedule(
            caller.where, at=r.need("time", str), timezone=r.need("timezone", str),
            weekdays=r.get("weekdays", str), topic=r.get("topic", str),
            reveal_after_hours=r.get("reveal_after_hours", float), source=r.get("banks", str),
        )

    async def _daily_pause(self, caller: Caller, r: Request) -> Message:
        assert caller.where is not None
        return await self.services.daily.set_paused(caller.where, True)

    async def _daily_resume(self, caller: Caller, r: Request) -> Message:
        assert caller.where is not None
        return await self.services.daily.set_paused(caller.where, False)

    async def _daily_now(self, caller: Caller, r: Request) -> Message:
        assert caller.where is not None
        return await self.services.daily.post_now(caller.where)

    async def _daily_status(self, caller: Caller, r: Request) -> Message:
        assert caller.where is not None
        return await self.services.daily.status(caller.where)

    async def _daily_rewards(self, caller: Caller, r: Request) -> Message:
        assert caller.where is not None
        return await self.services.daily.rewards(caller.where, caller.who.user_id, r.need("action", str),
                                        r.get("streak", int), r.get("role", str),
                                        solved=r.get("solved", int), readiness=r.get("readiness", int),
                                        topic=r.get("topic", str))

    async def _daily_streak(self, caller: Caller, r: Request) -> Message:
        assert caller.where is not None
        return await self.services.daily.streak_mode(caller.where, r.get("mode", str), r.get("per_week", int))

    async def _daily_challenge(self, caller: Caller, r: Request) -> Message:
        assert caller.where is not None
        return await self.services.weekly.set_weekly(caller.where, WeeklyKind.CHALLENGE, r.need("day", str),
                                            r.get("time", str))

    async def _daily_digest(self, caller: Caller, r: Request) -> Message:
        assert caller.where is not None
        return await self.services.weekly.set_weekly(caller.where, WeeklyKind.DIGEST, r.need("day", str),
                                            r.get("time", str))

    async def _help(self, caller: Caller, r: Request) -> Message:
        return help_message(caller.words, self.catalogue)

    async def close(self) -> None:
        await self.tasks.cancel_all()
