"""The architecture as the imports show it: no cycle among module-level imports, and a core
that imports nothing of the platforms, the adapters or the wiring root."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = ("discord", "slack_bolt", "slack_sdk", "bot.adapters", "bot.app", "bot.cli")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def top_level_imports(path: Path) -> set[str]:
    """Imports that run when the module loads (not under TYPE_CHECKING, not inside functions)."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        for sub in ([node] if not isinstance(node, ast.If | ast.Try) else ast.walk(node)):
            if isinstance(sub, ast.Import):
                found |= {alias.name for alias in sub.names}
            elif isinstance(sub, ast.ImportFrom) and sub.module and sub.level == 0:
                found.add(sub.module)
                found |= {f"{sub.module}.{alias.name}" for alias in sub.names}
    return found


def graph() -> dict[str, set[str]]:
    files = [p for d in ("bot", "runner") for p in (ROOT / d).rglob("*.py")]
    modules = {module_name(p): p for p in files}
    return {name: {m for m in top_level_imports(path) if m in modules and m != name}
            for name, path in modules.items()}


def test_no_import_cycle() -> None:
    edges = graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                cycle = [*stack[stack.index(nxt):], nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)


def test_the_core_imports_no_platform() -> None:
    for path in (ROOT / "bot" / "core").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert not name.startswith(PLATFORM), f"{path.relative_to(ROOT)} imports {name}"
