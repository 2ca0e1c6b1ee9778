"""Issue 35's schema: a question's depth `area`, the `skill` it asks for, and `device: cuda`
claims; `content stats` counts areas and the share of recall, `content check --run` skips
device claims on CPU and says how many."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from bot.cli import app
from bot.core.content.bank import Area, Skill, load_library
from bot.core.content.challenges import CHALLENGE_DIR, HARD_CHALLENGES_MIN, shipped_challenges
from bot.core.content.lint import AREA_TARGETS, RECALL_MAX_SHARE, depth_targets, recall_figures
from tests.support.content_rules import balanced, bank, check, line_of, mcq

PRINTS_SIX = "check: stdout\ncode:\n  - code: print(6)\n"


def test_area_skill_and_device_accept_their_values(tmp_path: Path) -> None:
    path = bank(tmp_path / "ok.yaml", "ok",
                mcq("ok-area", "`6`", ["`7`", "`8`", "`9`"],
                    extra="area: distributed\ndevice: cuda\n" + PRINTS_SIX),
                mcq("ok-recall", "one", ["two", "six"], extra="area: autograd-internals\nskill: recall"),
                mcq("ok-default", "one", ["two", "six"]))
    library = load_library(tmp_path / "none", extra_files=[path])
    assert library.problems == []
    q = {q.id: q for q in library.questions}
    assert (q["ok-area"].area, q["ok-area"].device, q["ok-area"].effective_skill) == (
        Area.DISTRIBUTED, "cuda", Skill.CODE)  # a checked snippet makes it a code question
    assert (q["ok-recall"].area, q["ok-recall"].effective_skill) == (Area.AUTOGRAD_INTERNALS, Skill.RECALL)
    assert (q["ok-default"].area, q["ok-default"].effective_skill) == (None, Skill.REASONING)
    assert not q["ok-area"].cpu_runnable and q["ok-default"].cpu_runnable


def test_unknown_area_skill_or_device_is_an_error_at_its_line(tmp_path: Path) -> None:
    path = bank(tmp_path / "bad.yaml", "bad",
                mcq("bad-area", "one", ["two", "six"], extra="area: distributed-training"),
                mcq("bad-skill", "one", ["two", "six"], extra="skill: trivia"),
                mcq("bad-device", "one", ["two", "six"], extra="device: gpu"))
    code, found, output = check(path)
    assert code == 1, output
    assert found == [
        ("bad.yaml", line_of(path, "area: distributed-training"), False,
         "area: unknown area 'distributed-training' (known: distributed, autograd-internals, "
         "compile, memory-perf, numerics)"),
        ("bad.yaml", line_of(path, "skill: trivia"), False,
         "skill: unknown skill 'trivia' (known: recall, reasoning, code)"),
        ("bad.yaml", line_of(path, "device: gpu"), False, "device: unknown device 'gpu' (known: cuda)"),
    ]


def test_stats_print_areas_and_the_recall_share(tmp_path: Path) -> None:
    tagged = [mcq(f"dist-{i}", f"key number {i:02d}", [f"other one {i:02d}", f"other two {i:02d}",
                                                        f"other three {i:02d}"],
                  extra="area: distributed" + ("\nskill: recall" if i == 0 else "")) for i in range(3)]
    bank(tmp_path / "good.yaml", "good", *tagged, *balanced(7))
    result = CliRunner().invoke(app, ["content", "stats", "--content-dir", str(tmp_path)],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    out = result.output
    assert re.search(r"│\s*distributed\s*│\s*3\s*│\s*3\s*│\s*>= 30\s*│\s*0\s*│\s*0\s*│", out), out
    assert re.search(r"│\s*numerics\s*│\s*0\s*│\s*0\s*│\s*>= 15\s*│\s*0\s*│\s*0\s*│", out), out
    assert "skill: recall: 1 of 10 difficulty 2-3 MCQs (10.0%; at most 10%)" in out
    assert re.search(r"distributed MCQs \(difficulty 2-3\) >= 30\s*│\s*3\s*│\s*NO", out), out
    assert re.search(r"skill: recall <= 10% of difficulty 2-3 MCQs\s*│\s*1 of 10 \(10\.0%\)\s*│\s*yes", out), out


def test_stats_print_challenges_per_difficulty(tmp_path: Path) -> None:
    bank(tmp_path / "good.yaml", "good", *balanced(4))
    (tmp_path / "challenges").mkdir()
    for name in ("bce-with-logits", "accumulate-and-clip"):  # difficulty 1, then 3
        source = CHALLENGE_DIR / f"{name}.yaml"
        (tmp_path / "challenges" / source.name).write_text(source.read_text(encoding="utf-8"))
    result = CliRunner().invoke(app, ["content", "stats", "--content-dir", str(tmp_path)],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    out = result.output
    table = out.split("Challenges per difficulty")[1].split("hard challenges")[0]
    rows = re.findall(r"│\s*(\d)\s*│\s*(\d+)\s*│", table)
    assert rows == [("1", "1"), ("2", "0"), ("3", "1")], out
    assert "hard challenges (difficulty 3): 1 of 2 (at least 20: NO)" in out


def test_the_shipped_challenges_hold_issue_35s_hard_ones() -> None:
    bank_ = shipped_challenges()
    assert bank_.problems == []
    assert bank_.per_difficulty()[3] >= HARD_CHALLENGES_MIN


def test_check_run_skips_device_claims_and_says_how_many(tmp_path: Path) -> None:
    cuda_only = mcq("on-cuda", "`cuda`", ["`cpu`", "`meta`", "`mps`"], extra="""
        area: memory-perf
        device: cuda
        check: stdout
        code:
          - code: |
              import torch
              print(torch.ones(1, device="cuda").device.type)
    """)
    path = bank(tmp_path / "dev.yaml", "dev", cuda_only, mcq("on-cpu", "`6`", ["`7`", "`8`", "`9`"],
                                                               extra=PRINTS_SIX))
    result = CliRunner().invoke(app, ["content", "check", "--run", "--workers", "1", str(path)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-2:] == [
        "skipped 1 snippet(s) of device: cuda questions (run them on a GPU with `torchdrill content "
        "verify --device cuda`)",
        "ok: 1 bank(s), 2 questions, 0 warning(s) (snippets and keys run)"]


def test_a_device_claim_whose_snippet_never_uses_the_device_is_an_error(tmp_path: Path) -> None:
    cpu_autocast = mcq("cpu-as-cuda", "`torch.float32`", ["`torch.bfloat16`", "`torch.float16`"], extra="""
        device: cuda
        check: stdout
        code:
          - code: |
              import torch
              with torch.autocast("cpu", dtype=torch.bfloat16):
                  print(torch.softmax(torch.randn(2, 2), -1).dtype)
    """)
    path = bank(tmp_path / "dev.yaml", "dev", cpu_autocast)
    code, found, output = check(path)
    assert code == 1, output
    assert ("dev.yaml", line_of(path, "- code: |"), False,
            "cpu-as-cuda: device: cuda but snippet 1 never uses cuda: a run would verify CPU "
            "behaviour") in found
# The areas this branch writes (content-a); the lead extends this with compile, memory-perf
# and numerics once the other depth banks are merged.
OWN_AREAS = tuple(Area)  # every depth area of issue 35


def test_the_real_banks_meet_issue_35s_depth_targets() -> None:
    library = load_library()
    met = {t.name: (t.value, t.met) for t in depth_targets(library)}
    for area in OWN_AREAS:
        name = f"{area.value} MCQs (difficulty 2-3) >= {AREA_TARGETS[area]}"
        assert met[name][1], f"{name}: {met[name][0]}"
    recall = recall_figures(library.questions)
    assert recall.share <= RECALL_MAX_SHARE, f"{recall.recall} of {recall.deep}"
