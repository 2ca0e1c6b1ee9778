"""The Slack App Home tab: a member's dashboard published with views.publish on
app_home_opened and after each answer, its buttons end to end, Block Kit limits, escaping and
OAuth installs, against the fake Slack (which checks views like Slack does)."""

from __future__ import annotations

from typing import Any

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack.app import SlackAdapter
from bot.app import App
from bot.core.domain.clock import FakeClock
from bot.core.domain.identity import Where
from tests.support.fake_slack import FakeSlack, SlackSender, buttons_of, text_of
from tests.support.slack_fixtures import ALICE, BOB, SIGNING_SECRET, correct_position, post_id_of
from tests.support.slack_home import home_lines, open_home
from tests.support.slack_oauth_fixtures import EVE, Browser, sender

pytestmark = pytest.mark.platform("slack")


def home_buttons(view: dict[str, Any]) -> dict[str, str]:
    """label -> action id of every button of the view (accessories and actions rows)."""
    found = [b["accessory"] for b in view["blocks"] if b.get("accessory")]
    found += [e for b in view["blocks"] if b["type"] == "actions" for e in b["elements"]]
    return {b["text"]["text"]: b["action_id"] for b in found}


async def test_a_new_member_sees_an_empty_dashboard_without_admin_parts(
    fake: FakeSlack, slack: SlackSender
) -> None:
    view = await open_home(fake, slack, BOB)
    assert home_lines(view) == [
        "🏠 Your torchdrill",
        "📈 Your progress",
        "🔥 Daily streak: *0* (best 0)",
        "No answers yet: start with /quiz, or answer today's question below.",
        "🗂 Reviews",
        "Nothing due: your cards are all reviewed. /review serves weak topics meanwhile.",
        "📅 Today's questions",
        "No daily question in your channels yet. An admin starts one with /daily schedule.",
        "🧩 Challenges",
        "No open challenge. /challenge gives you a graded coding problem.",
        "Solved: none yet",
        "📰 Next digest",
        "No weekly digest is scheduled in your channels.",
    ]
    assert home_buttons(view) == {}


async def schedule_and_post(fake: FakeSlack, slack: SlackSender) -> dict[str, Any]:
    await slack.command("/daily", ALICE, "schedule 09:00 Europe/Berlin")
    await fake.wait_for("respond")
    await slack.command("/daily", ALICE, "digest mon 10:00")
    await fake.wait_for("respond", count=2)
    await slack.command("/daily", ALICE, "now")
    await fake.wait_for("respond", count=3)
    [question] = [m for m in fake.in_channel() if buttons_of(m)]
    return question


async def test_answer_from_home_in_dms_counts_and_the_home_tab_is_refreshed(
    fake: FakeSlack, slack: SlackSender, app: App, adapter: SlackAdapter
) -> None:
    question = await schedule_and_post(fake, slack)
    post_id = post_id_of(buttons_of(question)[0])
    prompt = app.library[(await app_post(app, post_id))].prompt
    view = await open_home(fake, slack, BOB)
    lines = home_lines(view)
    assert lines[lines.index("📅 Today's questions") + 1] == f"#drills: {escaped(prompt)}"[:300]
    assert lines[lines.index("📰 Next digest") + 1] == "Mon 09 Mar 10:00 CET in #drills"
    assert "⚙️ Channel schedules (admins)" not in lines
    answer = home_buttons(view)["Answer"]

    # "Answer": today's question comes privately, in the member's DMs with the bot.
    await slack.click_home(BOB, answer)
    dm = await fake.wait_for("chat.postMessage", channel=BOB.id)
    [copy] = [m for m in fake.in_channel(f"D{BOB.id[1:]}") if buttons_of(m)]
    assert prompt[:40] in text_of(copy)
    await fake.wait_for("views.publish", count=2, user_id=BOB.id)

    # Answering there counts for the channel's post: its count changes, feedback is private.
    right = await correct_position(app, post_id)
    in_dm = SlackSender(fake, slack.url, SIGNING_SECRET, channel_id=str(dm.data["channel"]).replace("U", "D", 1))
    await in_dm.click(copy, buttons_of(copy)[right]["action_id"], BOB)
    feedback = await fake.wait_for("chat.postEphemeral", user=BOB.id)
    assert "Correct" in text_of(feedback.data)
    await fake.wait_until(lambda: "1 answered" in text_of(question))

    # The dashboard follows: answered today, one answer in the progress.
    await fake.wait_for("views.publish", count=3, user_id=BOB.id)
    lines = home_lines(fake.home_views[(slack.team, BOB.id)])
    assert lines[lines.index("📅 Today's questions") + 1] == f"✅ answered · #drills: {escaped(prompt)}"[:300]
    assert "Answer" not in home_buttons(fake.home_views[(slack.team, BOB.id)])


async def test_review_now_serves_due_cards_in_dms(
    fake: FakeSlack, slack: SlackSender, app: App, slack_clock: FakeClock
) -> None:
    question = await schedule_and_post(fake, slack)
    post_id = post_id_of(buttons_of(question)[0])
    wrong = (await correct_position(app, post_id) + 1) % 4
    await slack.click(question, buttons_of(question)[wrong]["action_id"], BOB)
    await fake.wait_for("chat.postEphemeral", user=BOB.id)
    slack_clock.advance(days=2)
    view = await open_home(fake, slack, BOB)
    lines = home_lines(view)
    assert lines[lines.index("🗂 Reviews") + 1] == "*1* card is due for review."
    await slack.click_home(BOB, home_buttons(view)["Review now"])
    review = await fake.wait_for("chat.postMessage", channel=BOB.id)
    assert "Review 1/" in text_of(review.data)
    assert buttons_of(review.data)


async def test_admins_see_schedules_and_bank_tools(fake: FakeSlack, slack: SlackSender) -> None:
    await schedule_and_post(fake, slack)
    lines = home_lines(await open_home(fake, slack, ALICE))
    start = lines.index("⚙️ Channel schedules (admins)")
    assert lines[start + 1] == ("▶ active · 09:00 Europe/Berlin on mon,tue,wed,thu,fri · "
                                "all topics · reveal after 12 h or at the next post · #drills")
    tools = lines[lines.index("🛠 Bank tools (admins)") + 1:]
    assert tools[0] == "`/bank upload`: Add or replace a bank: attach a YAML file (same format as ours) or a CSV"
    assert "`/bank review`: Suggested questions and 🚩 reports: the next one, approve, reject, retire" in tools
    assert len(tools) == 8 and not [t for t in tools if "more" in t]  # the admin tools, all of them


async def test_many_channels_are_cut_with_a_note_and_member_text_stays_inert(
    fake: FakeSlack, slack: SlackSender, app: App
) -> None:
    channels = [f"C{n:07d}" for n in range(12)]
    for n, channel in enumerate(channels):
        where = Where("slack", fake.team_id, channel, f"ch{n:02d}<!channel>&<@U0ALICE>")
        await app.commands.services.daily.set_schedule(where, at="23:00", timezone="UTC", weekdays=None,
                                              topic=None, reveal_after_hours=None, source=None)
    fake.memberships[ALICE.id] = set(channels)
    view = await open_home(fake, slack, ALICE)
    assert len(view["blocks"]) <= 100
    lines = home_lines(view)
    today = lines[lines.index("📅 Today's questions") + 1: lines.index("🧩 Challenges")]
    assert today[0] == "#ch00&lt;!channel&gt;&amp;&lt;@U0ALICE&gt;: next question Wed 04 Mar 23:00 UTC"
    assert len(today) == 8 and today[-1] == "…and 5 more"
    assert not [line for line in lines if "<!channel>" in line or "<@U0ALICE>" in line]


async def test_views_publish_is_refused_like_slack_for_bad_views(fake: FakeSlack) -> None:
    client = AsyncWebClient(token=fake.token, base_url=fake.api_base_url)
    section = {"type": "section", "text": {"type": "mrkdwn", "text": "x"}}
    for view, message in (
        ({"type": "modal", "blocks": [section]}, "[ERROR] must be a valid enum value [json-pointer:/view/type]"),
        ({"type": "home", "blocks": [section] * 101},
         "[ERROR] no more than 100 items allowed [json-pointer:/view/blocks]"),
        ({"type": "home", "blocks": [{"type": "header", "text": {"type": "plain_text", "text": "x" * 151}}]},
         "[ERROR] must be 1 to 150 characters [json-pointer:/view/blocks/0/text]"),
    ):
        try:
            await client.views_publish(user_id=BOB.id, view=view)
        except SlackApiError as exc:
            assert exc.response["error"] == "invalid_arguments"
            assert exc.response["response_metadata"]["messages"] == [message]
        else:
            raise AssertionError(f"accepted {view['type']} with {len(view['blocks'])} blocks")


async def test_each_workspace_publishes_with_its_own_token(
    oauth_fake: FakeSlack, oauth_adapter: SlackAdapter, browser: Browser
) -> None:
    for team in ("T1", "T2"):
        status, _ = await browser.install(team)
        assert status == 200
    two = sender(oauth_fake, oauth_adapter, "T2")
    await two.open_home(EVE)
    call = await oauth_fake.wait_for("views.publish", user_id=EVE.id)
    assert call.team == "T2"
    assert home_lines(oauth_fake.home_views[("T2", EVE.id)])[0] == "🏠 Your torchdrill"
    assert "⚙️ Channel schedules (admins)" in home_lines(oauth_fake.home_views[("T2", EVE.id)])
    assert not [c for c in oauth_fake.calls if c.method == "views.publish" and c.team == "T1"]


async def app_post(app: App, post_id: int) -> str:
    from bot.storage.models import Post

    async with app.db.read() as session:
        post = await session.get(Post, post_id)
        assert post is not None
        return post.question_id


def escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ")
