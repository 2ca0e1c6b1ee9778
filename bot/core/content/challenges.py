"""The challenge bank: one YAML file per graded coding problem in content/challenges/.

Each file is validated here (schema, topic, sizes that fit a chat message or modal, code that
parses, forbidden names kept out of the reference); `torchdrill content check` reports the
problems as ``path:line: message``. The judge itself is runner/judge.py.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from bot.core.content.bank import DEFAULT_CONTENT_DIR, Problem
from bot.core.domain.topics import TOPICS
from runner.judge import JudgeSpec, forbidden_uses

CHALLENGE_DIR = DEFAULT_CONTENT_DIR / "challenges"
STATEMENT_MAX = 1500  # one chat message with the stub below it
STUB_MAX = 3000  # prefilled into a Slack modal (3,000) or a Discord modal (4,000)
POINTS = {1: 10, 2: 20, 3: 30}  # a first solve earns these; resubmissions never earn more
HARD_CHALLENGES_MIN = 20  # issue 35: at least this many difficulty-3 challenges


class Challenge(BaseModel):
    """One problem. `tests` defines cases() yielding (name, args), optionally run(sol, *args)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{2,40}$")
    title: str = Field(min_length=3, max_length=80)
    topic: str
    difficulty: int = Field(ge=1, le=3)
    statement: str = Field(min_length=20, max_length=STATEMENT_MAX)
    stub: str = Field(min_length=10, max_length=STUB_MAX)
    reference: str
    tests: str
    call: str = ""
    grad: bool = False
    gradcheck: bool = False  # CI checks the reference's gradients with gradcheck in float64
    forbid: tuple[str, ...] = ()  # Python names: refused before queueing, advice only
    # aten overload packets (aten._softmax) the member's traced graph must not call: a verdict
    forbid_ops: tuple[str, ...] = ()
    # the member's call is traced and its graph replayed outside even with no op forbidden (a
    # driver, if any, is replayed with the graph as the solution): "no Python branch on values",
    # "views of one buffer" shown by the replay, not by a check in the member's process
    traced: bool = False
    atol: float = Field(default=1e-5, gt=0)
    rtol: float = Field(default=1e-4, ge=0)
    hints: tuple[str, ...] = Field(min_length=1, max_length=5)
    explanation: str = Field(min_length=20, max_length=1500)
    wrong: tuple[str, ...] = Field(min_length=2)
    # Limits of this problem's judging job, stricter than /run's (a worker never loosens its own)
    time_limit_s: float | None = Field(default=None, ge=2, le=60)
    memory_mb: int | None = Field(default=None, ge=256, le=8192)
    # Memory the member's code may add while computing one case (RLIMIT_DATA, set before it
    # runs): how a rule such as "keep no graph alive" shows in the verdict
    case_memory_mb: int | None = Field(default=None, ge=32, le=4096)

    @property
    def job_limits(self) -> dict[str, float]:
        asked = {"timeout_s": self.time_limit_s, "memory_mb": self.memory_mb}
        return {name: float(value) for name, value in asked.items() if value is not None}

    @field_validator("topic")
    @classmethod
    def _known_topic(cls, value: str) -> str:
        if value not in TOPICS:
            raise ValueError(f"unknown topic {value!r}; choose one of: {', '.join(TOPICS)}")
        return value

    @field_validator("forbid_ops")
    @classmethod
    def _aten_packets(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [op for op in value if not re.fullmatch(r"aten\.[a-z_][a-z0-9_]*", op)]
        if bad:
            raise ValueError(f"forbid_ops names aten overload packets (aten._softmax), not {bad[0]!r}")
        return value

    @property
    def points(self) -> int:
        return POINTS[self.difficulty]

    @property
    def spec(self) -> JudgeSpec:
        return JudgeSpec(tests=self.tests, call=self.call, grad=self.grad, forbid=self.forbid,
                         forbid_ops=self.forbid_ops, atol=self.atol, rtol=self.rtol,
                         case_memory_mb=self.case_memory_mb, traced=self.traced)

    def code_problems(self) -> list[str]:
        """What the schema cannot see: code that does not parse, a missing entry point."""
        found: list[str] = []
        sources = {"stub": self.stub, "reference": self.reference, "tests": self.tests,
                   **{f"wrong[{i}]": w for i, w in enumerate(self.wrong)}}
        trees = {}
        for name, source in sources.items():
            try:
                trees[name] = ast.parse(source)
            except SyntaxError as exc:
                found.append(f"{name} does not parse: line {exc.lineno}: {exc.msg}")
        defined = {n.name for n in ast.walk(trees["tests"])
                   if isinstance(n, ast.FunctionDef)} if "tests" in trees else set()
        if "tests" in trees and "cases" not in defined:
            found.append("tests must define cases()")
        if "run" not in defined:
            if not self.call:
                found.append("set call: (the function to test) or define run(sol, *args) in tests")
            for name in ("stub", "reference"):
                if name in trees and self.call not in _top_level_names(trees[name]):
                    found.append(f"{name} does not define {self.call}")
        if self.traced and not self.call:
            found.append("a traced problem names the function its graph is traced from (call:)")
        used = forbidden_uses(self.reference, self.forbid)
        if used:
            found.append(f"the reference uses forbidden {', '.join(used)}")
        if len(set(self.wrong)) != len(self.wrong):
            found.append("two wrong: solutions are the same")
        return found


def _top_level_names(tree: ast.Module) -> set[str]:
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}


@dataclass
class ChallengeBank:
    challenges: list[Challenge]
    problems: list[Problem]

    def get(self, challenge_id: str) -> Challenge | None:
        return next((c for c in self.challenges if c.id == challenge_id), None)

    def per_difficulty(self) -> dict[int, int]:
        """Challenges at each difficulty, 1 to 3 (0 where none)."""
        return {d: sum(c.difficulty == d for c in self.challenges) for d in POINTS}


def load_challenge(path: Path) -> tuple[Challenge | None, list[Problem]]:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        return None, [Problem(path, 1, f"cannot read challenge: {exc}")]
    if not isinstance(raw, dict):
        return None, [Problem(path, 1, "a challenge file must be a mapping")]
    try:
        challenge = Challenge.model_validate(raw)
    except ValidationError as exc:
        return None, [Problem(path, _line(path, err["loc"]), f"{'.'.join(map(str, err['loc']))}: "
                              f"{err['msg']}") for err in exc.errors()]
    problems = [Problem(path, 1, f"{challenge.id}: {p}") for p in challenge.code_problems()]
    if challenge.id != path.stem:
        problems.append(Problem(path, 1, f"id {challenge.id!r} must match the file name"))
    return (None if problems else challenge), problems


def _line(path: Path, loc: tuple[object, ...]) -> int:
    """The line of the top-level key an error is about (1 when unknown)."""
    if not loc:
        return 1
    key = f"{loc[0]}:"
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith(key):
            return number
    return 1


def load_challenges(directory: Path | None = None) -> ChallengeBank:
    """Every challenge in the directory; a file with a problem is skipped and reported."""
    directory = directory or CHALLENGE_DIR
    bank = ChallengeBank([], [])
    for path in sorted(directory.glob("*.yaml")):
        challenge, problems = load_challenge(path)
        bank.problems.extend(problems)
        if challenge is not None:
            bank.challenges.append(challenge)
    return bank


@functools.cache
def shipped_challenges() -> ChallengeBank:
    """The shipped bank, read once per process and shared by every desk that needs it."""
    return load_challenges()


def check_challenges(content_dir: Path) -> list[Problem]:
    """The hook `torchdrill content check` calls: problems of content_dir/challenges/."""
    directory = content_dir / "challenges"
    return load_challenges(directory).problems if directory.is_dir() else []
