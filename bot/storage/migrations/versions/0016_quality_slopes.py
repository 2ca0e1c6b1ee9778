"""question slopes: the refit's 2PL slope beside each stored difficulty (the quality lab reads it)

``torchdrill learning refit`` frees the slope of a question once it has enough answers (2PL);
/bank quality and ``content quality --export`` read it from here ("no signal" below 0.35)
instead of fitting the picks again. Null: Rasch (slope fixed at 1) or never refit.

Revision ID: 0016_quality
Revises: 0015_streaks
Create Date: 2026-12-05 01:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0016_quality'
down_revision = '0015_streaks'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('question_difficulties', sa.Column('slope', sa.Float(), nullable=True))
    op.add_column('question_difficulties', sa.Column('slope_se', sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('question_difficulties') as batch:
        batch.drop_column('slope_se')
        batch.drop_column('slope')
