"""`torchdrill content check` enforces the content rules of issue 15 and `content stats` reports
them: each broken rule is reported at the line of the offending field, errors fail the check,
warnings do not."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from bot.cli import app
from bot.core.content.bank import load_library, twin_groups
from bot.core.content.lint import bank_figures, lint_library, markdown_problems
from tests.support.content_rules import balanced, bank, check, line_of, mcq


def test_a_balanced_bank_passes(tmp_path: Path) -> None:
    path = bank(tmp_path / "good.yaml", "good", *balanced(8))
    code, found, output = check(path)
    assert code == 0, output
    assert found == []
    assert "ok: 1 bank(s), 8 questions, 0 warning(s)" in output


def test_every_distractor_needs_a_why_not_at_its_line(tmp_path: Path) -> None:
    path = bank(tmp_path / "why.yaml", "why",
                mcq("no-why", "`a`", ["`bb`", "`ccc`"], why=False), *balanced(7))
    code, found, output = check(path, "--strict")
    assert code == 1, output
    assert found == [
        ("why.yaml", line_of(path, "'`bb`'"), False, "no-why: distractor '`bb`' has no why_not"),
        ("why.yaml", line_of(path, "'`ccc`'"), False, "no-why: distractor '`ccc`' has no why_not"),
    ]


def test_a_bank_in_the_previous_format_checks_with_warnings(tmp_path: Path) -> None:
    """Plain-string choices and no why-nots (the format before why-nots): an extra bank still
    passes, each missing why_not a warning; in the content dir's own banks it is an error."""
    path = tmp_path / "old.yaml"
    path.write_text(
        "bank: old\ntitle: Before why-nots\nquestions:\n  - id: old-one\n    kind: mcq\n"
        "    topic: tensors\n    difficulty: 1\n    prompt: 'Which holds for oldx?'\n"
        "    choices: ['key one', 'other one']\n    answer: 'key one'\n    explanation: Because.\n",
        encoding="utf-8")
    code, found, output = check(path)
    assert code == 0, output
    assert ("old.yaml", 9, True, "old-one: distractor 'other one' has no why_not (members see no "
            "reason after a wrong pick; add a why_not under each distractor)") in found
    own = tmp_path / "content"
    own.mkdir()
    path.rename(own / "old.yaml")
    result = CliRunner().invoke(app, ["content", "check", "--content-dir", str(own)])
    assert result.exit_code == 1
    assert "old.yaml:9: old-one: distractor 'other one' has no why_not" in result.output


def test_a_why_not_on_the_key_is_refused(tmp_path: Path) -> None:
    text = mcq("key-why", "right", ["wrong"]).replace(
        "      - text: 'right'\n", "      - text: 'right'\n        why_not: 'It is right.'\n")
    path = bank(tmp_path / "keywhy.yaml", "keywhy", text)
    code, found, _ = check(path)
    assert code == 1
    assert found == [("keywhy.yaml", line_of(path, "- text: 'right'"), False,
                      "choices.0: the keyed choice must not have a why_not")]


def test_chat_markdown_and_source_wording_are_errors_at_their_field(tmp_path: Path) -> None:
    path = bank(
        tmp_path / "md.yaml", "md",
        mcq("md-dunder", "calls __init__ first", ["calls `forward` first", "calls `__call__` first"],
            prompt="What does `nn.Module.__call__` do?"),
        mcq("md-bold", "a **bold key", ["plain one", "plain two"]),
        mcq("md-source", "right", ["the source says so", "the source of truth"]),
        *balanced(6),
    )
    code, found, output = check(path)
    assert code == 1, output
    assert ("md.yaml", line_of(path, "calls __init__ first"), False,
            "md-dunder: choices.0: __init__ outside backticks (Discord underlines it)") in found
    assert ("md.yaml", line_of(path, "a **bold key"), False,
            "md-bold: choices.0: unpaired ** (pairs with the next bold text)") in found
    assert ("md.yaml", line_of(path, "'the source says so'"), False,
            "md-source: choices.1: says 'the source' (members never saw it; keep provenance in "
            "`sources`)") in found
    assert not [f for f in found if "the source of truth" in f[3] or "__call__" in f[3]]


def test_bullet_lines_are_flagged_unless_they_form_an_intended_list() -> None:
    intended = "Two ways:\n- first\n  continued\n- second\n\nThen prose."
    assert markdown_problems(intended, lists_allowed=True) == []
    stray = "Pros: + fast;\n+ easy\nCons are few;\n- per-op overhead"
    assert markdown_problems(stray, lists_allowed=True) == [
        "line starts with '+ ' (renders as a bullet): '+ easy'",
        "line starts with '- ' (renders as a bullet): '- per-op overhead'",
    ]
    assert markdown_problems("Two ways:\n- first", lists_allowed=False) == [
        "line starts with '- ' (renders as a bullet): '- first'"]
    assert markdown_problems("```\n- x = 1\n__init__\n```\nuse `**kwargs`", lists_allowed=False) == []
    assert markdown_problems("def f(*args): ...", lists_allowed=False) == [
        "*args outside backticks (read as bold/italic markers)"]


def test_prompt_over_slacks_header_limit_is_an_error(tmp_path: Path) -> None:
    long_prompt = "Why " + "very " * 30 + "long?"
    path = bank(tmp_path / "long.yaml", "long", mcq("long-q", "one", ["two", "six"], prompt=long_prompt))
    code, found, _ = check(path)
    assert code == 1
    assert (
        "long.yaml", line_of(path, "prompt: 'Why very"), False,
        f"long-q: prompt is {len(long_prompt)} characters (Slack headers hold 150); shorten it and "
        "keep the long wording as an alias",
    ) in found


def test_balance_rules_per_bank(tmp_path: Path) -> None:
    longest = [mcq(f"long-{i}", f"the much longer keyed choice {i}", [f"short {i}a", f"short {i}b",
                                                                      f"short {i}c"]) for i in range(3)]
    path = bank(tmp_path / "gamed.yaml", "gamed", *longest, *balanced(5))
    code, found, output = check(path)
    assert code == 1, output
    figures = bank_figures(load_library(tmp_path / "none", extra_files=[path]).questions)
    assert figures.mcqs == 8 and figures.key_longest == 3
    messages = [m for name, line, warning, m in found if line == 1]
    assert messages == [
        "bank gamed: the key is strictly the longest choice in 3 of 8 MCQs (38%; at most 30%)",
        f"bank gamed: keys average {figures.key_length_ratio:.2f}x the distractors' length (at most 1.15)",
    ]
    assert figures.key_length_ratio > 1.15
    small = bank(tmp_path / "small.yaml", "small", *longest[:1])
    code, found, output = check(small)
    assert code == 0, output  # a share of one question is noise: warnings only
    assert all(warning for *_, warning, _ in [(f[0], f[1], f[2], f[3]) for f in found])
    assert len(found) == 2


def test_absolute_words_warn_per_mcq_and_fail_a_bank_past_a_quarter(tmp_path: Path) -> None:
    tells = [mcq(f"abs-{i}", f"key choice {i:02d}x", [f"it only works {i:02d}", f"other two {i:02d}",
                                                      f"`None` is {i:02d}"]) for i in range(3)]
    path = bank(tmp_path / "abs.yaml", "abs", *tells, *balanced(5))
    code, found, output = check(path)
    assert code == 1, output
    warnings = [(line, m) for _, line, warning, m in found if warning]
    assert warnings == [(line_of(path, "choices:", i + 1),
                         f"abs-{i}: absolute word(s) only in distractors but not in the key")
                        for i in range(3)]  # `None` in backticks is code, not a tell
    assert ("abs.yaml", 1, False,
            "bank abs: 3 of 8 MCQs have absolute words only in distractors (38%; at most 25%)") in found
    ok = bank(tmp_path / "abs_ok.yaml", "absok", *tells[:1], *balanced(7))
    code, found, output = check(ok)
    assert code == 0, output
    assert [warning for *_, warning, _ in found] == [True]


def test_executable_choice_forms_are_checked_at_load(tmp_path: Path) -> None:
    raises = mcq("bad-raises", "Line 2", ["Line 9", "It fails"], extra="""
        check: raises_at
        code:
          - code: |
              import torch
              torch.ones(2) @ torch.ones(3)
    """)
    printed = mcq("bad-stdout", "`6`", ["6", "`7`"], extra="""
        check: stdout
        code:
          - code: print(6)
    """)
    two = mcq("two-snippets", "`6`", ["`7`"], extra="""
        check: stdout
        code:
          - code: print(6)
          - code: print(7)
    """)
    path = bank(tmp_path / "exe.yaml", "exe", raises, printed, two)
    code, found, _ = check(path)
    assert code == 1
    assert found == [
        ("exe.yaml", line_of(path, "- text: 'Line 9'"), False, "choices.1: line 9 is outside the snippet (1-2)"),
        ("exe.yaml", line_of(path, "choices:", 2), False,
         "choices: two choices print the same text once backticks are removed"),
        ("exe.yaml", line_of(path, "    code:", 3), False, "code: check: stdout needs exactly one runnable snippet"),
    ]


def test_near_duplicates_warn_unless_marked_twins(tmp_path: Path) -> None:
    prompt = "Which call moves the model parameters onto the GPU device in place?"
    a = bank(tmp_path / "a.yaml", "bank-a", mcq("dup-a", "one", ["two", "six"], prompt=prompt), *balanced(7, "a"))
    b_text = mcq("dup-b", "one", ["two", "six"], prompt=prompt.replace("Which call", "What call"))
    b = bank(tmp_path / "b.yaml", "bank-b", b_text, *balanced(7, "b"))
    code, found, output = check(a, b)
    assert code == 0, output
    assert [(f[0], f[1], f[2]) for f in found] == [("b.yaml", line_of(b, "prompt: 'What call"), True)]
    assert found[0][3].startswith("dup-b: prompt is a near duplicate of dup-a in a.yaml (")
    bank(tmp_path / "b.yaml", "bank-b", b_text + "    twin_of: dup-a\n", *balanced(7, "b"))
    code, found, output = check(a, b)
    assert code == 0 and found == [], output
    bank(tmp_path / "b.yaml", "bank-b", b_text + "    twin_of: dup-gone\n", *balanced(7, "b"))
    code, found, output = check(a, b)
    assert code == 1
    assert ("b.yaml", line_of(b, "twin_of: dup-gone"), False, "dup-b: twin_of id 'dup-gone' does not exist") in found


def test_stats_report_balance_and_the_library_targets(tmp_path: Path) -> None:
    bank(tmp_path / "good.yaml", "good", *balanced(8))
    result = CliRunner().invoke(app, ["content", "stats", "--content-dir", str(tmp_path)],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    out = result.output
    assert re.search(r"│\s*good\s*│\s*8\s*│\s*0\s*│\s*0\s*│\s*0% \(max 30%\)\s*│\s*1\.03 \(max 1\.15\)\s*│\s*0 \(0%\)", out), out
    assert re.search(r"MCQs >= 365\s*│\s*8\s*│\s*NO", out), out
    assert re.search(r"executable MCQs >= 120\s*│\s*0\s*│\s*NO", out), out


def test_the_real_banks_follow_the_rules() -> None:
    """The shipped banks: no errors (warnings are listed by `content check` for writers)."""
    library = load_library()
    errors = [str(p) for p in [*library.problems, *lint_library(library)] if not p.warning]
    assert errors == []


# Same question asked twice: a deep dive and its interview-48 counterpart (issue 15 counted 19).
DEEP_DIVE_TWINS = {
    "dd-no-grad-vs-detach": "iq-no-grad-vs-detach", "dd-device-placement": "iq-device-placement",
    "dd-training-loop-steps": "iq-training-loop", "dd-lr-schedulers": "iq-lr-schedulers",
    "dd-views-strides-contiguous": "iq-view-reshape-contiguous", "dd-broadcasting": "iq-broadcasting",
    "dd-nn-module-anatomy": "iq-nn-module", "dd-autograd-dynamic-graph": "iq-computation-graph",
    "dd-dataset-dataloader": "iq-dataset-dataloader",
    "dd-saving-loading-checkpoints": "iq-save-load-checkpoints",
    "dd-mixed-precision-amp": "iq-mixed-precision", "dd-torch-compile": "iq-torch-compile",
    "dd-export-deployment": "iq-deployment-export", "dd-gradient-accumulation": "iq-gradient-accumulation",
    "dd-weight-initialization": "iq-weight-init", "dd-sgd-adam-adamw": "iq-optimizers",
    "dd-reproducibility-seeding": "iq-reproducibility", "dd-tensor-creation-dtypes": "iq-tensor-dtypes",
    "dd-pytorch-vs-tensorflow": "iq-what-is-pytorch",
}


def test_deep_dives_and_their_interview_twins_are_one_question_to_selection() -> None:
    library = load_library()
    groups = twin_groups(library.questions)
    assert [(dd, iq) for dd, iq in DEEP_DIVE_TWINS.items() if iq not in groups.get(dd, ())] == []
    # the no_grad / detach / eval triple is one group
    assert {"dd-no-grad-vs-detach", "iq-no-grad-vs-detach", "mcq-no-grad-vs-eval"} <= groups["dd-no-grad-vs-detach"]


def test_lessons_show_no_process_exit_workarounds() -> None:
    """Members read every snippet: no ``os._exit`` hacks in what they are taught."""
    library = load_library()
    assert [q.id for q in library.questions for s in q.code if "os._exit" in s.code] == []
