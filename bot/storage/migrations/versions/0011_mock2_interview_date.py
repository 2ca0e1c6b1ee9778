"""interview dates: a member's /mock date (countdown, reviews brought before it)

Revision ID: 0011_mock2
Revises: 0010_learning
Create Date: 2026-12-04 23:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0011_mock2'
down_revision = '0010_learning'
branch_labels = None
depends_on = None

Id = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    op.create_table('interview_dates',
    sa.Column('member_id', Id, nullable=False),
    sa.Column('day', sa.Date(), nullable=False),
    sa.Column('set_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['member_id'], ['members.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('member_id')
    )


def downgrade() -> None:
    op.drop_table('interview_dates')
