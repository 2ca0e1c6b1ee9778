"""Issue 29, class 7: nothing the member controls reaches a verdict's text outside a code block.

A member chooses the names of what they return (a dict key becomes part of a tensor's name in
the record) and can forge the record itself. Those names are held to a declared charset by the
record reader (runner.tensor_io), and the failure text describes outputs by position, never by a
name the reference's result does not use. Each attack goes through the judge (the harness, the
record, the verdict) and then through the real Discord and Slack renderers, where the assertions
read what members would see: no live `<!channel>`, no masked link, no @everyone outside code.
"""

from __future__ import annotations

import base64
import json
import re

import pytest
import torch
from safetensors.torch import save

from bot.adapters.discord.render import render_message
from bot.adapters.slack.blocks import render
from bot.core.challenges.desk import verdict_message
from bot.core.content.challenges import load_challenges
from runner import judge_host, tensor_io
from runner.judge import JudgeSpec, Verdict
from runner.judge_host import judge_locally, prepare

MARKUP = "<!channel> @everyone [win](https://evil"
RMS_NORM = load_challenges().get("rms-norm")
DICT_SPEC = JudgeSpec(tests="def cases():\n    yield 'pair', (torch.randn(3), torch.randn(3))\n",
                      call="losses", grad=True)
DICT_REFERENCE = "def losses(p, t):\n    return {'mse': ((p - t) ** 2).mean(), 'l1': (p - t).abs().mean()}\n"


def rms_norm_returning(extra: str) -> str:
    assert RMS_NORM is not None
    return RMS_NORM.reference + f"_ref = add_rms_norm\ndef add_rms_norm(x, residual, weight, eps):\n" \
                                f"    return (*_ref(x, residual, weight, eps), {extra})\n"


def judged_rms_norm(code: str) -> Verdict:
    assert RMS_NORM is not None
    return judge_locally(RMS_NORM.spec, RMS_NORM.reference, code, 1)


def outside_code_discord(verdict: Verdict) -> str:
    assert RMS_NORM is not None
    description = render_message(verdict_message(RMS_NORM, verdict, None)).embeds[0].description or ""
    return re.sub(r"```.*?\n```", "", description, flags=re.S)


def outside_code_slack(verdict: Verdict) -> str:
    assert RMS_NORM is not None
    blocks = render(verdict_message(RMS_NORM, verdict, None))["blocks"]
    texts = [b["text"]["text"] for b in blocks if b.get("type") == "section"]
    return "\n".join(t for t in texts if not t.startswith("```"))


def assert_inert(verdict: Verdict) -> None:
    for text in (outside_code_discord(verdict), outside_code_slack(verdict)):
        assert "First failure:" in text
        for live in ("<!channel>", "@everyone", "](", "https://", "evil", "win"):
            assert live not in text, (live, text)


def test_a_hostile_dict_key_makes_the_output_unreadable_and_the_verdict_inert() -> None:
    verdict = judged_rms_norm(rms_norm_returning(f"{{{MARKUP!r}: x}}"))
    assert (verdict.passed, verdict.failure, verdict.detail) == (
        0, "test 'basic' (inputs 4×8, 4×8, 8, float): your output could not be read", None)
    assert_inert(verdict)


@pytest.mark.parametrize("key", ["everyone", "evil.example.com", "win-https:evil"])
def test_a_dict_key_in_the_accepted_characters_is_described_by_position(key: str) -> None:
    verdict = judged_rms_norm(rms_norm_returning(f"{{{key!r}: x}}"))
    assert (verdict.passed, verdict.failure) == (
        0, "test 'basic' (inputs 4×8, 4×8, 8, float): unexpected output[3] (wrong number of outputs?)")
    assert key not in (verdict.failure or "")
    assert_inert(verdict)


def test_an_extra_key_beside_the_references_keys_is_an_entry_never_its_name() -> None:
    extra = "def losses(p, t):\n    d = (p - t)\n    return {'mse': (d ** 2).mean(), 'l1': d.abs().mean(), " \
            "'evil_example_com': d.sum()}\n"
    verdict = judge_locally(DICT_SPEC, DICT_REFERENCE, extra, 1)
    assert verdict.failure == ("test 'pair' (inputs 3, 3): unexpected entry in output "
                               "(a dict key the expected result does not have)")
    missing = judge_locally(DICT_SPEC, DICT_REFERENCE,
                            "def losses(p, t):\n    return {'mse': ((p - t) ** 2).mean()}\n", 1)
    assert missing.failure == "test 'pair' (inputs 3, 3): output.l1 is missing"  # the bank's name
    assert judge_locally(DICT_SPEC, DICT_REFERENCE, DICT_REFERENCE, 1).solved


def forged_verdict(record: bytes) -> Verdict:
    assert RMS_NORM is not None
    cases = prepare(RMS_NORM.spec, RMS_NORM.reference, 1, 5.0)[:1]
    raw = base64.b64encode(record).decode()
    return judge_host.verdict(cases, [{"record": raw, "finished": True}], RMS_NORM.spec)


def test_a_forged_record_naming_a_tensor_or_kind_with_markup_is_unreadable() -> None:
    assert RMS_NORM is not None
    unreadable = "test 'basic' (inputs 4×8, 4×8, 8, float): your output could not be read"
    for name in (f"r.out.3.{MARKUP}", "r.out.@everyone", "r.out." + "x" * 300, "r.out.a\tb"):
        as_tensor = forged_verdict(save({name: torch.zeros(2)}))
        as_kind = forged_verdict(save({}, metadata={"kinds": json.dumps({name: "sparse"})}))
        as_meta = forged_verdict(save({}, metadata={name: "x"}))
        for verdict in (as_tensor, as_kind, as_meta):
            assert verdict.failure == unreadable, name
            assert_inert(verdict)
    expected = prepare(RMS_NORM.spec, RMS_NORM.reference, 1, 5.0)[0].expected.tensors
    sparse = forged_verdict(save(expected, metadata={"kinds": json.dumps({"r.out.3.everyone": "sparse"})}))
    assert sparse.failure == ("test 'basic' (inputs 4×8, 4×8, 8, float): "
                              "unexpected output[3] (wrong number of outputs?)")


def test_tensor_names_are_held_to_the_declared_charset() -> None:
    for good in ("r.out.0", "w:r.out", "3:r.out.loss", "a0", "r.grads.0", "x-y_Z", "r.running mean"):
        assert tensor_io.valid_name(good), good
    for bad in ("", "r.out.<!channel>", "r\nout", "r.out.é", "[a](b)", "@everyone", "x" * 201, 3):
        assert not tensor_io.valid_name(bad), bad
    with pytest.raises(tensor_io.Unreadable, match="a tensor name outside the accepted characters"):
        tensor_io.read(save({"<!here>": torch.zeros(1)}))


def test_the_members_exception_text_stays_in_the_code_block_on_both_platforms() -> None:
    verdict = judged_rms_norm("def add_rms_norm(x, residual, weight, eps):\n"
                              f"    raise ValueError({MARKUP!r})\n")
    assert verdict.failure == "test 'basic' (inputs 4×8, 4×8, 8, float): your code raised an error"
    assert verdict.detail == f"ValueError: {MARKUP}"
    assert_inert(verdict)
