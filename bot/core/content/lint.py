"""Content rules beyond the schema: banks that teach, cannot be gamed, and render in chat.

The schema (bot/core/content/bank.py) decides whether a bank can be served at all; these rules
decide whether it is good enough to ship. ``torchdrill content check`` fails on any error and
prints warnings; ``content stats`` reports the per-bank figures and the library targets.

Decisions (documented here, tested in tests/content/test_content_rules.py):
- Balance rules are errors for a bank with at least ``BALANCE_MIN_MCQS`` MCQs; for a smaller
  bank a share is noise, so they are warnings.
- Absolute words ("only", "never", …) in a distractor but not in its key are a warning on that
  MCQ, and an error for the bank when more than ``ABSOLUTE_MAX_SHARE`` of its MCQs have one.
- Text inside backticks or code fences is code, not prose: markdown and word rules skip it.
- A ``device: cuda`` question's runnable snippets must use CUDA: CPU behaviour verified on a
  GPU host is still CPU behaviour (CPU autocast's op lists differ from CUDA's).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from bot.core.content.bank import (
    Area,
    Bank,
    Kind,
    Library,
    Problem,
    Question,
    Skill,
    twin_groups,
)
from bot.core.domain.topics import TOPICS

# Targets of issue 15 (per bank unless said otherwise).
KEY_LONGEST_MAX_SHARE = 0.30  # chance is 0.25 with four choices
KEY_LENGTH_MAX_RATIO = 1.15  # mean key length / mean distractor length
ABSOLUTE_MAX_SHARE = 0.25
BALANCE_MIN_MCQS = 8
ABSOLUTE_WORDS = ("only", "always", "never", "identical", "identically", "deprecated", "all",
                  "none", "every", "nothing", "everything", "entirely", "completely",
                  "guaranteed", "impossible")
# Library targets: a year of daily MCQs.
TARGET_MCQS = 365
TARGET_HARD_SHARE = 0.30
TARGET_MCQS_PER_TOPIC = 15
TARGET_EXECUTABLE = 120
# Issue 35's depth targets: MCQs of difficulty 2-3 per area, and at most this share of them
# answered by recalling a name or a definition (``skill: recall``).
AREA_TARGETS: dict[Area, int] = {Area.DISTRIBUTED: 30, Area.AUTOGRAD_INTERNALS: 25, Area.COMPILE: 25,
                                 Area.MEMORY_PERF: 30, Area.NUMERICS: 15}
DEPTH_DIFFICULTIES = (2, 3)
RECALL_MAX_SHARE = 0.10
# Platform limits a question must fit.
PROMPT_LIMIT = 150  # Slack header block (the prompt titles flashcard answers)
TITLE_LIMIT = 150
CHOICE_SOFT_LIMIT = 120
DISCORD_DESCRIPTION_LIMIT = 4096  # the question message is one embed description
NEAR_DUPLICATE_JACCARD = 0.4  # calibrated on the known dd-/iq- twins

_FENCE = re.compile(r"```.*?```", re.DOTALL)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_DUNDER = re.compile(r"(?<![\w`])__[A-Za-z0-9]\w*?__(?!\w)")
_STAR_ARGS = re.compile(r"(?<![\w*`])\*{1,2}(?:args|kwargs)\b")
_SOURCE_WORDING = re.compile(
    r"\bthe source\b(?!\s+(?:of|code|codes|tensor|tensors|file|files|rank|ranks|device|text|"
    r"dtype|array|model|data|distribution|domain|language|layout|shape|index|buffer|node))",
    re.IGNORECASE,
)
_ABSOLUTE = re.compile(r"\b(" + "|".join(ABSOLUTE_WORDS) + r")\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9_.]+")
_STOP = frozenset(("a", "an", "the", "of", "to", "in", "on", "is", "are", "and", "or", "for", "with",
                   "what", "which", "does", "do", "how", "why", "when", "you", "your", "it", "its",
                   "this", "that", "be", "by", "as", "at", "from", "can", "pytorch", "difference",
                   "between", "most", "important", "would", "should", "there", "use", "used",
                   "work", "explain", "concept", "vs"))


def prose(text: str) -> str:
    """The text without code fences and code spans: what chat markdown acts on."""
    return _CODE_SPAN.sub("", _FENCE.sub("", text))


def markdown_problems(text: str, *, lists_allowed: bool) -> list[str]:
    """Why a member-facing text would render wrongly in Discord or Slack."""
    found = []
    plain = prose(text)
    dunders = sorted(set(_DUNDER.findall(plain)))
    if dunders:
        found.append(f"{', '.join(dunders)} outside backticks (Discord underlines it)")
    stars = sorted(set(_STAR_ARGS.findall(plain)))
    if stars:
        found.append(f"{', '.join(stars)} outside backticks (read as bold/italic markers)")
    if plain.count("**") % 2:
        found.append("unpaired ** (pairs with the next bold text)")
    previous, in_list = "", False
    for raw_line in _FENCE.sub("", text).splitlines():
        line = raw_line.strip()
        if line.startswith("+ "):
            found.append(f"line starts with '+ ' (renders as a bullet): {line[:40]!r}")
        elif line.startswith(("- ", "* ")):
            # an intended list: its own paragraph, introduced by a colon, or continuing a list
            introduced = in_list or previous == "" or previous.endswith(":")
            if not lists_allowed or not introduced:
                found.append(f"line starts with '{line[0]} ' (renders as a bullet): {line[:40]!r}")
            in_list = True
        else:
            if re.match(r"#{1,3} ", line):
                found.append(f"line starts with '#' (renders as a heading): {line[:40]!r}")
            in_list = in_list and bool(line) and raw_line.startswith((" ", "\t"))
        previous = line
    if _SOURCE_WORDING.search(text):
        found.append("says 'the source' (members never saw it; keep provenance in `sources`)")
    return found


@dataclass(frozen=True)
class BankFigures:
    """The balance figures of one bank's MCQs."""

    mcqs: int
    key_longest: int
    key_length_ratio: float
    absolute_flagged: int

    @property
    def key_longest_share(self) -> float:
        return self.key_longest / self.mcqs if self.mcqs else 0.0

    @property
    def absolute_share(self) -> float:
        return self.absolute_flagged / self.mcqs if self.mcqs else 0.0


def distractors(question: Question) -> list[str]:
    return [c for c in question.choices if c != question.answer]


def key_is_longest(question: Question) -> bool:
    return all(len(question.answer) > len(d) for d in distractors(question))


def absolute_tells(question: Question) -> list[str]:
    """Absolute words used in some distractor but not in the key (prose only)."""
    in_key = {w.lower() for w in _ABSOLUTE.findall(prose(question.answer))}
    used = {w.lower() for d in distractors(question) for w in _ABSOLUTE.findall(prose(d))}
    return sorted(used - in_key)


def bank_figures(questions: Iterable[Question]) -> BankFigures:
    mcqs = [q for q in questions if q.kind is Kind.MCQ]
    keys = sum(len(q.answer) for q in mcqs)
    others = [len(d) for q in mcqs for d in distractors(q)]
    mean_key = keys / len(mcqs) if mcqs else 0.0
    mean_other = sum(others) / len(others) if others else 0.0
    return BankFigures(
        mcqs=len(mcqs),
        key_longest=sum(key_is_longest(q) for q in mcqs),
        key_length_ratio=mean_key / mean_other if mean_other else 0.0,
        absolute_flagged=sum(bool(absolute_tells(q)) for q in mcqs),
    )


def _texts(question: Question) -> Iterator[tuple[tuple[str | int, ...], str, bool]]:
    """(YAML location, text, lists allowed) for every field a member reads."""
    yield ("prompt",), question.prompt, False
    for index, choice in enumerate(question.choices):
        yield ("choices", index), choice, False
        if choice in question.why_not:
            yield ("choices", index, "why_not"), question.why_not[choice], False
    if question.kind is not Kind.MCQ:
        yield ("answer",), question.answer, True
    yield ("explanation",), question.explanation, True


WHY_NOT_LENIENT = "members see no reason after a wrong pick; add a why_not under each distractor"


def question_problems(bank: Bank, question: Question, *, strict_why_not: bool = False) -> list[Problem]:
    """``strict_why_not``: a distractor without a why_not is an error (torchdrill's own banks);
    else a warning, so extra and community banks written before why-nots existed still load."""
    problems = []

    def add(loc: tuple[str | int, ...], message: str, warning: bool = False) -> None:
        problems.append(Problem(bank.path, bank.line_of(question.id, *loc), f"{question.id}: {message}",
                                warning=warning))

    for loc, text, lists_allowed in _texts(question):
        name = ".".join(map(str, loc))
        for message in markdown_problems(text, lists_allowed=lists_allowed):
            add(loc, f"{name}: {message}")
    if len(question.prompt) > PROMPT_LIMIT:
        add(("prompt",), f"prompt is {len(question.prompt)} characters (Slack headers hold "
                         f"{PROMPT_LIMIT}); shorten it and keep the long wording as an alias")
    if question.device is not None:
        for index, snippet in enumerate(question.code):
            if snippet.runnable and question.device.value not in snippet.program():
                add(("code", index), f"device: {question.device} but snippet {index + 1} never "
                                     f"uses {question.device}: a run would verify CPU behaviour")
    if question.kind is Kind.MCQ:
        for index, choice in enumerate(question.choices):
            if choice != question.answer and choice not in question.why_not:
                add(("choices", index), f"distractor {choice[:40]!r} has no why_not"
                    + ("" if strict_why_not else f" ({WHY_NOT_LENIENT})"), warning=not strict_why_not)
            if len(choice) > CHOICE_SOFT_LIMIT:
                add(("choices", index), f"choice is {len(choice)} characters "
                                        f"(keep choices under {CHOICE_SOFT_LIMIT})", warning=True)
        tells = absolute_tells(question)
        if tells:
            add(("choices",), f"absolute word(s) {', '.join(tells)} in distractors but not in the key",
                warning=True)
        size = _question_message_size(question)
        if size > DISCORD_DESCRIPTION_LIMIT:
            add(("prompt",), f"the question message is {size} characters "
                             f"(Discord shows {DISCORD_DESCRIPTION_LIMIT} in an embed)")
    return problems


def _question_message_size(question: Question) -> int:
    snippet = question.shown_snippet
    code = len(snippet.code) + 14 if snippet else 0
    choices = sum(len(c) + 8 for c in question.choices)
    return len(question.shown_prompt) + code + choices + 8


def bank_problems(bank: Bank) -> list[Problem]:
    figures = bank_figures(bank.questions)
    problems: list[Problem] = []
    if len(bank.title) > TITLE_LIMIT:
        problems.append(Problem(bank.path, bank.header_line, f"title is over {TITLE_LIMIT} characters"))
    if not figures.mcqs:
        return problems
    warning = figures.mcqs < BALANCE_MIN_MCQS
    small = f" (warning only: fewer than {BALANCE_MIN_MCQS} MCQs)" if warning else ""
    if figures.key_longest_share > KEY_LONGEST_MAX_SHARE:
        problems.append(Problem(
            bank.path, bank.header_line,
            f"bank {bank.id}: the key is strictly the longest choice in {figures.key_longest} of "
            f"{figures.mcqs} MCQs ({figures.key_longest_share:.0%}; at most "
            f"{KEY_LONGEST_MAX_SHARE:.0%}){small}", warning=warning))
    if figures.key_length_ratio > KEY_LENGTH_MAX_RATIO:
        problems.append(Problem(
            bank.path, bank.header_line,
            f"bank {bank.id}: keys average {figures.key_length_ratio:.2f}x the distractors' length "
            f"(at most {KEY_LENGTH_MAX_RATIO}){small}", warning=warning))
    if figures.absolute_share > ABSOLUTE_MAX_SHARE:
        problems.append(Problem(
            bank.path, bank.header_line,
            f"bank {bank.id}: {figures.absolute_flagged} of {figures.mcqs} MCQs have absolute words "
            f"only in distractors ({figures.absolute_share:.0%}; at most "
            f"{ABSOLUTE_MAX_SHARE:.0%}){small}", warning=warning))
    return problems


def _words(prompt: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(prompt.lower()) if w not in _STOP)


def near_duplicates(library: Library) -> list[tuple[Question, Question, float]]:
    """Pairs of prompts sharing most of their words, unless marked as twins of each other."""
    twins = twin_groups(library.questions)
    items = [(q, _words(q.prompt)) for q in library.questions]
    items = [(q, w) for q, w in items if len(w) >= 3]  # "What does this print?" is not a prompt to compare
    pairs = []
    for i, (a, wa) in enumerate(items):
        for b, wb in items[i + 1:]:
            if b.id in twins.get(a.id, ()):
                continue
            inter = len(wa & wb)
            if inter and (score := inter / len(wa | wb)) >= NEAR_DUPLICATE_JACCARD:
                pairs.append((a, b, score))
    return pairs


def lint_library(library: Library, strict: Callable[[Bank], bool] = lambda _bank: True) -> list[Problem]:
    """Every rule above over every loaded bank (schema problems are in ``library.problems``);
    ``strict`` says which banks must give every distractor a why_not."""
    problems: list[Problem] = []
    for bank in library.banks:
        problems.extend(bank_problems(bank))
        for question in bank.questions:
            problems.extend(question_problems(bank, question, strict_why_not=strict(bank)))
    banks = {q.id: b for b in library.banks for q in b.questions}
    for a, b, score in near_duplicates(library):
        bank = banks[b.id]
        problems.append(Problem(
            bank.path, bank.line_of(b.id, "prompt"),
            f"{b.id}: prompt is a near duplicate of {a.id} in {banks[a.id].path.name} "
            f"({score:.0%} shared words); merge them or mark one `twin_of` the other",
            warning=True))
    return problems


@dataclass(frozen=True)
class Target:
    name: str
    value: str
    met: bool


def library_targets(library: Library) -> list[Target]:
    """Issue 15's "done when" figures for the whole library."""
    questions = library.questions
    mcqs = [q for q in questions if q.kind is Kind.MCQ]
    hard = sum(q.difficulty == 3 for q in mcqs)
    executable = sum(q.check is not None for q in mcqs)
    per_topic = {t: sum(q.topic == t for q in mcqs) for t in TOPICS}
    thin = [t for t, n in per_topic.items() if n < TARGET_MCQS_PER_TOPIC]
    cards = {q.topic for q in questions if q.kind is Kind.FLASHCARD}
    no_cards = [t for t in TOPICS if t not in cards]
    share = hard / len(mcqs) if mcqs else 0.0
    return [
        Target(f"MCQs >= {TARGET_MCQS}", str(len(mcqs)), len(mcqs) >= TARGET_MCQS),
        Target(f"difficulty 3 >= {TARGET_HARD_SHARE:.0%} of MCQs", f"{hard} ({share:.0%})",
               share >= TARGET_HARD_SHARE),
        Target(f"MCQs per topic >= {TARGET_MCQS_PER_TOPIC}",
               f"min {min(per_topic.values(), default=0)}" + (f"; short: {', '.join(thin)}" if thin else ""),
               not thin),
        Target("flashcards in every topic", "all topics" if not no_cards else f"none in: {', '.join(no_cards)}",
               not no_cards),
        Target(f"executable MCQs >= {TARGET_EXECUTABLE}", str(executable), executable >= TARGET_EXECUTABLE),
    ]


@dataclass(frozen=True)
class AreaFigures:
    """One depth area's MCQs: all of them, those at difficulty 2-3, executable, device-only."""

    area: Area
    mcqs: int
    deep: int  # difficulty 2-3: what the target counts
    executable: int
    device_only: int
    target: int

    @property
    def met(self) -> bool:
        return self.deep >= self.target


def _deep_mcqs(questions: Iterable[Question]) -> list[Question]:
    return [q for q in questions if q.kind is Kind.MCQ and q.difficulty in DEPTH_DIFFICULTIES]


def area_figures(questions: Iterable[Question]) -> list[AreaFigures]:
    """Per area, in the order of ``Area``: the counts ``content stats`` prints."""
    mcqs = [q for q in questions if q.kind is Kind.MCQ]
    rows = []
    for area in Area:
        mine = [q for q in mcqs if q.area is area]
        rows.append(AreaFigures(
            area=area, mcqs=len(mine), deep=len(_deep_mcqs(mine)),
            executable=sum(q.check is not None for q in mine),
            device_only=sum(q.device is not None for q in mine), target=AREA_TARGETS[area]))
    return rows


@dataclass(frozen=True)
class RecallFigures:
    """How many difficulty 2-3 MCQs only ask to recall a name or definition."""

    recall: int
    deep: int

    @property
    def share(self) -> float:
        return self.recall / self.deep if self.deep else 0.0

    @property
    def met(self) -> bool:
        return self.share <= RECALL_MAX_SHARE


def recall_figures(questions: Iterable[Question]) -> RecallFigures:
    deep = _deep_mcqs(questions)
    return RecallFigures(recall=sum(q.effective_skill is Skill.RECALL for q in deep), deep=len(deep))


def depth_targets(library: Library) -> list[Target]:
    """Issue 35's "done when" figures: MCQs per depth area and the share of recall."""
    targets = [Target(f"{row.area.value} MCQs (difficulty 2-3) >= {row.target}", str(row.deep), row.met)
               for row in area_figures(library.questions)]
    recall = recall_figures(library.questions)
    targets.append(Target(
        f"skill: recall <= {RECALL_MAX_SHARE:.0%} of difficulty 2-3 MCQs",
        f"{recall.recall} of {recall.deep} ({recall.share:.1%})", recall.met))
    return targets
