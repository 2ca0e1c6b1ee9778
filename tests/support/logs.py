"""Logging left as it was: the `restore_logging` fixture (registered in tests/conftest.py) puts
back the root handlers and level and forgets the registered secrets after a test that configures
logging.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from bot.observability import logs


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    logs._handler = None
    logs.clear_registered_secrets()
