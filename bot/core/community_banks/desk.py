"""/bank and /suggest: a community's own question banks, uploaded and reviewed from chat.

Banks are scoped to one server or workspace and stored in our database (never on the host's
disk). An upload is checked by ``bot.core.content.community`` and stored only when clean; a
re-upload of the same bank id replaces it as a new version, keeping the questions it dropped
(retired) so older posts still render. Suggestions are checked the same way before they queue.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import yaml
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.community_banks.shelf import Shelf
from bot.core.content.bank import Bank, Library
from bot.core.content.community import (
    MAX_BANKS_PER_COMMUNITY,
    MAX_PENDING_PER_MEMBER,
    MAX_PENDING_SUGGESTIONS,
    SUGGEST_CHOICES_HELP,
    check_bank_text,
    check_suggestion,
    dump_question,
    load_question,
    question_yaml,
    served_question,
    with_question_appended,
)
from bot.core.content.csv_bank import check_csv_bank, is_csv
from bot.core.content.importers import ImportFormatError
from bot.core.content.importers import import_text as draft_from_text
from bot.core.domain.clock import Clock
from bot.core.domain.identity import Who
from bot.core.domain.messages import Attachment, Message, Upload
from bot.core.domain.topics import TOPICS
from bot.core.render.notices import counted, notice
from bot.storage.db import Database
from bot.storage.identity import workspace_row
from bot.storage.models import CommunityBank, CommunityQuestion, Suggestion

SUGGESTIONS_BANK = "suggestions"
SUGGESTIONS_TITLE = "Member suggestions"
PROBLEMS_SHOWN = 15
Tell = Callable[[Who, Message], Awaitable[bool]]


def _problems(title: str, lines: list[str]) -> Message:
    msg = Message(title=title, ephemeral=True)
    shown = lines[:PROBLEMS_SHOWN]
    more = f"\n… and {len(lines) - len(shown)} more" if len(lines) > len(shown) else ""
    msg.code("\n".join(shown) + more, language="text")
    return msg


class BankDesk:
    def __init__(self, db: Database, library: Library, clock: Clock, shelf: Shelf) -> None:
        self.db, self.library, self.clock, self.shelf = db, library, clock, shelf

    # ---- upload / list / show / disable / export -----------------------------------------
    async def upload(self, who: Who, upload: Upload) -> Message:
        if is_csv(upload.filename):  # a spreadsheet: its rows become the same YAML bank
            from_csv = check_csv_bank(upload.data, upload.filename, self.library)
            checked, text = from_csv.checked, from_csv.text or ""
        else:
            checked = check_bank_text(upload.data, upload.filename, self.library)
            text = upload.data.decode("utf-8-sig") if checked.ok else ""
        if not checked.ok:
            return _problems(f"{upload.filename} was not stored: fix these and upload it again",
                             checked.errors)
        assert checked.bank is not None
        for attempt in (1, 2):
            try:
                async with self.db.write() as session:
                    stored, version = await self._store(session, who, checked.bank, text)
                    if stored is None:
                        return notice(f"This community already has {MAX_BANKS_PER_COMMUNITY} banks; "
                                      "disable or replace one first.")
                    await self.shelf.refresh(session, force=True)
                break
            except IntegrityError:  # another replica created this bank meanwhile: replace it
                if attempt == 2:
                    raise
        bank = checked.bank
        n = len(bank.questions)
        action = "stored" if version == 1 else f"replaced (version {version})"
        msg = Message(title=f"Bank {bank.id} {action}: {counted(n, 'question')}", ephemeral=True)
        msg.text(f"**{bank.title}** — its questions are now offered in this community "
                 f"(channels with the built-in banks, the community's, or both).")
        if checked.warnings:
            msg.text("Warnings (stored anyway):")
            msg.code("\n".join(checked.warnings[:PROBLEMS_SHOWN]), language="text")
        return msg

    async def _store(
        self, session: AsyncSession, who: Who, bank: Bank, text: str
    ) -> tuple[CommunityBank | None, int]:
        ws = await workspace_row(session, who.platform, who.workspace)
        row = await session.scalar(
            select(CommunityBank).where(CommunityBank.workspace_id == ws.id, CommunityBank.slug == bank.id)
        )
        now = self.clock.now()
        if row is None:
            count = await session.scalar(
                select(func.count()).select_from(CommunityBank).where(CommunityBank.workspace_id == ws.id))
            if (count or 0) >= MAX_BANKS_PER_COMMUNITY:
                return None, 0
            row = CommunityBank(workspace_id=ws.id, slug=bank.id, title=bank.title, version=1, enabled=True,
                                source=text, uploaded_by=who.user_id, updated_at=now)
            session.add(row)
            await session.flush()
        else:
            row.version += 1
            row.title, row.source, row.uploaded_by, row.updated_at = bank.title, text, who.user_id, now
            row.enabled = True
        ids = {q.id for q in bank.questions}
        existing = {
            slug: stored for slug, stored in await session.execute(
                select(CommunityQuestion.slug, CommunityQuestion).where(CommunityQuestion.bank_id == row.id))
        }
        for q in bank.questions:
            data = dump_question(served_question(q, row.id, bank.id, ids))
            found = existing.pop(q.id, None)
            if found is None:
                session.add(CommunityQuestion(bank_id=row.id, slug=q.id, version=row.version, retired=False,
                                              data=data))
            else:
                found.version, found.retired, found.data = row.version, False, data
        for gone in existing.values():
            gone.retired = True
        return row, row.version

    async def _bank(self, session: AsyncSession, who: Who, slug: str) -> CommunityBank | None:
        ws = await workspace_row(session, who.platform, who.workspace)
        return await session.scalar(
            select(CommunityBank).where(CommunityBank.workspace_id == ws.id,
                                        CommunityBank.slug == slug.strip().lower()))

    async def list(self, who: Who, workspace_word: str) -> Message:
        async with self.db.write() as session:
            ws = await workspace_row(session, who.platform, who.workspace)
            rows = (await session.execute(
                select(CommunityBank, func.count(CommunityQuestion.slug))
                .outerjoin(CommunityQuestion, (CommunityQuestion.bank_id == CommunityBank.id)
                           & CommunityQuestion.retired.is_(False))
                .where(CommunityBank.workspace_id == ws.id)
                .group_by(CommunityBank.id).order_by(CommunityBank.slug)
            )).all()
        if not rows:
            return notice(f"This {workspace_word} has no community banks yet. Admins add one "
                          "with /bank upload (a YAML file, same format as the built-in banks).")
        msg = Message(title=f"Community banks of this {workspace_word}", ephemeral=True)
        for bank, n in rows:
            state = "" if bank.enabled else " · ⏸ disabled"
            msg.text(f"`{bank.slug}` **{bank.title}** · {counted(n, 'question')} · "
                     f"version {bank.version}{state}")
        return msg

    async def show(self, who: Who, slug: str) -> Message:
        async with self.db.write() as session:
            bank = await self._bank(session, who, slug)
            if bank is None:
                return self._no_bank(slug)
            questions = [load_question(d) for d in await session.scalars(
                select(CommunityQuestion.data).where(CommunityQuestion.bank_id == bank.id,
                                                     CommunityQuestion.retired.is_(False))
                .order_by(CommunityQuestion.slug))]
        msg = Message(title=f"{bank.slug}: {bank.title}", ephemeral=True)
        state = "served" if bank.enabled else "disabled"
        msg.text(f"Version {bank.version} · {state} · {counted(len(questions), 'question')}")
        for q in questions[:20]:
            local = q.id.split(".", 1)[1]
            msg.text(f"`{local}` · {TOPICS.get(q.topic, q.topic)} · {q.kind.value} · {q.prompt}")
        if len(questions) > 20:
            msg.text(f"… and {len(questions) - 20} more (/bank export gives the whole file)")
        snippets = sum(1 for q in questions for s in q.code if s.runnable)
        if snippets:
            were = "was" if snippets == 1 else "were"
            msg.text(f"{counted(snippets, 'snippet')} {were} not run at upload; paste one into /run to check it "
                     "in the sandbox.")
        return msg

    async def set_enabled(self, who: Who, slug: str, enabled: bool) -> Message:
        async with self.db.write() as session:
            bank = await self._bank(session, who, slug)
            if bank is None:
                return self._no_bank(slug)
            bank.enabled, bank.updated_at = enabled, self.clock.now()
            await session.flush()
            await self.shelf.refresh(session, force=True)
            name = bank.slug
        if enabled:
            return notice(f"Bank {name} is served again.")
        return notice(f"Bank {name} is disabled: no new posts use it; posts already out keep "
                      "working. /bank enable serves it again.")

    async def export(self, who: Who, slug: str) -> Message:
        async with self.db.write() as session:
            bank = await self._bank(session, who, slug)
            if bank is None:
                return self._no_bank(slug)
            name, version, source = bank.slug, bank.version, bank.source
        msg = Message(title=f"{name}.yaml (version {version})", ephemeral=True)
        msg.text("The bank as stored; edit it and /bank upload it again to replace it.")
        msg.attachments.append(Attachment(f"{name}.yaml", source.encode("utf-8")))
        return msg

    @staticmethod
    def _no_bank(slug: str) -> Message:
        return notice(f"There is no community bank {slug.strip()!r} here; /bank list shows them.")

    async def snippet(self, who: Who, question: str) -> str | Message:
        """The program of a community question's first runnable snippet (setup included)."""
        async with self.db.read() as session:
            await self.shelf.refresh(session)
        wanted = question.strip().lower()
        offered = self.library.offered.get(who.community, [])
        found = [q for q in offered if q.id == wanted or q.id.split(".", 1)[1] == wanted]
        if not found:
            return notice(f"No question {question.strip()!r} in this community's banks; "
                          "/bank show ID lists their ids.")
        if len(found) > 1:
            return notice(f"{len(found)} banks have a question {question.strip()!r}; "
                          f"name it as {found[0].id} (bank number and id).")
        runnable = [s for s in found[0].code if s.runnable]
        if not runnable:
            return notice(f"{question.strip()} has no runnable snippet.")
        return runnable[0].program()

    # ---- import -------------------------------------------------------------------------
    @staticmethod
    def draft(upload: Upload, fmt: str) -> Message:
        """A raw document → a draft bank for the admin to fix and upload."""
        try:
            text = upload.data.decode("utf-8-sig")
            yaml_text = draft_from_text(text, fmt, Path(upload.filename))
        except UnicodeDecodeError:
            return notice(f"{upload.filename} is not UTF-8 text; re-save it as UTF-8.")
        except ImportFormatError as exc:
            return notice(str(exc).replace(f"{upload.filename}:", "line ", 1))
        stem = upload.filename.rsplit(".", 1)[0] or "draft"
        msg = Message(title=f"Draft bank from {upload.filename}", ephemeral=True)
        msg.text("Fill in what the draft marks (keys, why-nots, topics), then /bank upload it.")
        msg.attachments.append(Attachment(f"{stem}.draft.yaml", yaml_text.encode("utf-8")))
        return msg

    # ---- suggestions --------------------------------------------------------------------
    async def suggest(self, who: Who, *, prompt: str, choices: str, explanation: str, topic: str,
                      difficulty: int) -> Message:
        async with self.db.write() as session:
            ws = await workspace_row(session, who.platform, who.workspace)
            pending = (await session.execute(
                select(func.count(), func.count().filter(Suggestion.author_id == who.user_id))
                .where(Suggestion.workspace_id == ws.id, Suggestion.status == "pending"))).one()
            if pending[1] >= MAX_PENDING_PER_MEMBER:
                return notice(f"You have {pending[1]} suggestions waiting for review; "
                              "wait until admins have looked at them.")
            if pending[0] >= MAX_PENDING_SUGGESTIONS:
                return notice("The review queue is full; try again after admins have reviewed it.")
            suggested = check_suggestion(prompt=prompt, choices=choices, explanation=explanation, topic=topic,
                                         difficulty=difficulty, slug="suggestion", builtin=self.library)
            if suggested.question is None:
                msg = _problems("Your suggestion needs a few fixes (nothing was queued)", suggested.errors)
                msg.text(f"Choices: {SUGGEST_CHOICES_HELP}.")
                return msg
            row = Suggestion(workspace_id=ws.id, author_id=who.user_id,
                             author_name=who.display_name or who.user_id,
                             data=dump_question(suggested.question), status="pending",
                             created_at=self.clock.now())
            session.add(row)
            await session.flush()
            number = row.id
            row.data = dump_question(suggested.question.model_copy(update={"id": f"suggestion-{number}"}))
        return notice(f"Thanks! Suggestion #{number} is waiting for an admin's review; "
                      "you will be told what they decide.")

    async def pending_count(self, who: Who) -> int:
        async with self.db.write() as session:
            ws = await workspace_row(session, who.platform, who.workspace)
            return int(await session.scalar(
                select(func.count()).select_from(Suggestion)
                .where(Suggestion.workspace_id == ws.id, Suggestion.status == "pending")) or 0)

    async def review_next(self, who: Who) -> Message:
        async with self.db.write() as session:
            ws = await workspace_row(session, who.platform, who.workspace)
            row = await session.scalar(
                select(Suggestion).where(Suggestion.workspace_id == ws.id, Suggestion.status == "pending")
                .order_by(Suggestion.id).limit(1))
            waiting = await session.scalar(
                select(func.count()).select_from(Suggestion)
                .where(Suggestion.workspace_id == ws.id, Suggestion.status == "pending"))
        if row is None:
            return notice("No suggestions are waiting for review.")
        q = load_question(row.data)
        msg = Message(title=f"Suggestion #{row.id} by {row.author_name} ({waiting} waiting)", ephemeral=True)
        msg.text(f"**{q.prompt}**")
        lines = []
        for letter, choice in zip("ABCDEFGH", q.choices, strict=False):
            mark = "✅" if choice == q.answer else "▫️"
            why = f" — _{q.why_not[choice]}_" if choice in q.why_not else ""
            lines.append(f"{mark} {letter}. {choice}{why}")
        msg.text("\n".join(lines))
        msg.text(f"{TOPICS.get(q.topic, q.topic)} · difficulty {q.difficulty}\n{q.explanation}")
        msg.text(f"Approve: /bank review approve id:{row.id} (into bank `{SUGGESTIONS_BANK}` unless you "
                 f"name one with bank:ID) · Reject: /bank review reject id:{row.id} reason:…")
        return msg

    async def approve(self, who: Who, number: int, bank_slug: str | None, tell: Tell | None) -> Message:
        slug = (bank_slug or SUGGESTIONS_BANK).strip().lower()
        async with self.db.write() as session:
            row = await self._pending(session, who, number)
            if isinstance(row, Message):
                return row
            bank = await self._bank(session, who, slug)
            suggested = load_question(row.data)
            if bank is None:
                title = SUGGESTIONS_TITLE if slug == SUGGESTIONS_BANK else slug
                before = yaml.safe_dump({"bank": slug, "title": title, "questions": []}, sort_keys=False)
            else:
                before = bank.source
            source = yaml.safe_load(before)
            taken = {str(q.get("id")) for q in source.get("questions") or [] if isinstance(q, dict)}
            local = suggested.id if suggested.id not in taken else f"{suggested.id}-{row.id}"
            entry = question_yaml([suggested.model_copy(update={"id": local})])[0]
            text = with_question_appended(before, entry)
            checked = check_bank_text(text, f"{slug}.yaml", self.library)
            if not checked.ok:
                return _problems(f"Suggestion #{number} would break bank {slug}; it stays in the queue",
                                 checked.errors)
            assert checked.bank is not None
            stored, _ = await self._store(session, who, checked.bank, text)
            if stored is None:
                return notice(f"This community already has {MAX_BANKS_PER_COMMUNITY} banks; "
                              "approve into an existing one with bank:ID.")
            row.status, row.bank_id = "approved", stored.id
            row.decided_at, row.decided_by = self.clock.now(), who.user_id
            author = Who(who.platform, who.workspace, row.author_id, row.author_name)
            await session.flush()
            await self.shelf.refresh(session, force=True)
        if tell is not None:
            await tell(author, notice(
                f"Your suggestion #{number} was approved and added to the bank {slug}. Thank you!"))
        return notice(f"Suggestion #{number} approved into bank {slug} as `{local}`.")

    async def reject(self, who: Who, number: int, reason: str | None, tell: Tell | None) -> Message:
        if not reason:
            return notice("Say why with reason:… — the author is told.")
        async with self.db.write() as session:
            row = await self._pending(session, who, number)
            if isinstance(row, Message):
                return row
            row.status, row.reason = "rejected", reason
            row.decided_at, row.decided_by = self.clock.now(), who.user_id
            author = Who(who.platform, who.workspace, row.author_id, row.author_name)
        if tell is not None:
            await tell(author, notice(f"Your suggestion #{number} was not accepted: {reason}"))
        return notice(f"Suggestion #{number} rejected; the author is told why.")

    async def _pending(self, session: AsyncSession, who: Who, number: int) -> Suggestion | Message:
        ws = await workspace_row(session, who.platform, who.workspace)
        row = await session.scalar(select(Suggestion).where(Suggestion.workspace_id == ws.id,
                                                            Suggestion.id == number))
        if row is None:
            return notice(f"There is no suggestion #{number} here; /bank review shows the next one.")
        if row.status != "pending":
            return notice(f"Suggestion #{number} was already {row.status}.")
        return row

