"""The challenge judge as the bot sees it: what a judge job asks for, and the small verdict that
comes back. Imports neither torch nor anything from ``bot/``: the bot's image has no torch.

A judge job carries the problem (its cases and reference, trusted content) and the member's code.
The worker (runner.judging) draws a secret seed, computes each case's inputs and the reference's
values in a trusted process of its own (runner.judge_host), runs the member's code on one case per
sandbox job (runner.judge_harness), reads what came back with capped sizes (runner.tensor_io) and
decides the verdict there. Only `Verdict.to_dict()` travels back to the bot.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

FAILURE_CAP = 300  # our own words about the first failing test
DETAIL_CAP = 400  # the member's exception text, shown in a code block
OUTPUT_CAP = 4000  # what the member's code printed, shown in a code block


@dataclass(frozen=True)
class JudgeSpec:
    """What the judge needs of one problem (the bank's schema lives in bot/core/content)."""

    tests: str  # Python source defining cases() (and optionally run(sol, *args))
    call: str = ""  # the function the default runner calls
    grad: bool = False  # also compare input gradients
    forbid: tuple[str, ...] = ()  # Python names: refused before queueing (advice)
    forbid_ops: tuple[str, ...] = ()  # aten packets (aten._softmax): a verdict from the traced graph
    atol: float = 1e-5
    rtol: float = 1e-4
    case_memory_mb: int | None = None  # memory the member's code may add in a case (kernel limit)
    # the member's call is traced and its graph replayed outside even with no op forbidden: a rule
    # such as "no Python branch on values" or "views of one buffer" shows in the replay (judge_evidence)
    traced: bool = False

    @property
    def graph_evidence(self) -> bool:
        """Whether each case's traced graph is checked and replayed outside."""
        return bool(self.forbid_ops) or self.traced

    def to_dict(self) -> dict[str, Any]:
        return {"tests": self.tests, "call": self.call, "grad": self.grad,
                "forbid": list(self.forbid), "forbid_ops": list(self.forbid_ops), "atol": self.atol, "rtol": self.rtol,
                "case_memory_mb": self.case_memory_mb, "traced": self.traced}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JudgeSpec:
        return cls(tests=str(data["tests"]), call=str(data.get("call", "")),
                   grad=bool(data.get("grad", False)),
                   forbid=tuple(str(f) for f in data.get("forbid", ())),
                   forbid_ops=tuple(str(f) for f in data.get("forbid_ops", ())),
                   atol=float(data.get("atol", 1e-5)), rtol=float(data.get("rtol", 1e-4)),
                   case_memory_mb=(int(data["case_memory_mb"]) if data.get("case_memory_mb")
                                   else None),
                   traced=bool(data.get("traced", False)))


def judge_job(problem: str, spec: JudgeSpec, reference: str) -> dict[str, Any]:
    """`JobRequest.judge` of a submission: the worker judges `JobRequest.code` against this."""
    return {"problem": problem, "spec": spec.to_dict(), "reference": reference}


@dataclass(frozen=True)
class Verdict:
    passed: int
    total: int
    failure: str | None = None  # the first failing test, in our words, never an expected value
    detail: str | None = None  # the member's own text for it (an exception message): inert
    output: str = ""  # what the member's code printed (clipped)
    elapsed_s: float | None = None
    peak_memory_mb: float | None = None
    device: str = "cpu"

    @property
    def solved(self) -> bool:
        return self.total > 0 and self.passed == self.total and self.failure is None

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "total": self.total, "failure": self.failure,
                "detail": self.detail, "output": self.output, "elapsed_s": self.elapsed_s,
                "peak_memory_mb": self.peak_memory_mb, "device": self.device}

    @classmethod
    def from_dict(cls, data: Any) -> Verdict:
        """From the wire, every field typed and capped; anything malformed is no verdict."""
        if not isinstance(data, dict):
            return cls(0, 0, "no verdict: the judge's answer could not be read")

        def text(key: str, cap: int) -> str | None:
            value = data.get(key)
            return value[:cap] if isinstance(value, str) else None

        def number(key: str) -> float | None:
            value = data.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                return float(value)
            return None

        passed, total = data.get("passed"), data.get("total")
        if not (isinstance(passed, int) and isinstance(total, int) and 0 <= passed <= total <= 1000):
            return cls(0, 0, "no verdict: the judge's answer could not be read")
        return cls(passed, total, text("failure", FAILURE_CAP), text("detail", DETAIL_CAP),
                   text("output", OUTPUT_CAP) or "", number("elapsed_s"), number("peak_memory_mb"),
                   (text("device", 80) or "cpu"))


def forbidden_uses(code: str, forbid: tuple[str, ...]) -> list[str]:
    """Forbidden names the code visibly uses (attributes, imports, strings, bare names it does not
    define). Advice said before queueing, never a verdict: a name check is easy to walk around,
    so the verdict on how a result is computed comes from the judge's outputs (docs/judge.md)."""
    leaves: dict[str, str] = {}
    for name in forbid:  # one report per leaf name: torch.softmax and F.softmax are one rule
        leaves.setdefault(name.rpartition(".")[2], name)
    found: set[str] = set()
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    own, docstrings = _own_names(tree), _docstrings(tree)
    for node in ast.walk(tree):
        word = None
        if isinstance(node, ast.Name) and node.id not in own:
            word = node.id
        elif isinstance(node, ast.Attribute):
            word = node.attr
        elif isinstance(node, ast.alias):
            word = node.name.rpartition(".")[2]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node not in docstrings:
            found.update(full for leaf, full in leaves.items() if leaf in node.value)
        if word in leaves:
            found.add(leaves[word])
    return sorted(found)


def _own_names(tree: ast.AST) -> set[str]:
    """Names the code binds itself: functions, classes, arguments, assignments, `as` names."""
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            own.add(node.name)
        elif isinstance(node, ast.arg):
            own.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            own.add(node.id)
        elif isinstance(node, ast.alias) and node.asname:
            own.add(node.asname)
    return own


def _docstrings(tree: ast.AST) -> set[ast.Constant]:
    found: set[ast.Constant] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                found.add(first.value)
    return found
