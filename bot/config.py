"""Settings from environment variables or a `.env` file (see `.env.example`)."""

from __future__ import annotations

from enum import StrEnum
from functools import lru_cache
from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

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

    http_host: str = "0.0.0.0"
    http_port: int = 8080

    # The runner reads its own RUNNER_* settings (runner/settings.py); the bot needs only these.
    runner_backend: RunnerBackend = RunnerBackend.EMBEDDED
    redis_url: str = "redis://127.0.0.1:6379/0"
    runner_max_code_bytes: int = Field(default=20_000, description="same variable as the runner's")

    @property
    def slack_oauth(self) -> bool:
        """Slack for many workspaces: installs through OAuth instead of one bot token."""
        return bool(self.slack_client_id)

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")


@lru_cache
def get_settings() -> Settings:
    return Settings()
