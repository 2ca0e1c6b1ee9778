"""Slack HTTP mode on hostile input: unsigned bad bodies get 401, signed malformed ones 400,
nothing ever 500, and nothing reaches the core."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest

from tests.support.fake_slack import FakeSlack, SlackSender
from tests.support.slack_fixtures import ALICE

pytestmark = [
    pytest.mark.not_for_mutation,  # see conftest: slow or hostile for mutants
    pytest.mark.platform("slack"),
]

FORM = "application/x-www-form-urlencoded"
JSON = "application/json"

MALFORMED = [
    (b"\xff\xfe\x00not utf-8", FORM, "non-utf8"),
    (b"payload=%7Bnot-json", FORM, "payload-not-json"),
    (b"payload=12", FORM, "payload-a-number"),
    (b'{"not": "a slack shape"}', JSON, "json-wrong-shape"),
    (b"[1, 2, 3]", JSON, "json-array"),
    (b"{truncated", JSON, "json-broken"),
    (urlencode({"payload": json.dumps({"no_type": True})}).encode(), FORM,
     "payload-without-type"),
    *(
        (urlencode({"payload": json.dumps(p)}).encode(), FORM, name)
        for name, p in {
            "actions-not-a-list": {"type": "block_actions", "user": {"id": "U1"}, "actions": "x"},
            "action-without-id": {"type": "block_actions", "user": {"id": "U1"}, "actions": [{}]},
            "view-without-state": {"type": "view_submission", "user": {"id": "U1"},
                                   "view": {"callback_id": "td-run-modal"}},
            "event-not-an-object": {"type": "event_callback", "event": 3},
            "unknown-type": {"type": "dialog_submission"},
        }.items()
    ),
    (urlencode({"command": "/daily", "text": "now"}).encode(), FORM,
     "command-without-user"),
]


async def test_unsigned_bad_bodies_get_401(slack: SlackSender, fake: FakeSlack):
    for body, content_type, name in MALFORMED:
        status, text = await slack.post(body, content_type, signed=False)
        assert (status, "signature" in text) == (401, True), name
        status, _ = await slack.post(body, content_type, signature="v0=" + "0" * 64)
        assert status == 401, name
    assert fake.sent("chat.postMessage") == [] and fake.sent("respond") == []


async def test_signed_malformed_bodies_get_400(slack: SlackSender, fake: FakeSlack):
    for body, content_type, name in MALFORMED:
        status, text = await slack.post(body, content_type)
        assert status == 400, (name, status, text)
    assert fake.sent("chat.postMessage") == [] and fake.sent("respond") == []


async def test_stale_signature_is_401_and_a_good_command_still_works(slack: SlackSender, fake: FakeSlack):
    status, _ = await slack.command("/help", ALICE, timestamp=1_600_000_000)
    assert status == 401
    status, _ = await slack.command("/help", ALICE)
    assert status == 200
    reply = await fake.wait_for("respond")
    assert "/daily" in json.dumps(reply.data)
