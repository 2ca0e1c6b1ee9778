"""The architecture as the imports show it. Every import counts: at module level, inside
functions (lazy) and under ``TYPE_CHECKING``, relative ones resolved, so a cycle or a layer
breach cannot hide behind a late import.

- no import cycle among the modules of ``bot`` and ``runner``;
- ``bot/core`` imports nothing of the platforms, the adapters or the wiring root, and no
  storage (``bot.storage``, SQLAlchemy) beyond today's offenders, listed below so the list can
  only shrink (issue 32: the core owns its storage ports);
- ``runner`` imports nothing of ``bot`` (a GPU host installs the runner alone).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

pytestmark = pytest.mark.not_for_mutation  # see conftest: slow or hostile for mutants

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("bot", "runner")

# The core never imports these (no exceptions): platforms come in through the publisher ports,
# storage through the ports the core declares (issue 32: a core that owns its ports).
PLATFORM = ("discord", "slack_bolt", "slack_sdk", "bot.adapters", "bot.app", "bot.cli")
STORAGE = ("bot.storage", "sqlalchemy")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))}


def imported_names(name: str, source: str, *, is_package: bool = False) -> set[str]:
    """Every module name an import statement anywhere in ``source`` may load: ``import a.b``
    gives a.b; ``from a import b`` gives a and a.b (b may be a module); relative ones are
    resolved against ``name``."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*parts, base] if base else parts)
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return found


@cache
def imports_of(name: str) -> frozenset[str]:
    path = modules()[name]
    return frozenset(imported_names(name, path.read_text(), is_package=path.name == "__init__.py"))


def own_module(imported: str) -> str | None:
    """The module of ours that ``imported`` loads (the longest known prefix), if any."""
    while imported and imported not in modules():
        imported = imported.rpartition(".")[0]
    return imported or None


def graph() -> dict[str, set[str]]:
    return {name: {m for i in imports_of(name) if (m := own_module(i)) and m != name}
            for name in modules()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a path that ends where it starts, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def layers(imported: set[str] | frozenset[str], prefixes: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """(prefix, import) for each import inside one of ``prefixes``; ``a.b`` stands for the
    ``a.b.c`` that ``from a.b import c`` also names."""
    for name in sorted(imported):
        if any(name.startswith(other + ".") for other in imported):
            continue
        for prefix in prefixes:
            if name == prefix or name.startswith(prefix + "."):
                yield prefix, name


def core_breaches(imports: dict[str, frozenset[str]]) -> list[str]:
    """Each core import the rules forbid."""
    return [f"{name} imports {what}" for name, imported in sorted(imports.items())
            for _, what in layers(imported, PLATFORM + STORAGE)]


def core_imports() -> dict[str, frozenset[str]]:
    return {name: imports_of(name) for name in modules() if name.startswith("bot.core")}


# ---- the rules --------------------------------------------------------------------------------


def test_no_import_cycle() -> None:
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_core_imports_no_platform_and_no_storage() -> None:
    assert core_breaches(core_imports()) == []


def test_the_domain_imports_no_feature() -> None:
    """bot/core/domain is the vocabulary features share: it imports nothing else of the bot,
    storage included (the member and channel rows are found through ``bot.core.stores``'
    ``Identities``)."""
    edges = graph()
    outside = sorted(f"{name} imports {target}" for name, targets in edges.items()
                     if name.startswith("bot.core.domain.")
                     for target in targets
                     if target.startswith("bot.") and not target.startswith("bot.core.domain"))
    assert outside == []


def test_the_runner_imports_nothing_of_the_bot() -> None:
    found = [f"{name} imports {what}" for name in sorted(modules()) if name.startswith("runner")
             for _, what in layers(imports_of(name), ("bot",))]
    assert found == []


# ---- the checks catch what they are for (sources planted in memory) ---------------------------


def test_every_kind_of_import_counts() -> None:
    source = (
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "import bot.core.render\n"
        "from . import grammar\n"
        "from ..domain.clock import Clock\n"
        "if TYPE_CHECKING:\n"
        "    from bot.core.drill.service import Drill\n"
        "def late() -> None:\n"
        "    from sqlalchemy import select\n"
        "    import bot.storage.models\n"
    )
    found = imported_names("bot.core.commands.dispatch", source)
    assert {"bot.core.render", "bot.core.commands.grammar", "bot.core.domain.clock",
            "bot.core.drill.service", "sqlalchemy", "bot.storage.models"} <= found
    assert own_module("bot.core.domain.clock.Clock") == "bot.core.domain.clock"
    assert own_module("bot.core.drill.service.Drill") == "bot.core.drill.service"
    assert own_module("sqlalchemy.select") is None


def test_a_cycle_through_a_lazy_import_is_found() -> None:
    edges = graph()
    late = imported_names("bot.core.domain.kinds", "def f() -> None:\n    from bot.core.drill import service\n")
    edges["bot.core.domain.kinds"] |= {m for i in late if (m := own_module(i))}
    cycle = find_cycle(edges)
    assert cycle is not None and cycle[0] == cycle[-1] and "bot.core.domain.kinds" in cycle


def test_a_new_storage_import_in_the_core_is_a_breach() -> None:
    imports = dict(core_imports())
    imports["bot.core.domain.kinds"] |= imported_names(
        "bot.core.domain.kinds", "if TYPE_CHECKING:\n    from bot.storage.db import Database\n")
    imports["bot.core.quizzes.rounds"] |= imported_names(
        "bot.core.quizzes.rounds", "def f() -> None:\n    from sqlalchemy import select\n")
    imports["bot.core.render.charts"] |= imported_names(
        "bot.core.render.charts", "import discord\n")
    assert core_breaches(imports) == [
        "bot.core.domain.kinds imports bot.storage.db", "bot.core.quizzes.rounds imports sqlalchemy",
        "bot.core.render.charts imports discord"]
