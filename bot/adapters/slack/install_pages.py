"""The pages a person sees at the end of "Add to Slack": every outcome in plain words.

A failed install never stores anything and never answers 500: a bad, used or expired state,
a cancelled consent screen, a code Slack refuses or a storage failure each get a page saying
what happened and what to do next.
"""

from __future__ import annotations

import html

from bot.adapters.slack.handlers import HELP_COMMAND

INSTALL_PATH = "/slack/install"
REDIRECT_PATH = "/slack/oauth_redirect"

TITLE_OK = "torchdrill is installed"
TITLE_FAILED = "torchdrill was not installed"
START_AGAIN = f'<a href="{INSTALL_PATH}">Start the install again</a>.'

# bolt's failure reasons → (HTTP status, what the person reads)
FAILURES: dict[str, tuple[int, str]] = {
    "invalid_state": (400, "This install link has expired or was already used."),
    "invalid_browser": (400, "This install was started in another browser, or its link has expired."),
    "access_denied": (200, "The install was cancelled on Slack's consent screen."),
    "missing_code": (400, "Slack sent no install code."),
    "invalid_code": (400, "Slack did not accept the install code (it may have been used already)."),
    "storage_error": (503, "The install could not be saved. Nothing was installed; please try again."),
}
UNKNOWN_FAILURE = (400, "Slack reported a problem with the install.")

# what a member of a workspace without an install (removed, revoked) reads after a command
NOT_INSTALLED = ("torchdrill is not installed in this workspace any more. "
                 "A workspace admin can add it again with \"Add to Slack\".")


def page(title: str, *paragraphs: str) -> str:
    """A minimal HTML page; ``paragraphs`` are trusted HTML fragments, the title is escaped."""
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"</head><body><h1>{html.escape(title)}</h1>{body}</body></html>")


def installed_page(team_name: str | None) -> str:
    where = html.escape(team_name) if team_name else "your workspace"
    return page(
        TITLE_OK,
        f"torchdrill is now in {where}.",
        "Next: invite it to a channel with <code>/invite @torchdrill</code>, then a workspace "
        "admin sets the daily question there with <code>/daily schedule</code>.",
        f"<code>/{HELP_COMMAND}</code> lists every command. You can close this page.",
    )


def failed_page(reason: str) -> tuple[int, str]:
    status, text = FAILURES.get(reason, UNKNOWN_FAILURE)
    return status, page(TITLE_FAILED, html.escape(text), START_AGAIN)
