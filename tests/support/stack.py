"""The deployed stack, read from docker/ and started here as processes (tests/app/test_stack.py).

Everything a container would get comes from the files compose and the images are built from,
so a test cannot drift from them: the services and their entry points, commands, environment
and users (docker/compose.yaml, the Dockerfiles' ENV/USER/ENTRYPOINT/CMD), and the Python
distributions each image installs (its `pip install .[extras]`, resolved through the installed
metadata). A process started as an image gets only that image's distributions: a
`sitecustomize` meta-path finder refuses the top-level modules of every other installed one,
so the bot process cannot import torch, as in its image.

What stays a host stand-in: PostgreSQL and Redis are the local servers (a fresh database, a
queue key prefix of its own), hosts `postgres`/`redis` become 127.0.0.1, and the runner's
container-only step (its cgroup namespace, docker/runner-entrypoint.sh) is left out: on this
host the worker's cgroup is already the one the hierarchy shows.

Users: a process runs as its image's uid (the bot's 10001) or is not started: `start` raises
CannotRunAs, which the test turns into a failure under TORCHDRILL_REQUIRE_SERVICES=1 (CI) and
a skip elsewhere; it never falls back to root. That needs root, and an interpreter uid 10001
can execute. On this machine, and so in CI (a fresh clone, its .venv inside, run as root), the
venv's python links to pyenv's under /root, which is 0700: rather than change the host
(chmod /root) or copy the interpreter, the process gets a mount namespace of its own in which
a 0711 tmpfs covers each such closed directory, with only the entries on the interpreter's
and the checkout's way bound back. Directories of the venv or checkout themselves closed to
others are not opened: the start fails with that reason.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
COMPOSE = DOCKER / "compose.yaml"
PROJECT = "torchdrill"
PROJECT_PACKAGES = frozenset({"bot", "runner"})
# What every Python base image brings besides the project (python:3.11-slim, the PyTorch image).
BASE_IMAGE_DISTRIBUTIONS = frozenset({"pip", "setuptools", "wheel"})
CONTAINER_ONLY = frozenset({"torchdrill-runner-entrypoint"})  # see the module docstring
STOP_GRACE_S = 15.0


# ---------------------------------------------------------------- Dockerfiles


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


def exec_form(rest: str) -> list[str]:
    """HEALTHCHECK/CMD/ENTRYPOINT arguments, which must use the JSON (exec) form."""
    value = json.loads(re.sub(r"^(--\S+\s+)*CMD\s+", "", rest))
    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        raise ValueError(f"not an exec-form list: {rest}")
    return value


@dataclass(frozen=True)
class Image:
    """What one Dockerfile puts in its image, as far as a process can tell."""

    dockerfile: Path
    extras: frozenset[str]
    user: str  # the last USER, "root" when there is none
    env: dict[str, str]
    entrypoint: list[str]
    cmd: list[str]
    copied: dict[str, str]  # destination in the image -> source in the repository

    @classmethod
    def read(cls, dockerfile: Path) -> Image:
        steps = instructions(dockerfile)
        installs = " ".join(r for kw, r in steps if kw == "RUN" and "pip install" in r)
        groups = re.findall(r"\.\[([^\]]+)\]", installs)
        if len(groups) != 1:
            raise ValueError(f"{dockerfile.name}: expected one `pip install .[extras]`, found {groups}")
        env: dict[str, str] = {}
        for kw, rest in steps:
            if kw == "ENV":
                for pair in shlex.split(rest):
                    key, _, value = pair.partition("=")
                    env[key] = value
        users = [r for kw, r in steps if kw == "USER"]
        copied = {}
        for kw, rest in steps:
            if kw == "COPY":
                *sources, dest = rest.split()
                if len(sources) == 1 and not dest.endswith("/"):
                    copied[dest] = sources[0]
        return cls(
            dockerfile=dockerfile,
            extras=frozenset(e.strip() for e in groups[0].split(",")),
            user=users[-1] if users else "root",
            env=env,
            entrypoint=exec_form([r for kw, r in steps if kw == "ENTRYPOINT"][-1]),
            cmd=exec_form([r for kw, r in steps if kw == "CMD"][-1]),
            copied=copied,
        )

    @property
    def uid(self) -> int:
        name = self.user.split(":")[0]
        return 0 if name == "root" else int(name)


# ---------------------------------------------------------------- compose


def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


def interpolate(value: str) -> str:
    """Compose `${VAR:-default}` with nothing set: the default."""
    return re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", value)


@dataclass(frozen=True)
class Service:
    """One compose service built from our Dockerfiles: what its container runs, and as whom."""

    name: str
    image: Image
    argv: list[str]  # entrypoint + command, as the container runs them
    env: dict[str, str]  # compose's `environment` (it wins over env_file and the image's ENV)
    cap_drop: list[str] = field(default_factory=list)
    cap_add: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, name: str, doc: Mapping[str, Any] | None = None) -> Service:
        spec = (doc or compose())["services"][name]
        dockerfile = (COMPOSE.parent / spec["build"]["context"] / spec["build"]["dockerfile"]).resolve()
        image = Image.read(dockerfile)
        entrypoint = spec.get("entrypoint", image.entrypoint)
        command = spec.get("command", image.cmd)
        env = {k: interpolate(str(v)) for k, v in spec.get("environment", {}).items()}
        return cls(name, image, [*entrypoint, *command], env,
                   list(spec.get("cap_drop", [])), list(spec.get("cap_add", [])))

    @property
    def uid(self) -> int:
        spec = compose()["services"][self.name]
        user = str(spec.get("user", self.image.user))
        return 0 if user.split(":")[0] in ("root", "0") else int(user.split(":")[0])

    def host_argv(self, torchdrill: Path, python: Path) -> list[str]:
        """The container's argv with image paths replaced by this checkout's."""
        argv: list[str] = []
        for word in self.argv:
            if word in CONTAINER_ONLY:
                continue
            if word == "torchdrill":
                argv.append(str(torchdrill))
            elif f"/usr/local/bin/{word}" in self.image.copied:
                argv += [str(python), str(ROOT / self.image.copied[f"/usr/local/bin/{word}"])]
            else:
                argv.append(re.sub(r"^(postgres|redis):", "127.0.0.1:", word))
        return argv

    def setpriv_prefix(self) -> list[str]:
        """The container's capability bounding set, when compose drops all and adds a list."""
        if [c.upper() for c in self.cap_drop] != ["ALL"]:
            return []
        bounding = ",".join(["-all", *(f"+{c.lower()}" for c in self.cap_add)])
        return ["setpriv", "--bounding-set", bounding, "--inh-caps", "-all"]


# ---------------------------------------------------------------- installed distributions


def _name(dist: str) -> str:
    return re.sub(r"[-_.]+", "-", dist).lower()


def distributions_of(extras: Iterable[str]) -> set[str]:
    """Normalised names of the project and everything it pulls in with these extras."""
    seen: set[str] = set()
    todo: list[tuple[str, frozenset[str]]] = [(PROJECT, frozenset(extras))]
    while todo:
        dist, wanted = todo.pop()
        key = _name(dist)
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = md.distribution(dist).requires or []
        except md.PackageNotFoundError:
            continue  # a platform-only dependency (its marker said yes, it is not installed)
        for line in requires:
            req = Requirement(line)
            envs = [{"extra": e} for e in wanted] or [{"extra": ""}]
            if req.marker is None or any(req.marker.evaluate(env) for env in envs):
                todo.append((req.name, frozenset(req.extras)))
    return seen


def modules_outside(extras: Iterable[str]) -> set[str]:
    """Top-level modules installed here that an image with these extras does not have."""
    allowed = distributions_of(extras) | BASE_IMAGE_DISTRIBUTIONS
    blocked: set[str] = set()
    for module, dists in md.packages_distributions().items():
        if module in PROJECT_PACKAGES or module in sys.stdlib_module_names:
            continue
        if not any(_name(d) in allowed for d in dists):
            blocked.add(module)
    return blocked


SITECUSTOMIZE = '''"""Written by tests/support/stack.py: this process sees only the {image} image's distributions."""
import sys

_BLOCKED = frozenset({blocked!r})


class _NotInImage:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in _BLOCKED:
            raise ModuleNotFoundError(
                f"No module named {{name!r}} (not installed in the {image} image)", name=name)
        return None


sys.meta_path.insert(0, _NotInImage())
'''


def write_sitecustomize(directory: Path, image_name: str, extras: Iterable[str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    blocked = sorted(modules_outside(extras))
    (directory / "sitecustomize.py").write_text(SITECUSTOMIZE.format(image=image_name, blocked=blocked))
    return directory


# ---------------------------------------------------------------- processes


@dataclass
class Process:
    """A service started as a host process; its output goes to a log file a failure can show."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def stop(self) -> int | None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(timeout=STOP_GRACE_S)
        return self.popen.returncode


class CannotRunAs(RuntimeError):
    """The process cannot be started as the image's user here; the message says why, in a line."""


def start(name: str, argv: list[str], env: Mapping[str, str], *, cwd: Path, uid: int,
          log_dir: Path) -> Process:
    """Start `argv` as user `uid` with exactly `env`; raises CannotRunAs rather than start it
    as anyone else."""
    argv = [*as_user(uid, log_dir / f"{name}-mounts"), *argv]
    log = log_dir / f"{name}.log"
    handle = log.open("wb")
    popen = subprocess.Popen(argv, cwd=cwd, env=dict(env), stdout=handle, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, start_new_session=True)
    handle.close()
    return Process(name, popen, log)


# an unreadable package directory would import as an empty namespace package: ask for the files
READABLE = "import bot, runner; assert bot.__file__ and runner.__file__, 'bot or runner not readable'"


def as_user(uid: int, stage: Path) -> list[str]:
    """The argv prefix that runs a command as `uid` with this interpreter, checked by running it.

    setpriv switches uid, gid and groups as the container runtime does. Where this interpreter
    lies behind a directory other users cannot enter (pyenv under a 0700 /root, CI's layout as
    this machine's), that directory is masked in a mount namespace of the process's own: a
    0711 tmpfs over it with only the entries on the interpreter's way bound back (`stage`
    holds them meanwhile). Nothing on the host changes; the process sees no more of that
    directory than its image's user would."""
    if uid == os.geteuid():
        return []
    if os.geteuid() != 0:
        raise CannotRunAs(f"uid {uid} needs root to switch to (this is uid {os.geteuid()})")
    prefix = ["setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups"]
    masks = closed_directories(interpreter_paths())
    if masks:
        entries = [directory / entry for directory, names in masks.items() for entry in names]
        held = [(stage / str(n), original) for n, original in enumerate(entries)]
        script = ["set -e"]
        for spare, original in held:
            spare.mkdir(parents=True, exist_ok=True)
            script.append(f"mount --bind {shlex.quote(str(original))} {shlex.quote(str(spare))}")
        for directory in masks:  # outer first
            script.append(f"mount -t tmpfs -o mode=0711 tmpfs {shlex.quote(str(directory))}")
            for spare, original in held:
                if original.parent == directory:
                    make = "mkdir" if original.is_dir() else "touch"
                    script += [f"{make} {shlex.quote(str(original))}",
                               f"mount --bind {shlex.quote(str(spare))} {shlex.quote(str(original))}"]
        script.append('exec "$@"')
        prefix = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                  "\n".join(script), "sh", *prefix]
    check = subprocess.run([*prefix, sys.executable, "-c", READABLE], cwd="/",
                           env={"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "")},
                           capture_output=True, text=True, timeout=60, check=False)
    if check.returncode != 0:
        last = (check.stderr.strip().splitlines() or ["no output"])[-1]
        raise CannotRunAs(f"{sys.executable} cannot run as uid {uid} ({last}): "
                          "a directory on its way is closed to other users")
    return prefix


def interpreter_paths() -> list[Path]:
    """What a process of this interpreter reads: the venv, the base installation, the checkout."""
    return [Path(sys.executable).resolve(), Path(sys.prefix), Path(sys.base_prefix), ROOT]


def closed_directories(paths: Iterable[Path]) -> dict[Path, list[str]]:
    """Directories other users cannot enter -> their entries on the way to `paths`, outer first."""
    closed: dict[Path, set[str]] = {}
    for path in paths:
        real = path.resolve()
        for directory in reversed(real.parents):
            if not directory.stat().st_mode & 0o001:
                closed.setdefault(directory, set()).add(real.relative_to(directory).parts[0])
    return {d: sorted(closed[d]) for d in sorted(closed, key=lambda d: len(d.parts))}


def host_base_env() -> dict[str, str]:
    """What a container has besides the image's and compose's variables: PATH, HOME, LANG."""
    keep = ("PATH", "LANG", "LC_ALL", "TZ")
    return {k: v for k, v in os.environ.items() if k in keep} | {"HOME": "/tmp"}
