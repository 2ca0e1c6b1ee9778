"""Slack for many workspaces: OAuth installs kept in our database, tokens encrypted at rest.

slack-sdk's SQLAlchemy stores do the bookkeeping (tables from our migration 0006); three thin
layers make them fit here:

- ``LockedEngine``: the stores open their own transactions; writes go through
  ``Database.write`` so SQLite's one writer queues them like every other write (a plain
  ``BEGIN`` there would fail at once against another transaction's lock).
- ``EncryptedInstallationStore``: bot, user and refresh tokens are Fernet ciphertexts in the
  database (SLACK_TOKEN_KEY, several keys comma-separated for rotation, newest first); a row the
  keys cannot open reads as "not installed".
- ``SignedStateStore``: the OAuth state carries an HMAC under SLACK_STATE_SECRET, so a state
  this deployment did not issue is refused before any lookup.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.installation_store.models.bot import Bot
from slack_sdk.oauth.installation_store.models.installation import Installation
from slack_sdk.oauth.installation_store.sqlalchemy import AsyncSQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore
from slack_sdk.oauth.state_store.sqlalchemy import AsyncSQLAlchemyOAuthStateStore
from sqlalchemy import CursorResult
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.config import ConfigError, Settings
from bot.storage.db import Database, core_connection

if TYPE_CHECKING:
    from pydantic import SecretStr

log = logging.getLogger(__name__)

STATE_EXPIRATION_S = 600  # an install link works for 10 minutes
TOKEN_FIELDS = ("bot_token", "bot_refresh_token", "user_token", "user_refresh_token")
KEY_HINT = ('generate one with: python -c "from cryptography.fernet import Fernet; '
            'print(Fernet.generate_key().decode())"')

T = TypeVar("T", Bot, Installation)


class InstallConfigError(ConfigError):
    pass


def required(value: SecretStr | str | None, name: str, why: str) -> str:
    text = value if isinstance(value, str) or value is None else value.get_secret_value()
    text = (text or "").strip()
    if not text:
        raise InstallConfigError(f"{name} is not set ({why})")
    return text


class LockedEngine:
    """What the stores use of an AsyncEngine: ``begin()`` writes through Database.write,
    ``connect()`` reads plainly."""

    def __init__(self, db: Database) -> None:
        self.db = db

    @asynccontextmanager
    async def begin(self) -> AsyncIterator[AsyncConnection]:
        async with self.db.write() as session:
            yield await core_connection(session)

    def connect(self) -> Any:
        return self.db.engine.connect()


class TokenCipher:
    def __init__(self, keys: str) -> None:
        try:
            self.fernet = MultiFernet([Fernet(k.strip().encode()) for k in keys.split(",") if k.strip()])
        except ValueError as exc:
            raise InstallConfigError(
                f"SLACK_TOKEN_KEY is not a Fernet key (32 url-safe base64 bytes); {KEY_HINT}"
            ) from exc

    def seal(self, token: str | None) -> str | None:
        return None if token is None else self.fernet.encrypt(token.encode()).decode()

    def open(self, sealed: str | None) -> str | None:
        return None if sealed is None else self.fernet.decrypt(sealed.encode()).decode()


class EncryptedInstallationStore(AsyncInstallationStore):
    """The SQLAlchemy store with every token sealed on the way in and opened on the way out."""

    def __init__(self, inner: AsyncSQLAlchemyInstallationStore, cipher: TokenCipher) -> None:
        self.inner = inner
        self.cipher = cipher

    @property
    def logger(self) -> logging.Logger:
        return log

    def _sealed(self, item: T) -> T:
        sealed = copy.copy(item)
        for name in TOKEN_FIELDS:
            if hasattr(sealed, name):
                setattr(sealed, name, self.cipher.seal(getattr(sealed, name)))
        return sealed

    def _opened(self, item: T | None) -> T | None:
        if item is None:
            return None
        try:
            for name in TOKEN_FIELDS:
                if hasattr(item, name):
                    setattr(item, name, self.cipher.open(getattr(item, name)))
        except InvalidToken:
            log.warning("the stored tokens of team %s do not open with SLACK_TOKEN_KEY; "
                        "treating it as not installed", getattr(item, "team_id", None))
            return None
        return item

    async def async_save(self, installation: Installation) -> None:
        await self.inner.async_save(self._sealed(installation))

    async def async_save_bot(self, bot: Bot) -> None:
        await self.inner.async_save_bot(self._sealed(bot))

    async def async_find_bot(self, *, enterprise_id: str | None, team_id: str | None,
                             is_enterprise_install: bool | None = False) -> Bot | None:
        return self._opened(await self.inner.async_find_bot(
            enterprise_id=enterprise_id, team_id=team_id, is_enterprise_install=is_enterprise_install))

    async def async_find_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        return self._opened(await self.inner.async_find_installation(
            enterprise_id=enterprise_id, team_id=team_id, user_id=user_id,
            is_enterprise_install=is_enterprise_install))

    async def async_delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        await self.inner.async_delete_bot(enterprise_id=enterprise_id, team_id=team_id)

    async def async_delete_installation(self, *, enterprise_id: str | None, team_id: str | None,
                                        user_id: str | None = None) -> None:
        await self.inner.async_delete_installation(enterprise_id=enterprise_id, team_id=team_id,
                                                   user_id=user_id)

    async def bot_token(self, team_id: str) -> str | None:
        """The workspace's bot token, or None when it is not (or no longer) installed."""
        bot = await self.async_find_bot(enterprise_id=None, team_id=team_id)
        return bot.bot_token if bot is not None else None


class SignedStateStore(AsyncOAuthStateStore):
    """``<state>.<hmac>``: the SQL store keeps the state single-use and short-lived."""

    def __init__(self, inner: AsyncSQLAlchemyOAuthStateStore, secret: str) -> None:
        self.inner = inner
        self.secret = secret.encode()

    @property
    def logger(self) -> logging.Logger:
        return log

    def _mac(self, state: str) -> str:
        return hmac.new(self.secret, state.encode(), hashlib.sha256).hexdigest()[:32]

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        """A new state; expired ones (links opened and never finished) are cleared first."""
        table = self.inner.oauth_states
        now = datetime.now(UTC).replace(tzinfo=None)  # naive UTC, as the store writes it
        async with self.inner.engine.begin() as conn:
            await conn.execute(table.delete().where(table.c.expire_at < now))
        state = await self.inner.async_issue()
        return f"{state}.{self._mac(state)}"

    async def async_consume(self, state: str) -> bool:
        raw, _, mac = (state or "").rpartition(".")
        if not raw or not hmac.compare_digest(mac, self._mac(raw)):
            log.info("refused an OAuth state this deployment did not issue")
            return False
        return bool(await self.inner.async_consume(raw))


def installation_store(settings: Settings, db: Database) -> EncryptedInstallationStore:
    client_id = required(settings.slack_client_id, "SLACK_CLIENT_ID", "OAuth installs")
    keys = required(settings.slack_token_key, "SLACK_TOKEN_KEY",
                     f"tokens are stored encrypted; {KEY_HINT}")
    inner = AsyncSQLAlchemyInstallationStore(client_id, LockedEngine(db),  # type: ignore[arg-type]  # duck-typed AsyncEngine
                                             logger=log)
    return EncryptedInstallationStore(inner, TokenCipher(keys))


def state_store(settings: Settings, db: Database) -> SignedStateStore:
    secret = required(settings.slack_state_secret, "SLACK_STATE_SECRET",
                       "signs OAuth install states; the same value on every replica")
    inner = AsyncSQLAlchemyOAuthStateStore(STATE_EXPIRATION_S, LockedEngine(db),  # type: ignore[arg-type]  # duck-typed AsyncEngine
                                           logger=log)
    return SignedStateStore(inner, secret)


async def forget_tokens(db: Database, team_id: str) -> int:
    """Delete every stored install of the workspace (no key needed); returns how many rows."""
    from sqlalchemy import delete

    from bot.storage.models import slack_bots, slack_installations

    removed = 0
    async with db.write() as session:
        for table in (slack_bots, slack_installations):
            result = await session.execute(delete(table).where(table.c.team_id == team_id))
            assert isinstance(result, CursorResult)  # a DELETE's result carries its rowcount
            removed += int(result.rowcount or 0)
    return removed
