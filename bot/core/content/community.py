"""Community banks: checking an uploaded bank or a suggested question, and serving it safely.

An upload passes exactly the checks of ``torchdrill content check`` (schema, ids, topics, the
MCQ key among its choices, balance and chat-markdown lints), plus what a stranger's file needs:
a size cap, no YAML bombs (aliases are counted as expanded, nesting depth is capped), and ids
that cannot collide with ours. Problems read ``line N: problem``; nothing is stored unless the
bank has no errors. Snippets are never executed here.

Served community questions get ids ``c<bank pk>.<slug>`` (a dot never occurs in our slugs, so
they cannot clash with built-in ids or another community's), and their text is made inert: it
cannot ping ``@everyone``, mention members or channels, or disguise a link.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bot.core.content.bank import Bank, Kind, Library, Problem, Question, parse_bank
from bot.core.content.lint import bank_problems, question_problems
from bot.core.domain.topics import UnknownTopicError, normalize_topic

MAX_UPLOAD_BYTES = 200_000
MAX_QUESTIONS_PER_BANK = 200
MAX_BANKS_PER_COMMUNITY = 20
MAX_FIELD_CHARS = 4000  # any one text field: prompt, choice, explanation, snippet
MAX_YAML_NODES = 50_000  # as expanded through aliases: a "billion laughs" file stops here
MAX_YAML_DEPTH = 12
MAX_PENDING_SUGGESTIONS = 50  # per community
MAX_PENDING_PER_MEMBER = 5
BANK_SOURCES = ("both", "builtin", "community")
DEFAULT_BANK_SOURCE = "both"
SOURCE_LABELS = {"builtin": "built-in banks only", "community": "community banks only",
                 "both": "built-in and community banks"}
SOURCE_WORDS = {"builtin": "in the built-in banks", "community": "in this community's banks", "both": ""}
ZWSP = "\u200b"


@dataclass
class Checked:
    """The outcome of checking an upload: the bank when it has no errors, and every problem."""

    bank: Bank | None
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.bank is not None and not self.errors


def _line(problem: Problem) -> str:
    return f"line {problem.line}: {problem.message}"


def _yaml_shape_problem(text: str) -> str | None:
    """Why a YAML text is too big or too deep once aliases are expanded (None: fine)."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None  # parse_bank reports syntax errors with their line
    except RecursionError:  # PyYAML composes nested collections recursively
        return f"line 1: nested deeper than {MAX_YAML_DEPTH} levels"
    sizes: dict[int, int] = {}
    busy: set[int] = set()

    def size(node: yaml.Node, depth: int) -> int:
        if depth > MAX_YAML_DEPTH:
            raise _TooBig(f"line {node.start_mark.line + 1}: nested deeper than {MAX_YAML_DEPTH} levels")
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in busy:
            raise _TooBig(f"line {node.start_mark.line + 1}: an alias refers to itself")
        busy.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            total += sum(size(child, depth + 1) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            total += sum(size(k, depth + 1) + size(v, depth + 1) for k, v in node.value)
        busy.discard(key)
        sizes[key] = total
        if total > MAX_YAML_NODES:
            raise _TooBig(f"line {node.start_mark.line + 1}: expands to more than {MAX_YAML_NODES:,} "
                          "values (anchors and aliases multiply); write the questions out")
        return total

    if root is None:
        return None
    try:
        size(root, 0)
    except _TooBig as exc:
        return str(exc)
    return None


yaml_shape_problem = _yaml_shape_problem  # an uploaded tracks file is checked the same way


class _TooBig(Exception):
    pass


def too_big(size: int) -> str:
    return f"The file is {size:,} bytes; an upload may be at most {MAX_UPLOAD_BYTES:,}."


def check_bank_text(data: bytes | str, filename: str, builtin: Library, *,
                    strict_why_not: bool = False) -> Checked:
    """Every problem of an uploaded bank, as ``line N: problem`` lines. An uploaded bank may
    lack why-nots (a warning: banks written before them still load); a suggestion may not."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if len(raw) > MAX_UPLOAD_BYTES:
        return Checked(None, [f"line 1: {too_big(len(raw))}"])
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return Checked(None, [f"line {line}: not UTF-8 text; re-save the file as UTF-8"])
    if not text.strip():
        return Checked(None, ["line 1: the file is empty"])
    shape = _yaml_shape_problem(text)
    if shape is not None:
        return Checked(None, [shape])
    bank, problems = parse_bank(text, Path(filename))
    if bank is None:
        return Checked(None, [_line(p) for p in problems])
    if bank.entries > MAX_QUESTIONS_PER_BANK:
        return Checked(None, [f"line {bank.header_line}: {bank.entries} questions; "
                              f"a community bank holds at most {MAX_QUESTIONS_PER_BANK}"])
    if not bank.questions and not problems:
        problems.append(Problem(bank.path, bank.header_line, "the bank has no questions"))
    for q in bank.questions:
        problems.extend(_field_problems(bank, q, builtin))
        problems.extend(question_problems(bank, q, strict_why_not=strict_why_not))
    problems.extend(bank_problems(bank))
    errors = [_line(p) for p in problems if not p.warning]
    warnings = [_line(p) for p in problems if p.warning]
    return Checked(bank if not errors else None, errors, warnings)


def _field_problems(bank: Bank, q: Question, builtin: Library) -> list[Problem]:
    problems = []

    def add(loc: tuple[str | int, ...], message: str) -> None:
        problems.append(Problem(bank.path, bank.line_of(q.id, *loc), f"{q.id}: {message}"))

    texts: list[tuple[tuple[str | int, ...], str]] = [(("prompt",), q.prompt), (("answer",), q.answer),
                                                       (("explanation",), q.explanation)]
    texts += [(("choices", i), c) for i, c in enumerate(q.choices)]
    texts += [(("code", i, "code"), s.code) for i, s in enumerate(q.code)]
    for loc, text in texts:
        if len(text) > MAX_FIELD_CHARS:
            add(loc, f"{loc[0]} is {len(text):,} characters; at most {MAX_FIELD_CHARS:,}")
    ids = {other.id for other in bank.questions}
    for ref in [*q.related, *([q.twin_of] if q.twin_of else [])]:
        if ref not in ids and ref not in builtin:
            add(("related",) if ref in q.related else ("twin_of",),
                f"{ref!r} is neither a question of this bank nor a built-in one")
    return problems


# ---- serving -------------------------------------------------------------------------------

_MENTION = re.compile(r"<(?=[@#!])")  # Slack <@U…>, <#C…>, <!channel>; Discord <@123>, <#1>, <@&r>
_PING = re.compile(r"@(?=(?:everyone|here|channel)\b)", re.IGNORECASE)
_MASKED_LINK = re.compile(r"\[([^\]\n]+)\]\((\S+?)\)")


def inert(text: str) -> str:
    """Community text that cannot notify anyone or hide where a link goes."""
    text = _MENTION.sub("<" + ZWSP, text)
    text = _PING.sub("@" + ZWSP, text)
    return _MASKED_LINK.sub(r"\1 (\2)", text)


def served_id(bank_pk: int, slug: str) -> str:
    return f"c{bank_pk}.{slug}"


def is_community_id(question_id: str) -> bool:
    return question_id.startswith("c") and "." in question_id


def served_question(q: Question, bank_pk: int, bank_slug: str, bank_ids: set[str]) -> Question:
    """A checked community question as the core serves it: its own id space, inert text.

    ``related`` / ``twin_of`` naming a question of the same bank (``bank_ids``) follow it into
    the bank's id space; others name built-in questions and stay as they are.
    """

    def ref(other: str) -> str:
        return served_id(bank_pk, other) if other in bank_ids else other

    return q.model_copy(update={
        "id": served_id(bank_pk, q.id),
        "bank": f"community:{bank_slug}",
        "prompt": inert(q.prompt),
        "choices": [inert(c) for c in q.choices],
        "answer": inert(q.answer),
        "why_not": {inert(k): inert(v) for k, v in q.why_not.items()},
        "explanation": inert(q.explanation),
        "related": [ref(r) for r in q.related],
        "twin_of": ref(q.twin_of) if q.twin_of else None,
    })


def dump_question(q: Question) -> str:
    return q.model_dump_json()


def load_question(data: str) -> Question:
    """A stored question, validated again; served ids (``c7.slug``) are not slugs, so they are
    validated in their bank's own id space and put back."""
    raw = json.loads(data)
    if "." not in raw["id"]:
        return Question.model_validate(raw)
    prefix = raw["id"].split(".", 1)[0] + "."
    refs = [*raw.get("related", []), *([raw["twin_of"]] if raw.get("twin_of") else [])]
    ours = {r for r in refs if r.startswith(prefix)}
    raw["id"] = raw["id"].removeprefix(prefix)
    raw["related"] = [r.removeprefix(prefix) for r in raw.get("related", [])]
    if raw.get("twin_of"):
        raw["twin_of"] = raw["twin_of"].removeprefix(prefix)
    q = Question.model_validate(raw)

    def back(ref: str) -> str:
        return prefix + ref if prefix + ref in ours else ref

    return q.model_copy(update={"id": prefix + q.id, "related": [back(r) for r in q.related],
                                "twin_of": back(q.twin_of) if q.twin_of else None})


# ---- suggestions ---------------------------------------------------------------------------

_CHOICE_LINE = re.compile(r"^\s*(?:[A-Da-d][).:]|[-*•]|[1-9][).])\s+(\S.*)$")
PROMPT_MAX, CHOICES_MAX = 150, 1500  # /suggest's prompt and choices boxes


def draft_from_message(text: str) -> dict[str, str]:
    """"Ask as a question": a chat message as the /suggest form's first values. Lines that
    look like choices (``A) …``, ``- …``, ``1. …``) become the choices, one per line; the rest
    is the prompt. The admin marks the right one and writes the explanation in the form; the
    text stays plain (a form box renders nothing) and /suggest checks it as any suggestion."""
    prompt: list[str] = []
    choices: list[str] = []
    for line in text.replace("\r", "").splitlines():
        found = _CHOICE_LINE.match(line)
        if found:
            choices.append(found.group(1).strip())
        elif line.strip() and not line.strip().startswith("```"):
            prompt.append(line.strip())
    return {"prompt": " ".join(prompt)[:PROMPT_MAX], "choices": "\n".join(choices)[:CHOICES_MAX]}


SUGGEST_CHOICES_HELP = ("one choice per line (or separated by ;); start the right one with *; "
                        "after each other choice write | and why it is wrong")


@dataclass(frozen=True)
class Suggested:
    question: Question | None
    errors: list[str]


def check_suggestion(
    *, prompt: str, choices: str, explanation: str, topic: str, difficulty: int, slug: str, builtin: Library,
) -> Suggested:
    """A suggested MCQ from the /suggest form, checked with the bank rules."""
    errors: list[str] = []
    try:
        topic_slug = normalize_topic(topic)
    except UnknownTopicError as exc:
        return Suggested(None, [str(exc)])
    items: list[dict[str, Any]] = []
    answer = None
    lines = choices.splitlines() if "\n" in choices.strip() else choices.split(";")
    for line in (ln.strip() for ln in lines):
        if not line:
            continue
        keyed = line.startswith("*")
        text, _, why = line.lstrip("*").partition("|")
        text, why = text.strip(), why.strip()
        if keyed:
            if answer is not None:
                errors.append("choices: mark only one choice with *")
            answer = text
            items.append({"text": text})
        else:
            items.append({"text": text, **({"why_not": why} if why else {})})
    if answer is None:
        errors.append("choices: start the right choice with *")
    if len(items) < 2:
        errors.append(f"choices: at least two ({SUGGEST_CHOICES_HELP})")
    if errors:
        return Suggested(None, errors)
    data = {"id": slug, "bank": "suggestion", "kind": Kind.MCQ.value, "topic": topic_slug,
            "difficulty": difficulty, "prompt": prompt, "choices": items, "answer": answer,
            "explanation": explanation}
    text = yaml.safe_dump({"bank": "suggestion", "title": "Suggestion", "questions": [data]},
                          allow_unicode=True, sort_keys=False)
    checked = check_bank_text(text, "suggestion.yaml", builtin, strict_why_not=True)
    if not checked.ok:
        return Suggested(None, [_suggestion_error(e) for e in checked.errors])
    assert checked.bank is not None
    return Suggested(checked.bank.questions[0], [])


def _suggestion_error(error: str) -> str:
    """Problems of a suggestion name its form fields, not lines of a file no one wrote."""
    message = re.sub(r"^line \d+: ", "", error)
    message = re.sub(r"^[a-z0-9-]+: ", "", message)
    return message.replace("choices.", "choice ").replace("why_not", "why it is wrong (after |)")


def question_yaml(questions: list[Question]) -> list[dict[str, Any]]:
    """Questions back as bank YAML mappings (approving a suggestion into a bank's source)."""
    out = []
    for q in questions:
        data = json.loads(q.model_dump_json(exclude_defaults=True, exclude={"bank"}))
        if q.why_not:
            data["choices"] = [{"text": c, **({"why_not": q.why_not[c]} if c in q.why_not else {})}
                               for c in q.choices]
            data.pop("why_not", None)
        out.append(data)
    return out


def with_question_appended(text: str, entry: dict[str, Any]) -> str:
    """The bank's YAML ``text`` with ``entry`` added to its questions, keeping the uploader's
    comments and layout: the item is appended as text when ``questions`` is the last block
    (checked by parsing the result); otherwise the bank is written out again."""
    source = yaml.safe_load(text) if text.strip() else {}
    expected = {**source, "questions": [*(source.get("questions") or []), entry]}
    item = yaml.safe_dump([entry], allow_unicode=True, sort_keys=False, width=100)
    body = text.rstrip("\n") + "\n"
    if source.get("questions"):
        for indent in ("", "  ", "    "):
            candidate = body + "".join(f"{indent}{line}\n" if line else "\n" for line in item.splitlines())
            try:
                if yaml.safe_load(candidate) == expected:
                    return candidate
            except yaml.YAMLError:
                continue
    return yaml.safe_dump(expected, allow_unicode=True, sort_keys=False, width=100)
