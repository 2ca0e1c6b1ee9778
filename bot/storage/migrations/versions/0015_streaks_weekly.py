"""streaks: weekly-streak mode per channel (answers a week that keep it) and the weekly state

Revision ID: 0015_streaks
Revises: 0014_groupmock
Create Date: 2026-12-05 01:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0015_streaks'
down_revision = '0014_groupmock'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('channels') as batch:
        batch.add_column(sa.Column('streak_per_week', sa.Integer(), nullable=True))
    with op.batch_alter_table('streaks') as batch:
        batch.add_column(sa.Column('week_of', sa.Date(), nullable=True))
        batch.add_column(sa.Column('week_answers', sa.Integer(), server_default='0', nullable=False))
        batch.add_column(sa.Column('week_done', sa.Boolean(), server_default=sa.false(), nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('streaks') as batch:
        batch.drop_column('week_done')
        batch.drop_column('week_answers')
        batch.drop_column('week_of')
    with op.batch_alter_table('channels') as batch:
        batch.drop_column('streak_per_week')
