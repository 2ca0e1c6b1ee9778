"""Which platform a test module drives: ``fake`` and ``app`` by the module's ``platform`` marker.

The Discord, Slack and console fixture modules (registered once, in tests/conftest.py) each
build a fake platform and an app through the production wiring root, under names of their own
(``discord_fake``, ``slack_app``, ``console_app``, ...). A module marked
``pytest.mark.platform("discord")`` gets them as ``fake`` and ``app``, and so do the adapter
fixtures built on them (``start_adapter``, ``adapter``, ``slack``, ``console``). A module
marked with several platforms runs each test that asks for them once per platform.
"""

from __future__ import annotations

from typing import Any

import pytest


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("platform")
    if marker is not None and len(marker.args) > 1 and "platform_name" in metafunc.fixturenames:
        metafunc.parametrize("platform_name", marker.args, indirect=True)


@pytest.fixture
def platform_name(request: pytest.FixtureRequest) -> str:
    """The platform of this test: its module's marker, or this run's when it names several."""
    if hasattr(request, "param"):
        return str(request.param)
    marker = request.node.get_closest_marker("platform")
    if marker is None or len(marker.args) != 1:
        pytest.fail("mark the module with the platform it drives, e.g. "
                    'pytestmark = pytest.mark.platform("discord") (or "slack", "console")')
    return str(marker.args[0])


@pytest.fixture
def fake(request: pytest.FixtureRequest, platform_name: str) -> Any:
    """The fake platform server (``discord_fake`` or ``slack_fake``)."""
    return request.getfixturevalue(f"{platform_name}_fake")


@pytest.fixture
def app(request: pytest.FixtureRequest, platform_name: str) -> Any:
    """The app built by ``build_app`` for the platform (``discord_app``, ``slack_app``, ``console_app``)."""
    return request.getfixturevalue(f"{platform_name}_app")
