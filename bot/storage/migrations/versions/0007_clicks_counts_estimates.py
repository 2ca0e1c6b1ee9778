"""clicks: striped answer counts per post; stored ability and difficulty estimates

On SQLite the four tables are WITHOUT ROWID: a click reads a post's or a question's stripes
as one contiguous range of the primary key. ``post_answer_counts`` is filled from the answers already recorded, so open posts keep their
count.

Revision ID: 0007_clicks
Revises: 0006
Create Date: 2026-12-04 22:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0007_clicks'
down_revision = '0006'
branch_labels = None
depends_on = None



def upgrade() -> None:
    op.create_table(
        'post_answer_counts',
        sa.Column('post_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
        sa.Column('stripe', sa.Integer(), nullable=False),
        sa.Column('n', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['post_id'], ['posts.id'], name=op.f('fk_post_answer_counts_post_id_posts'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('post_id', 'stripe', name=op.f('pk_post_answer_counts')),
        sqlite_with_rowid=False,
    )
    op.create_table(
        'member_abilities',
        sa.Column('member_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
        sa.Column('topic', sa.String(length=32), nullable=False),
        sa.Column('mean', sa.Float(), nullable=False),
        sa.Column('var', sa.Float(), nullable=False),
        sa.Column('n', sa.Integer(), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(['member_id'], ['members.id'], name=op.f('fk_member_abilities_member_id_members'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('member_id', 'topic', name=op.f('pk_member_abilities')),
        sqlite_with_rowid=False,
    )
    op.create_table(
        'question_difficulties',
        sa.Column('question_id', sa.String(length=96), nullable=False),
        sa.Column('scope_id', sa.Integer(), nullable=False),
        sa.Column('mean', sa.Float(), nullable=False),
        sa.Column('var', sa.Float(), nullable=False),
        sa.Column('n', sa.Integer(), nullable=False),
        sa.Column('refit_at', sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint('question_id', 'scope_id', name=op.f('pk_question_difficulties')),
        sqlite_with_rowid=False,
    )
    op.create_table(
        'question_difficulty_stripes',
        sa.Column('question_id', sa.String(length=96), nullable=False),
        sa.Column('scope_id', sa.Integer(), nullable=False),
        sa.Column('stripe', sa.Integer(), nullable=False),
        sa.Column('n', sa.Integer(), nullable=False),
        sa.Column('info', sa.Float(), nullable=False),
        sa.Column('shift', sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint('question_id', 'scope_id', 'stripe', name=op.f('pk_question_difficulty_stripes')),
        sqlite_with_rowid=False,
    )
    op.execute(
        "INSERT INTO post_answer_counts (post_id, stripe, n) "
        "SELECT post_id, 0, count(*) FROM answers WHERE channel_id IS NOT NULL GROUP BY post_id"
    )


def downgrade() -> None:
    op.drop_table('question_difficulty_stripes')
    op.drop_table('question_difficulties')
    op.drop_table('member_abilities')
    op.drop_table('post_answer_counts')
