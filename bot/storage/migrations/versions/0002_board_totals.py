"""board totals credited at reveal; post_id in the answers' covering indexes

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-03 19:30:00

Boards skip answers of open posts, so the covering indexes carry post_id; the all-time
totals are backfilled from the answers of posts already revealed.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None

Id = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')
OLD = ['answered_at', 'member_id', 'points', 'correct']
NEW = [*OLD, 'post_id']


def _totals(table: str, key: str, referred: str) -> None:
    op.create_table(table,
    sa.Column(key, Id, nullable=False),
    sa.Column('member_id', Id, nullable=False),
    sa.Column('points', sa.Integer(), nullable=False),
    sa.Column('correct', sa.Integer(), nullable=False),
    sa.Column('answered', sa.Integer(), nullable=False),
    sa.Column('reached_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint([key], [f'{referred}.id'], name=op.f(f'fk_{table}_{key}_{referred}'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['member_id'], ['members.id'], name=op.f(f'fk_{table}_member_id_members'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint(key, 'member_id', name=op.f(f'pk_{table}'))
    )
    op.execute(
        f"INSERT INTO {table} ({key}, member_id, points, correct, answered, reached_at) "
        f"SELECT a.{key}, a.member_id, SUM(a.points), SUM(CASE WHEN a.correct THEN 1 ELSE 0 END), "
        f"COUNT(*), MAX(CASE WHEN a.points > 0 THEN a.answered_at END) "
        f"FROM answers a JOIN posts p ON p.id = a.post_id "
        f"WHERE a.channel_id IS NOT NULL AND p.closed_at IS NOT NULL GROUP BY a.{key}, a.member_id"
    )


def _indexes(columns: list[str]) -> None:
    with op.batch_alter_table('answers', schema=None) as batch_op:
        batch_op.drop_index('ix_answers_channel_time')
        batch_op.drop_index('ix_answers_workspace_time')
        batch_op.create_index('ix_answers_channel_time', ['channel_id', *columns], unique=False)
        batch_op.create_index('ix_answers_workspace_time', ['workspace_id', *columns], unique=False)


def upgrade() -> None:
    _totals('channel_scores', 'channel_id', 'channels')
    _totals('workspace_scores', 'workspace_id', 'workspaces')
    _indexes(NEW)


def downgrade() -> None:
    _indexes(OLD)
    op.drop_table('workspace_scores')
    op.drop_table('channel_scores')
