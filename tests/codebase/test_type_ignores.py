"""Every silenced type error says which one and why: ``# type: ignore[code]  # reason``.

Modules that mypy skips for now (``ignore_errors`` in pyproject.toml) are left out until the
override is removed."""

from __future__ import annotations

import io
import re
import tokenize
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IGNORE = re.compile(r"type:\s*ignore")
NAMED_WITH_REASON = re.compile(r"# type: ignore\[[a-z-]+(, ?[a-z-]+)*\]  # \S")


def skipped_modules() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    skipped: set[str] = set()
    for override in config["tool"]["mypy"].get("overrides", []):
        if override.get("ignore_errors"):
            modules = override["module"]
            skipped |= {modules} if isinstance(modules, str) else set(modules)
    return skipped


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def bare_ignores(source: str) -> list[int]:
    """Lines whose comment silences mypy without naming the code and a reason."""
    lines = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and IGNORE.search(token.string) \
                and not NAMED_WITH_REASON.match(token.string):
            lines.append(token.start[0])
    return lines


def test_the_check_tells_a_bare_ignore_from_an_explained_one() -> None:
    source = ("a = f()  # type: ignore\n"
              "b = g()  # type: ignore[arg-type]\n"
              "c = h()  # type: ignore[arg-type]  # stubs list arrays only\n"
              "d = k()  # type: ignore[union-attr, arg-type]  # both, because\n")
    assert bare_ignores(source) == [1, 2]


def test_every_type_ignore_names_its_code_and_why() -> None:
    skipped = skipped_modules()
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for package in ("bot", "runner")
        for path in sorted((ROOT / package).rglob("*.py"))
        if not any(module_name(path) == m or (m.endswith(".*") and module_name(path).startswith(m[:-1]))
                   for m in skipped)
        for line in bare_ignores(path.read_text())
    ]
    assert found == []
