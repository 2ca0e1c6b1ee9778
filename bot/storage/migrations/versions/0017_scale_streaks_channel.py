"""streaks: an index on the channel, read by every reveal of a daily post

``settle_streaks`` (each daily post's reveal) and the role rewards read a channel's streaks
by ``channel_id`` alone; the primary key leads with ``member_id``, so each read scanned every
streak of every channel: a sweep of N channels' reveals grew as N x (members x N) (issue 36).

Revision ID: 0017_scale
Revises: 0016_quality
Create Date: 2026-12-05 02:05:00
"""

from __future__ import annotations

from alembic import op

revision = '0017_scale'
down_revision = '0016_quality'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_streaks_channel", "streaks", ["channel_id"])


def downgrade() -> None:
    op.drop_index("ix_streaks_channel", table_name="streaks")
