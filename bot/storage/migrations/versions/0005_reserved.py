"""Slack OAuth installations: reserved for the Slack multi-workspace work

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-04 02:50:00
"""

from __future__ import annotations

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
