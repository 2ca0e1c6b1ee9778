"""The dashboard's limits, decided in the core: items per section and characters per item."""

from __future__ import annotations

from bot.app import build_daily, build_services
from bot.core.commands.dispatch import CommandDesk
from bot.core.commands.replies import Words
from bot.core.domain.clock import FakeClock
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Message
from bot.core.drill.service import Drill
from bot.core.progress.home import (
    HOME_ANSWER,
    ITEM_CHARS,
    MAX_ITEMS,
    HomeItem,
    home_action,
    item,
    section,
)
from bot.core.reveal.posts import order_of
from bot.storage.models import Post
from tests.conftest import RecordingPublisher


def test_a_long_section_ends_with_and_n_more() -> None:
    part = section("📅 Today's questions", [HomeItem(f"#c{n}") for n in range(MAX_ITEMS + 4)])
    assert len(part.items) == MAX_ITEMS
    assert [i.text for i in part.items[-2:]] == [f"#c{MAX_ITEMS - 2}", "…and 5 more"]
    exact = section("t", [HomeItem(f"#c{n}") for n in range(MAX_ITEMS)])
    assert [i.text for i in exact.items] == [f"#c{n}" for n in range(MAX_ITEMS)]


def test_member_text_gives_way_first_and_loses_its_line_breaks() -> None:
    cut = item("✅ answered · ", "#drills: " + "x" * 1000 + "\nsecond line")
    assert cut.text == "✅ answered · "
    assert len(cut.text) + len(cut.member_text) <= ITEM_CHARS
    assert cut.member_text.startswith("#drills: xxx") and cut.member_text.endswith("…")
    assert "\n" not in item("", "a\nb").member_text


class NoRunner:
    def desk(self) -> None:
        return None

    def unavailable(self) -> str:
        return "no runner"


async def test_the_dashboard_follows_answers_and_its_buttons_work(
    drill: Drill, publisher: RecordingPublisher, clock: FakeClock
) -> None:
    """On SQLite and PostgreSQL: today's question, its answer, due cards, Review now."""
    desk = CommandDesk(build_services(drill, build_daily(drill, publisher), publisher, NoRunner()))
    where = Where("slack", "T1", "C1", "drills")
    who = Who("slack", "T1", "U1", "ann")
    await desk.services.daily.set_schedule(where, at="08:00", timezone="UTC")
    await desk.services.daily.post_now(where)
    _, posted, _ = publisher.posts[0]
    assert isinstance(posted, Message)
    words = Words(workspace="workspace")

    board = await desk.services.home.dashboard(who, is_admin=False, channels={"C1"}, words=words)
    [today] = next(s for s in board.sections if s.title == "📅 Today's questions").items
    assert today.button is not None and today.button.label == "Answer"
    shown = await desk.press(who, today.button.action_id)
    assert shown.reply.ephemeral and shown.reply.buttons == posted.buttons

    post_id = int(posted.buttons[0].action_id.split(":")[2])
    async with drill.db.read() as session:
        post = await session.get(Post, post_id)
        assert post is not None
        right = order_of(post).index(drill.library[post.question_id].answer_index)
    answered = await desk.press(who, posted.buttons[(right + 1) % 4].action_id)
    assert answered.recorded
    board = await desk.services.home.dashboard(who, is_admin=False, channels={"C1"}, words=words)
    [today] = next(s for s in board.sections if s.title == "📅 Today's questions").items
    assert today.text == "✅ answered · " and today.member_text.startswith("#drills: ")
    assert today.button is None
    other = await desk.services.home.dashboard(who, is_admin=False, channels={"C9"}, words=words)
    assert [i.text for i in next(s for s in other.sections if s.title == "📅 Today's questions").items] == [
        "No daily question in your channels yet. An admin starts one with /daily schedule."]

    clock.advance(days=3)
    board = await desk.services.home.dashboard(who, is_admin=False, channels=None, words=words)
    reviews = next(s for s in board.sections if s.title == "🗂 Reviews")
    assert [i.text for i in reviews.items] == ["**1** card is due for review."]
    [review_now] = reviews.buttons
    started = await desk.press(who, review_now.action_id)
    assert started.reply.buttons and "Review" in (started.reply.title or "")
    closed = await desk.press(who, home_action(HOME_ANSWER, post_id))
    assert closed.reply.plain() == "That question is closed; its answer is revealed in the channel."

