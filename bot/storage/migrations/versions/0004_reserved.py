"""weekly posts (digest and challenge post): reserved for the weekly-posts work

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-04 02:50:00
"""

from __future__ import annotations

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
