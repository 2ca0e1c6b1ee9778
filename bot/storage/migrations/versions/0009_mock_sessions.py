"""mock interviews: mock_sessions and mock_items (/mock)

Revision ID: 0009_mock
Revises: 0008_habits
Create Date: 2026-12-04 22:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0009_mock'
down_revision = '0008_habits'
branch_labels = None
depends_on = None

Id = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    op.create_table('mock_sessions',
    sa.Column('id', Id, autoincrement=True, nullable=False),
    sa.Column('member_id', Id, nullable=False),
    sa.Column('track', sa.String(length=32), nullable=False),
    sa.Column('minutes', sa.Integer(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('deadline_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('ready_before', sa.Float(), nullable=True),
    sa.Column('ready_after', sa.Float(), nullable=True),
    sa.Column('score', sa.Float(), nullable=True),
    sa.ForeignKeyConstraint(['member_id'], ['members.id'], name=op.f('fk_mock_sessions_member_id_members'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_mock_sessions'))
    )
    op.create_index('ix_mock_sessions_member', 'mock_sessions', ['member_id', 'started_at'], unique=False)
    op.create_index('ix_mock_sessions_open', 'mock_sessions', ['finished_at', 'deadline_at'], unique=False)
    op.create_table('mock_items',
    sa.Column('mock_id', Id, nullable=False),
    sa.Column('idx', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('ref', sa.String(length=96), nullable=False),
    sa.Column('topic', sa.String(length=32), nullable=False),
    sa.Column('post_id', Id, nullable=True),
    sa.Column('shown_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('answered_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('answer', sa.Text(), nullable=True),
    sa.Column('ticks', sa.String(length=64), nullable=False),
    sa.Column('score', sa.Float(), nullable=True),
    sa.Column('detail', sa.String(length=200), nullable=True),
    sa.ForeignKeyConstraint(['mock_id'], ['mock_sessions.id'], name=op.f('fk_mock_items_mock_id_mock_sessions'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['post_id'], ['posts.id'], name=op.f('fk_mock_items_post_id_posts'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('mock_id', 'idx', name=op.f('pk_mock_items'))
    )


def downgrade() -> None:
    op.drop_table('mock_items')
    op.drop_index('ix_mock_sessions_open', table_name='mock_sessions')
    op.drop_index('ix_mock_sessions_member', table_name='mock_sessions')
    op.drop_table('mock_sessions')
