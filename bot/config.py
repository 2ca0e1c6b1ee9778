"""Settings from environment variables or a `.env` file (see `.env.example`)."""

from __future__ import annotations

import re
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict, SettingsError

from bot.core.content.bank import DEFAULT_CONTENT_DIR


class ConfigError(ValueError):
    """A setting is missing or invalid; the message names the variable to fix."""


class SlackMode(StrEnum):
    SOCKET = "socket"
    HTTP = "http"


class RunnerBackend(StrEnum):
    EMBEDDED = "embedded"
    REDIS = "redis"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    database_url: str = Field(
        default="sqlite+aiosqlite:///data/torchdrill.db",
        description="SQLAlchemy async URL; sqlite+aiosqlite:///path or postgresql+asyncpg://...",
    )
    content_dir: Path = DEFAULT_CONTENT_DIR
    extra_banks: list[Path] = Field(default_factory=list, description="additional bank files")
    log_level: str = "INFO"
    log_json: bool | None = Field(default=None, description="JSON logs; default: when not a TTY")

    discord_token: SecretStr | None = None
    discord_api_base_url: str = "https://discord.com/api/v10"
    discord_gateway_url: str | None = Field(
        default=None, description="override the gateway URL (default: ask Discord)"
    )
    discord_shard_count: int | None = None
    discord_shard_ids: list[int] | None = None

    slack_bot_token: SecretStr | None = None
    slack_app_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    slack_mode: SlackMode = SlackMode.SOCKET
    slack_api_base_url: str = "https://slack.com/api/"
    slack_admin_user_ids: list[str] = Field(default_factory=list)
    # OAuth installs (many workspaces, HTTP mode): all three set, and no SLACK_BOT_TOKEN
    slack_client_id: str | None = None
    slack_client_secret: SecretStr | None = None
    slack_state_secret: SecretStr | None = Field(
        default=None, description="signs OAuth install states; the same on every replica"
    )
    slack_token_key: SecretStr | None = Field(
        default=None, description="Fernet key(s), comma-separated (newest first), for tokens at rest"
    )
    slack_redirect_uri: str | None = Field(
        default=None, description="https://<host>/slack/oauth_redirect, when the app lists several"
    )

    practice_target_band: str = Field(
        default="70-85", description="predicted success, in percent, that /quiz and /review aim at"
    )

    http_host: str = "0.0.0.0"
    http_port: int = 8080

    # The runner reads its own RUNNER_* settings (runner/settings.py); the bot needs only these.
    runner_backend: RunnerBackend = RunnerBackend.EMBEDDED
    redis_url: str = "redis://127.0.0.1:6379/0"
    runner_max_code_bytes: int = Field(default=20_000, description="same variable as the runner's")

    @field_validator("log_level")
    @classmethod
    def _known_level(cls, value: str) -> str:
        level = value.strip().upper()
        if level not in LOG_LEVELS:
            raise ValueError(f"use one of {', '.join(LOG_LEVELS)}")
        return level

    @field_validator("database_url")
    @classmethod
    def _async_url(cls, value: str) -> str:
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError

        try:
            driver = make_url(value).drivername
        except ArgumentError:
            driver = ""
        if driver not in DATABASE_DRIVERS:
            raise ValueError("use sqlite+aiosqlite:///path/to/file.db or "
                             "postgresql+asyncpg://user:password@host/db")
        return value

    @field_validator("practice_target_band")
    @classmethod
    def _percent_band(cls, value: str) -> str:
        parse_band(value)
        return value

    @property
    def practice_band(self) -> tuple[float, float]:
        return parse_band(self.practice_target_band)

    @property
    def slack_oauth(self) -> bool:
        """Slack for many workspaces: installs through OAuth instead of one bot token."""
        return bool(self.slack_client_id)

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")


def parse_band(value: str) -> tuple[float, float]:
    """``"70-85"`` -> (0.70, 0.85); both ends whole percents, 0 < low < high < 100."""
    found = re.fullmatch(r"\s*(\d{1,2})\s*-\s*(\d{1,2})\s*", value)
    if not found or not 0 < int(found[1]) < int(found[2]) < 100:
        raise ValueError("use two percents low-high with 0 < low < high < 100, e.g. 70-85")
    return int(found[1]) / 100, int(found[2]) / 100


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
DATABASE_DRIVERS = ("sqlite+aiosqlite", "postgresql+asyncpg")
EXAMPLES = {  # what a list setting looks like, for the one line that says it is wrong
    "EXTRA_BANKS": '["banks/ours.yaml"]', "SLACK_ADMIN_USER_IDS": '["U0123ABC"]',
    "DISCORD_SHARD_IDS": "[0, 1]", "RUNNER_GPUS": "[0, 1]",
}
_FIELD = re.compile(r'field "([a-z0-9_]+)"')
S = TypeVar("S", bound=BaseSettings)


def _env_name(settings: type[BaseSettings], field: str) -> str:
    prefix = str(settings.model_config.get("env_prefix") or "")
    return f"{prefix}{field}".upper()


def load(settings: type[S], **values: Any) -> S:
    """``settings`` from the environment and ``.env``; a bad value is one ConfigError line
    naming the variable (``RUNNER_TIMEOUT_S: ... (got 'abc')``), never a traceback."""
    try:
        return settings(**values)
    except SettingsError as exc:  # a list or dict that is not JSON
        found = _FIELD.search(str(exc))
        name = _env_name(settings, found.group(1)) if found else "a setting"
        example = EXAMPLES.get(name)
        hint = f", e.g. {name}='{example}'" if example else ""
        raise ConfigError(f"{name}: not valid JSON{hint}") from None
    except ValidationError as exc:
        error = exc.errors()[0]
        name = _env_name(settings, str(error["loc"][0])) if error["loc"] else "a setting"
        message = str(error["msg"]).removeprefix("Value error, ")
        example = EXAMPLES.get(name)
        hint = f", e.g. {name}='{example}'" if example else ""
        raise ConfigError(f"{name}: {message} (got {error.get('input')!r}){hint}") from None


@lru_cache
def get_settings() -> Settings:
    return load(Settings)
