"""The tests' own layout: shared fakes, builders and fixtures live in ``tests/support``, and a
fixture reaches a test by being registered (``pytest_plugins`` in tests/conftest.py, or a
folder's conftest.py), never by an import kept alive with ``# noqa: F401``.

- no file under tests/ imports a test module (a ``tests.*`` module outside ``tests.support``
  and the conftest files): every import counts, at module level and inside functions;
- no file under tests/ carries ``noqa: F401``.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.not_for_mutation  # see conftest: it calls no function of ours

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
UNUSED_IMPORT_WAIVER = re.compile(r"noqa:[^\n]*\bF401\b")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, package: str) -> Iterator[tuple[int, str]]:
    """(line, module) for every import of a module of ``package``, lazy ones too, relative ones
    resolved; ``from a import b`` yields ``a`` and ``a.b`` (``b`` may be a module)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def is_test_module(name: str) -> bool:
    """A module file of tests/ other than support code and the conftest files."""
    parts = name.split(".")
    if parts[0] != "tests" or len(parts) < 2 or parts[1] == "support" or parts[-1] in ("conftest", "__init__"):
        return False
    return ROOT.joinpath(*parts).with_suffix(".py").is_file()


def comments(source: str) -> Iterator[tuple[int, str]]:
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def package_of(path: Path) -> str:
    name = module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def files_under_tests() -> list[Path]:
    return sorted(TESTS.rglob("*.py"))


def test_no_file_under_tests_imports_a_test_module() -> None:
    offenders = []
    for path in files_under_tests():
        for line, name in imported_modules(path.read_text(), package_of(path)):
            if is_test_module(name):
                offenders.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert offenders == [], (
        "move what is shared into tests/support (fixtures: register them in tests/conftest.py's "
        "pytest_plugins, or in the folder's conftest.py):\n" + "\n".join(offenders))


def test_no_fixture_is_imported_with_a_noqa() -> None:
    offenders = [f"{path.relative_to(ROOT)}:{line}"
                 for path in files_under_tests()
                 for line, comment in comments(path.read_text())
                 if UNUSED_IMPORT_WAIVER.search(comment)]
    assert offenders == [], (
        "an import kept only for pytest (a fixture) is registered instead: tests/conftest.py's "
        'pytest_plugins, a folder\'s conftest.py, or pytest.mark.platform("discord"/"slack"/'
        '"console") for the platform fixtures:\n' + "\n".join(offenders))


def test_the_checks_see_an_offender() -> None:
    """Lazy, aliased and relative imports of a test module are found (no false pass)."""
    source = ("from tests.support.clicks import click\n"
              "from tests.mock.console import test_mock_console as console_mock\n"
              "def f():\n"
              "    from .test_click_replies import WHERE\n"
              "    import tests.weekly.test_weekly_digest\n")
    found = [(line, name) for line, name in imported_modules(source, "tests.answers") if is_test_module(name)]
    assert found == [(2, "tests.mock.console.test_mock_console"), (4, "tests.answers.test_click_replies"),
                     (5, "tests.weekly.test_weekly_digest")]
    assert package_of(TESTS / "answers" / "test_click_store.py") == "tests.answers"
    assert not is_test_module("tests.conftest") and not is_test_module("tests.mock.console.conftest")
    waived = 'from x import (  # noqa: F401 - fixtures\n    y,\n)\nz = "noqa: F401"  # noqa: E402, F401\n'
    assert [line for line, c in comments(waived) if UNUSED_IMPORT_WAIVER.search(c)] == [1, 4]
    assert not UNUSED_IMPORT_WAIVER.search("# noqa: E402")
