"""Structured logs that operators can ship anywhere without leaking secrets or user code.

Redaction happens in the handler (filter + formatter), not at call sites, so a secret that
reaches a log line by accident (an exception message quoting a URL, a library logging a
request header) is still caught. Snippets people submit to `/run` are theirs, and may hold
their own secrets: log them as ``extra={"code": source}`` and only a fingerprint is written.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, TextIO
from urllib.parse import urlsplit

from pydantic import BaseModel, SecretStr

REDACTED = "[REDACTED]"
MIN_SECRET_LEN = 6  # shorter registered values would blank out ordinary words

_TOKEN_PATTERNS = [
    # Slack: bot/user/app/config/refresh tokens (xoxb-, xoxp-, xoxa-, xoxe.xoxp-, xapp-...)
    re.compile(r"\bxox[a-z]?(?:\.xox[a-z])?-[A-Za-z0-9-]{8,}"),
    re.compile(r"\bxapp-[A-Za-z0-9-]{8,}"),
    # Discord bot token: base64 user id . timestamp . HMAC (also catches JWT-like strings)
    re.compile(r"\b[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{20,}"),
    # Authorization header values
    re.compile(r"(?<=\bBot )[A-Za-z0-9._~+/=-]{16,}"),
    re.compile(r"(?<=\bBearer )[A-Za-z0-9._~+/=-]{16,}"),
]
# password in a URL's userinfo: scheme://user:PASSWORD@host
_URL_PASSWORD = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*:)(?P<pw>[^\s@/]+)(?=@)")

_secrets: set[str] = set()

# attributes every LogRecord has; anything else on a record came from `extra=`
_RECORD_ATTRS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message", "asctime", "taskName",
}


def register_secret(value: str | SecretStr | None) -> None:
    """Redact this exact value from every log line from now on."""
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    if value and len(value) >= MIN_SECRET_LEN:
        _secrets.add(value)


def register_settings_secrets(settings: BaseModel) -> None:
    """Register every SecretStr field and every password embedded in a URL setting."""
    for name in type(settings).model_fields:
        value = getattr(settings, name, None)
        if isinstance(value, SecretStr):
            register_secret(value)
        elif isinstance(value, str) and "://" in value:
            try:
                register_secret(urlsplit(value).password)
            except ValueError:
                continue


def clear_registered_secrets() -> None:
    _secrets.clear()


def redact(text: str) -> str:
    """The text with registered secrets, token shapes and URL passwords replaced."""
    for secret in sorted(_secrets, key=len, reverse=True):  # longest first: no partial leftovers
        if secret in text:
            text = text.replace(secret, REDACTED)
    for pattern in _TOKEN_PATTERNS:
        text = pattern.sub(REDACTED, text)
    return _URL_PASSWORD.sub(lambda m: m.group("head") + REDACTED, text)


def fingerprint(code: str) -> str:
    """What a log may say about user code: enough to correlate, nothing to read."""
    digest = hashlib.sha256(code.encode("utf-8", "replace")).hexdigest()[:12]
    return f"<code {len(code)} chars sha256:{digest}>"


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, SecretStr):
        return REDACTED
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_clean(v) for v in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    return redact(str(value))


class RedactingFilter(logging.Filter):
    """Rewrites each record in place: message rendered and redacted, `code` fingerprinted."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad %-format must not lose the record
            message = f"{record.msg!r} {record.args!r}"
        record.msg = redact(message)
        record.args = None
        code = record.__dict__.get("code")
        if isinstance(code, str | bytes):
            text = code.decode("utf-8", "replace") if isinstance(code, bytes) else code
            record.code = fingerprint(text)
        for key in _extra_keys(record):
            if key != "code":
                record.__dict__[key] = _clean(record.__dict__[key])
        return True


def _extra_keys(record: logging.LogRecord) -> Iterable[str]:
    return [k for k in record.__dict__ if k not in _RECORD_ATTRS and not k.startswith("_")]


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg, then the record's extra fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "msg": redact(record.getMessage()),
        }
        for key in _extra_keys(record):
            if key not in entry:
                entry[key] = _clean(record.__dict__[key])
        if record.exc_info:
            entry["exc"] = redact(self.formatException(record.exc_info))
        if record.stack_info:
            entry["stack"] = redact(self.formatStack(record.stack_info))
        return json.dumps(entry, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """Readable lines for a terminal, extra fields appended as key=value."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s", "%H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        extras = " ".join(f"{k}={_clean(record.__dict__[k])}" for k in _extra_keys(record))
        return redact(f"{line} {extras}" if extras else line)


_handler: logging.Handler | None = None


def setup_logging(level: str | int = "INFO", json: bool | None = None, *,
                  stream: TextIO | None = None,
                  settings: BaseModel | None = None) -> logging.Handler:
    """Install the one root handler (idempotent); ``json=None`` means JSON unless a TTY."""
    global _handler
    if settings is not None:
        register_settings_secrets(settings)
    stream = stream or sys.stderr
    if json is None:
        json = not (hasattr(stream, "isatty") and stream.isatty())
    root = logging.getLogger()
    if _handler is not None:
        root.removeHandler(_handler)
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    handler.setFormatter(JsonFormatter() if json else TextFormatter())
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
    _handler = handler
    return handler
