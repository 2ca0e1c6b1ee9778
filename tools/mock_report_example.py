"""The example /mock report in docs/mock.md, rendered by the core's own report code.

    python -m tools.mock_report_example      # rewrites the block between the markers

``tests/mock/test_mock_report_example.py`` asserts docs/mock.md holds exactly this rendering, so
a change to the report's texts shows up as a failing test until the example is regenerated.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

from bot.core.mock import interview
from bot.core.mock import session as mock

DOC = Path(__file__).resolve().parents[1] / "docs" / "mock.md"
START = "<!-- mock-report:start (python -m tools.mock_report_example) -->"
END = "<!-- mock-report:end -->"

R = mock.ItemResult
TODAY, DAY = date(2027, 1, 3), date(2027, 1, 15)  # the mock's day, the interview's
EXAMPLE = mock.Report(
    "ML engineer", 30, "Finished with 6 min 40 s to spare.",
    [
        R("mcq", "autograd", "What does `x.detach()` share with `x`?", 1.0, 24),
        R("mcq", "tensors", "Which op returns a view?", 1.0, 12),
        R("mcq", "optimization", "What does `zero_grad(set_to_none=True)` change?", 0.0, 41,
          "answer: the grads become None. The next backward allocates them fresh."),
        R("mcq", "nn-modules", "When does `model.eval()` matter?", 1.0, 19),
        R("mcq", "losses", "What input does `nn.CrossEntropyLoss` expect?", 1.0, 30),
        R("mcq", "training-loop", "Where does `scaler.step` belong?", 1.0, 22),
        R("mcq", "data", "What does `pin_memory=True` buy?", 0.0, 35,
          "answer: faster host-to-GPU copies. Page-locked memory can be copied asynchronously."),
        R("mcq", "debugging", "Why is the loss NaN after one step?", 1.0, 28),
        R("explain", "autograd", "How does autograd build its graph?", 2 / 3, 180,
          "2/3 key points (self-graded). A graph per forward pass, freed after backward."),
        R("explain", "tensors", "What is a view?", 1.0, 95),
        R("code", "training-loop", "Coding: Clipping the global gradient norm", 1.0, 420, "solved"),
    ],
    20.0, 0.52, 0.55, ["data", "optimization"],
    interview.countdown(TODAY, DAY), interview.suggestion(TODAY, DAY, TODAY, "/mock"),
)


def markdown() -> str:
    """The example report as markdown: a blockquote, one line per line members read."""
    text = mock.report_message(EXAMPLE, "/review", "/quiz").plain()
    lines = [re.sub(r"^(\d+)\. ", r"\1\\. ", line) for line in text.splitlines()]  # no list
    return "\n".join(f"> {line}\\" if line else ">" for line in lines).rstrip("\\")


def block() -> str:
    return f"{START}\n{markdown()}\n{END}"


def current_block(text: str) -> str | None:
    """The document's current block (None: markers missing)."""
    start, end = text.find(START), text.find(END)
    return text[start:end + len(END)] if 0 <= start < end else None


def main() -> None:
    text = DOC.read_text(encoding="utf-8")
    current = current_block(text)
    if current is None:
        raise SystemExit(f"{DOC.name} has no {START} … {END} block")
    DOC.write_text(text.replace(current, block()), encoding="utf-8")


if __name__ == "__main__":
    main()
