"""Survivors of the first sampled `make mutate` (2026-12-04) that a member would notice: the
answer count under a refreshed post, the stats line with answers waiting for their reveal, the
empty-upload and no-output texts, 13pm, a weekly digest of a quiet week, the first calendar day,
and a member created earlier in the same transaction."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from sqlalchemy import event

from bot.core.content.community import check_bank_text
from bot.core.daily.service import ScheduleError, parse_time, parse_weekdays
from bot.core.domain.actions import Verb
from bot.core.domain.identity import Who
from bot.core.progress.chart_data import calendar_of
from bot.core.progress.stats import MemberStats, TopicStats
from bot.core.render.stats import stats_message
from bot.core.reveal.posts import public_view
from bot.core.runs.desk import result_message
from bot.core.weekly.digest import weekly_digest
from bot.storage.digest_queries import StoredDigestReads
from bot.storage.identity import channel_row, member_ref
from bot.storage.models import Post
from runner.jobs import JobRequest, JobResult, JobState
from tests.support.clicks import WHERE, channel_post, click, who
from tests.support.weekly_digest import HERE, two_weeks


async def test_a_refreshed_channel_post_shows_how_many_answered(drill, publisher) -> None:
    posted, _, _, right, wrong = await channel_post(drill, publisher)
    await drill.handle_action(who(1), click(Verb.PICK, posted.post_id, right))
    await drill.handle_action(who(2), click(Verb.PICK, posted.post_id, wrong))
    async with drill.db.read() as s:
        view = await public_view(drill.posts, s, drill.library, await s.get(Post, posted.post_id))
    assert "2 answered" in (view.footer or "")


def test_stats_say_how_many_answers_wait_for_their_reveal() -> None:
    topic = TopicStats("autograd", answered=4, correct=3, mastered=2, available=9)
    waiting = stats_message("Ada", MemberStats(4, 3, [topic], 2, 5, pending=1), [])
    assert waiting.blocks[0].text == ("**4** answered (+1 waiting for the reveal) · **75%** correct · "
                                  "streak **2** (best 5)")
    settled = stats_message("Ada", MemberStats(4, 3, [topic], 2, 5), [])
    assert settled.blocks[0].text == "**4** answered · **75%** correct · streak **2** (best 5)"
    only_waiting = stats_message("Ada", MemberStats(0, 0, [], 0, 0, pending=2), [])
    assert only_waiting.blocks[0].text == "**0** answered (+2 waiting for the reveal) · **0%** correct · streak **0** (best 0)"


def test_an_empty_upload_is_named_on_line_one(library) -> None:
    for empty in (b"", b"  \n\n", "\ufeff\n".encode()):
        assert check_bank_text(empty, "ours.yaml", library).errors == ["line 1: the file is empty"]


def _result(stdout: str = "", stderr: str = "", state: JobState = JobState.DONE) -> JobResult:
    request = JobRequest(code="x = 1", requester="discord:g1:u1", reply_to={})
    return JobResult("abcdef1234567890", request, state, stdout=stdout, stderr=stderr)


def test_a_run_that_printed_nothing_says_how_to_see_values() -> None:
    hint = "(no output — use print() to see values)"
    assert result_message(_result()).blocks[-1].text == hint
    assert hint not in result_message(_result(stderr="UserWarning: careful\n")).plain()
    assert hint not in result_message(_result(stdout="1\n")).plain()
    assert hint not in result_message(_result(state=JobState.FAILED)).plain()


@pytest.mark.parametrize("value", ["13pm", "0am", "13 am"])
def test_am_pm_hours_go_from_one_to_twelve(value: str) -> None:
    with pytest.raises(ScheduleError) as refused:
        parse_time(value)
    assert str(refused.value) == f"invalid time {value!r}: the hour must be 1-12 with am/pm"
    assert parse_time("12pm") == "12:00" and parse_time("12am") == "00:00" and parse_time("1pm") == "13:00"


@pytest.mark.parametrize(("said", "days"), [
    ("weekends", ["sat", "sun"]), ("Weekdays", ["mon", "tue", "wed", "thu", "fri"]),
    ("workdays", ["mon", "tue", "wed", "thu", "fri"]), ("daily", ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]),
    ("every day", ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]), ("all", ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]),
])
def test_named_day_sets_an_admin_may_type(said: str, days: list[str]) -> None:
    assert parse_weekdays(said) == days


async def test_a_quiet_weeks_digest_chart_is_titled_without_a_top(drill, publisher) -> None:
    await two_weeks(drill, publisher)
    async with drill.db.write() as session:
        pk = (await channel_row(session, HERE)).id
        quiet = await weekly_digest(StoredDigestReads(), session, drill.library, pk, "UTC", date(2026, 2, 23))
        busy = await weekly_digest(StoredDigestReads(), session, drill.library, pk, "UTC", date(2026, 3, 9))
    assert (quiet.top, quiet.chart.title) == ((), "Week of 23 Feb")
    assert busy.chart.title == f"Week of 09 Mar: points of the top {len(busy.top)}" and len(busy.top) == 2


def test_the_calendar_counts_its_first_day_and_nothing_before() -> None:
    now = datetime(2026, 3, 11, 12, tzinfo=UTC)  # a Wednesday; with 2 weeks the calendar starts Mon 2 Mar
    times = [datetime(2026, 3, 2, 0, 30, tzinfo=UTC), datetime(2026, 3, 1, 23, 30, tzinfo=UTC),
             datetime(2026, 3, 11, 8, tzinfo=UTC)]
    calendar = calendar_of(times, now, "UTC", weeks=2)
    assert calendar.first_day == date(2026, 3, 2)
    assert calendar.counts == (1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0)


async def test_a_member_new_in_this_transaction_is_not_looked_up_again(drill) -> None:
    """The click path asks for the member several times per transaction; only the first asks SQL."""
    ada = Who(WHERE.platform, WHERE.workspace, "u-new", "Ada")
    statements: list[str] = []

    def count(_conn, _cursor, statement, *_args) -> None:
        statements.append(statement)

    async with drill.db.write() as s:
        first = await member_ref(s, ada, drill.clock)
        event.listen(drill.db.engine.sync_engine, "before_cursor_execute", count)
        try:
            again = await member_ref(s, ada, drill.clock)
            nameless = await member_ref(s, Who(ada.platform, ada.workspace, ada.user_id, ""), drill.clock)
        finally:
            event.remove(drill.db.engine.sync_engine, "before_cursor_execute", count)
    assert again == first == nameless and first.display_name == "Ada"
    assert statements == []
