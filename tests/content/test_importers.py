"""Importers for the four raw formats, run on the real seed documents and on small bad inputs.

Every draft must load through ``load_bank`` without problems: that is the contract the CLI's
`content import` promises a curator.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from bot.cli import app
from bot.core.content.bank import Kind, Question, load_bank
from bot.core.content.importers import FORMATS, ImportFormatError, import_file
from bot.core.content.importers.longform import PLACEHOLDER
from bot.core.content.importers.text import first_sentence, repair_mojibake, slugify
from bot.core.domain.topics import TOPICS

REPO = Path(__file__).resolve().parents[2]
SEEDS = REPO.parent / "shared" / "seeds"


@pytest.fixture(scope="module")
def seeds() -> Path:
    if not SEEDS.is_dir():
        pytest.skip(f"seed documents not found at {SEEDS} (expected shared/ beside the repo)")
    return SEEDS


def seed(seeds: Path, prefix: str) -> Path:
    (path,) = seeds.glob(f"{prefix}_*.txt")
    return path


def load_draft(tmp_path: Path, text: str, name: str = "draft.yaml") -> list[Question]:
    """Write the draft and load it the way the bot will; any problem fails the test."""
    out = tmp_path / name
    out.write_text(text, encoding="utf-8")
    bank, problems = load_bank(out)
    assert problems == [], "\n".join(map(str, problems))
    assert bank is not None
    return bank.questions


# --- the seed documents ---------------------------------------------------------------------


def test_mcq_seed(seeds: Path, tmp_path: Path) -> None:
    text = import_file(seed(seeds, "000"), "mcq", bank_id="quiz")
    questions = load_draft(tmp_path, text)
    assert len(questions) == 25
    first = questions[0]
    assert first.kind is Kind.MCQ
    assert first.prompt == "What is the difference between torch.Tensor and torch.tensor (lowercase)?"
    assert first.answer == (
        "torch.tensor is a factory that infers dtype; torch.Tensor is the class constructor"
    )
    assert sorted(first.choices) == sorted([
        first.answer,
        "torch.Tensor infers dtype from data; torch.tensor uses float32 always",
        "They are identical aliases for the same operation",
        "torch.Tensor copies data; torch.tensor shares memory",
    ])
    assert all(len(q.choices) == 4 and q.answer in q.choices for q in questions)
    # The source always lists the accepted answer first; the draft must not give it away.
    assert len({q.answer_index for q in questions}) > 1
    assert [q.sources for q in questions] == [[f"000#{n}"] for n in range(1, 26)]
    assert questions[-1].prompt == (
        "What are torch.nn.ParameterList and torch.nn.ParameterDict used for?"
    )
    assert "# NOTE: ignored trailing text" in text  # the 'Test yourself' footer is not lost silently


def test_numbered_seed(seeds: Path, tmp_path: Path) -> None:
    path = seed(seeds, "002")
    text = import_file(path, "numbered", bank_id="interview")
    questions = load_draft(tmp_path, text)
    assert len(questions) == 48
    assert all(q.kind is Kind.FLASHCARD for q in questions)
    q8 = questions[7]
    assert q8.prompt == "How do torch.no_grad() and tensor.detach() differ, and when do you use each?"
    assert q8.sources == ["002#8"]
    # Mis-decoded characters are gone: no lead byte is left, rulers and dashes are back.
    assert "â" in path.read_text(encoding="utf-8")
    assert "â" not in text
    assert "# ── torch.no_grad(): context manager — disables ALL grad tracking" in q8.answer
    assert "encoding-guessed" in q8.tags
    # Every cut-off answer is tagged for the curator, and only those.
    for q in questions:
        assert ("truncated" in q.tags) == q.answer.endswith("..."), q.id
    assert sum("truncated" in q.tags for q in questions) == 48
    assert q8.explanation == (
        "Both torch.no_grad() and .detach() stop gradient tracking, but they work at different "
        "levels and serve different purposes."
    )
    # Repeated questions (loss functions etc.) still get unique ids.
    assert len({q.id for q in questions}) == 48
    assert all(q.id.startswith("interview-") for q in questions)


def test_qa_seed(seeds: Path, tmp_path: Path) -> None:
    text = import_file(seed(seeds, "003"), "qa", bank_id="review")
    questions = load_draft(tmp_path, text)
    assert len(questions) == 29
    header = yaml.safe_load(text)
    assert header["title"] == "Q&A Review Bank - PyTorch Fundamentals"
    assert header["description"].startswith("Quick-recall drills spanning Tensors & Autograd")
    by_prompt = {q.prompt: q for q in questions}
    dataset = by_prompt[
        "What two methods must a custom Dataset implement, and what does each return?"
    ]
    assert dataset.tags == ["dataset-and-dataloader"]
    assert dataset.topic == "data"
    assert dataset.sources == ["003#9"]
    sections = [q.tags[0] for q in questions]
    assert sorted(set(sections), key=sections.index) == [
        "tensors-and-autograd", "dataset-and-dataloader", "training-loop-from-scratch",
        "checkpointing-and-mixed-precision", "debugging-and-gpu-memory",
    ]
    assert [sections.count(s) for s in dict.fromkeys(sections)] == [8, 3, 7, 7, 4]
    freeze = next(q for q in questions if q.prompt.startswith("You need to freeze"))
    assert len(freeze.code) == 1  # two code paragraphs are one program
    assert freeze.code[0].code.startswith("for param in model.backbone.parameters():\n")
    assert "optimizer = torch.optim.Adam(" in freeze.code[0].code
    assert not freeze.code[0].runnable and freeze.code[0].reason
    assert "Frozen layers still participate in the forward pass" in freeze.answer
    prefix = next(q for q in questions if "module. prefix" in q.prompt)
    assert prefix.code[0].code.splitlines()[-1] == "model.load_state_dict(state_dict)"


# The first words of every answer in seed 004, read off the document by hand.
LONGFORM_OPENERS = [
    "PyTorch offers several constructors", "Setting requires_grad=True on a tensor",
    "Calling backward() does not overwrite", "Both stop gradients", "In-place operations",
    "A view is a tensor", "Tensors and modules live on a device", "Reproducibility requires",
    "Broadcasting lets tensors", "An nn.Module is the base class", "Every supervised training",
    "nn.CrossEntropyLoss expects raw logits", "All three update weights",
    "model.train() and model.eval() flip", "Poor initialization causes",
    "A learning-rate scheduler", "A Dataset defines", "A state_dict is a plain Python dict",
    "Both spread a model", "Automatic Mixed Precision (AMP)", "torch.compile is the headline",
    "To run a model outside", "Quantization stores", "The right tool is torch.profiler",
    "A CUDA out-of-memory (OOM) error", "Gradient checkpointing (activation checkpointing)",
    "Both are mature deep learning frameworks",
]


def test_longform_seed_one_deep_dive_per_answer(seeds: Path, tmp_path: Path) -> None:
    text = import_file(seed(seeds, "004"), "longform", bank_id="deep")
    questions = load_draft(tmp_path, text)
    assert len(questions) == len(LONGFORM_OPENERS) == 27
    for q, opener in zip(questions, LONGFORM_OPENERS, strict=True):
        assert q.kind is Kind.DEEP_DIVE
        assert q.answer.startswith(opener), (opener, q.answer[:80])
        assert q.prompt.startswith(f"{PLACEHOLDER} — {opener}")
    first = questions[0]
    assert first.explanation == (
        "PyTorch offers several constructors, and the one you pick determines both the values "
        "and the default dtype."
    )
    assert first.code[0].code.splitlines()[:3] == [
        "import torch", "", "a = torch.tensor([1, 2, 3])          # inferred int64"
    ]
    assert "Dtype matters for autograd" in first.answer  # the closing aside stays with it
    grad_accum = questions[2]
    assert [len(c.code.splitlines()) for c in grad_accum.code] == [16, 8]
    assert "optimizer.zero_grad(set_to_none=True) is the default" in grad_accum.answer
    amp = questions[19]
    assert "incomplete" in amp.tags  # 'float16 vs bfloat16:' lost its table
    assert all("incomplete" not in q.tags for q in questions if q is not amp)
    assert questions[-1].code == []
    assert questions[-1].answer.endswith("raw framework differences.")
    assert "answer: |" in text and "- code: |" in text  # block style for multi-line text


def test_every_seed_imports_through_the_cli(seeds: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    for prefix, fmt in (("000", "mcq"), ("002", "numbered"), ("003", "qa"), ("004", "longform")):
        out = tmp_path / f"{prefix}.yaml"
        result = runner.invoke(
            app, ["content", "import", "--format", fmt, str(seed(seeds, prefix)), "-o", str(out)]
        )
        assert result.exit_code == 0, result.output
        assert f"wrote {out}" in result.output
    # drafts are for a person to curate: the schema holds, the content rules come after curation
    files = sorted(map(str, tmp_path.glob("*.yaml")))
    check = runner.invoke(app, ["content", "check", "--schema-only", *files])
    assert check.exit_code == 0, check.output
    assert "ok: 4 bank(s), 129 questions" in check.output


def test_default_bank_id_and_topics(seeds: Path, tmp_path: Path) -> None:
    path = seed(seeds, "003")
    questions = load_draft(tmp_path, import_file(path, "qa", bank_id=None))
    assert yaml.safe_load((tmp_path / "draft.yaml").read_text())["bank"] == slugify(path.stem)
    assert all(q.topic in TOPICS and q.difficulty == 2 for q in questions)
    topic = {q.prompt: q.topic for q in questions}
    assert topic["What problem does GradScaler solve, and how?"] == "mixed-precision"


# --- small inputs: formats and bad input ----------------------------------------------------


def write(tmp_path: Path, text: str, name: str = "raw.txt") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_qa_answer_on_its_own_line_and_code_until_next_section(tmp_path: Path) -> None:
    raw = write(tmp_path, (
        "My cards\n\nBasics\n\nQ: How do you make a tensor?\nA: Call torch.tensor.\n\n"
        "x = torch.tensor([1, 2])\nprint(x)\n\nIt copies the data.\n\n"
        "Other things\n\nQ: Second? A: Yes. Really.\n"
    ))
    questions = load_draft(tmp_path, import_file(raw, "qa", "cards"), "cards.yaml")
    assert [(q.prompt, q.tags) for q in questions] == [
        ("How do you make a tensor?", ["basics"]), ("Second?", ["other-things"]),
    ]
    assert questions[0].answer == "Call torch.tensor.\n\nIt copies the data."
    assert questions[0].code[0].code == "x = torch.tensor([1, 2])\nprint(x)"
    assert questions[1].explanation == "Yes."


def test_numbered_keeps_inner_numbering_in_the_answer(tmp_path: Path) -> None:
    raw = write(tmp_path, "Title\n1. First?\nSteps:\n1. do this\n2. First answer ends.\n"
                          "2. Second?\nâ€œQuotedâ€\x9d answer.\n")
    questions = load_draft(tmp_path, import_file(raw, "numbered", "nums"), "nums.yaml")
    assert [q.prompt for q in questions] == ["First?", "Second?"]
    assert questions[0].answer == "Steps:\n1. do this\n2. First answer ends."
    assert questions[1].answer == "“Quoted” answer."
    assert questions[1].tags == []  # exact repair, nothing guessed, not truncated


@pytest.mark.parametrize(
    ("fmt", "text", "line", "message"),
    [
        ("mcq", "", 1, "the file is empty"),
        ("mcq", "Quiz\n\nQuestion 1\n\nWhy?\n\nAccepted Answer\n\nA\n\nAnswer\n\nB\n\n"
                "Question 2\n\nHow?\n\nAnswer\n\nC\n\nAnswer\n\nD\n", 15,
         "question 2 has no 'Accepted Answer'"),
        ("mcq", "Question 1\n\nWhy?\n\nAccepted Answer\n\nA\n\nAnswer\n", 9,
         "'Answer' is not followed by its text"),
        ("mcq", "Question 1\n\nWhy?\n\nAccepted Answer\n\nA\n", 1, "needs at least one wrong"),
        ("mcq", "Question 1\n\nWhy?\n\nAccepted Answer\n\nA\n\nAnswer\n\nA\n", 11,
         "duplicate choice 'A'"),
        ("mcq", "just some text\n", 1, "no 'Question N' heading found"),
        ("numbered", "Title\n1. Has an answer?\nYes.\n2. Has none?\n", 4,
         "question 2 has no answer text"),
        ("numbered", "no numbers here\n", 1, "no numbered question"),
        ("qa", "Section\n\nQ: Fine? A: Yes.\n\nQ: Where is the answer?\n", 5,
         "card 2 has a 'Q:' but no 'A:'"),
        ("qa", "Only prose.\n", 1, "no 'Q: ... A: ...' card found"),
        ("longform", "import torch\nx = torch.ones(2)\n\nThen some prose about it.\n", 1,
         "starts with code"),
        ("essay", "anything\n", 1, "unknown format 'essay'; choose one of mcq, numbered, qa"),
    ],
)
def test_bad_input_names_file_and_line(
    tmp_path: Path, fmt: str, text: str, line: int, message: str
) -> None:
    raw = write(tmp_path, text)
    with pytest.raises(ImportFormatError) as err:
        import_file(raw, fmt, "bad")
    assert str(err.value).startswith(f"{raw}:{line}: "), str(err.value)
    assert message in str(err.value)
    assert err.value.line == line


def test_non_utf8_input_points_at_the_line(tmp_path: Path) -> None:
    raw = tmp_path / "latin.txt"
    raw.write_bytes("Title\n1. Caf\u00e9?\n".encode() + b"Answer \xe9t\xe9.\n")
    with pytest.raises(ImportFormatError, match=r"latin\.txt:3: not UTF-8 text \(byte 0xe9\)"):
        import_file(raw, "numbered", None)


def test_bank_id_must_be_a_slug(tmp_path: Path) -> None:
    raw = write(tmp_path, "1. Q?\nA.\n")
    with pytest.raises(ImportFormatError, match="bank id 'Not A Slug' must be lowercase"):
        import_file(raw, "numbered", "Not A Slug")


def test_cli_reports_bad_input_and_writes_nothing(tmp_path: Path) -> None:
    raw = write(tmp_path, "Question 1\n\nWhy?\n\nAnswer\n\nA\n\nAnswer\n\nB\n")
    out = tmp_path / "out.yaml"
    result = CliRunner().invoke(
        app, ["content", "import", "--format", "mcq", str(raw), "-o", str(out)]
    )
    assert result.exit_code == 1
    assert f"{raw}:1: question 1 has no 'Accepted Answer'" in result.output
    assert not out.exists()


def test_cli_prints_yaml_to_stdout(tmp_path: Path) -> None:
    raw = write(tmp_path, "Cards\n\nQ: What is autograd? A: Automatic differentiation.\n")
    result = CliRunner().invoke(app, ["content", "import", "--format", "qa", str(raw),
                                      "--bank", "mini"])
    assert result.exit_code == 0, result.output
    data = yaml.safe_load(result.output)
    assert data["bank"] == "mini"
    assert data["questions"][0]["id"] == "mini-what-is-autograd"
    assert data["questions"][0]["topic"] == "autograd"


def test_formats_are_the_four_documented() -> None:
    assert list(FORMATS) == ["mcq", "numbered", "qa", "longform"]


# --- text helpers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("broken", "fixed", "guessed"),
    [
        ("Itâ€™s", "It’s", False),
        ("# â”€â”€ section", "# ── section", False),
        ("a â€” b", "a — b", False),
        ("cafÃ©", "café", False),
        ("â€œsaidâ€ then", "“said” then", True),  # the undefined 0x9D byte was dropped
        ("# ââ lost bytes", "# ── lost bytes", True),
        ("manager â disables", "manager — disables", True),
        ("âge, naïve — → •", "âge, naïve — → •", False),  # real text is left alone
    ],
)
def test_repair_mojibake(broken: str, fixed: str, guessed: bool) -> None:
    assert repair_mojibake(broken) == (fixed, guessed)


def test_first_sentence_skips_abbreviations_and_flattened_code() -> None:
    assert first_sentence("Use e.g. AdamW here. Then tune it.") == "Use e.g. AdamW here."
    assert first_sentence("Tensors live on devices. import torch x = torch . ones") == (
        "Tensors live on devices."
    )
    assert first_sentence("word " * 100).endswith("...")
