"""habits2: role rewards for more milestones than streaks (challenges solved, topic readiness)

Revision ID: 0012_habits2
Revises: 0011_mock2
Create Date: 2026-12-04 23:35:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0012_habits2'
down_revision = '0011_mock2'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('role_rewards') as batch:
        batch.add_column(sa.Column('kind', sa.String(length=16), server_default='streak', nullable=False))
        batch.add_column(sa.Column('topic', sa.String(length=32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('role_rewards') as batch:
        batch.drop_column('topic')
        batch.drop_column('kind')
