"""challenge_progress: /challenge opens, hints, attempts and first solves

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-03 20:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None

Id = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    op.create_table('challenge_progress',
    sa.Column('member_id', Id, nullable=False),
    sa.Column('challenge_id', sa.String(length=64), nullable=False),
    sa.Column('workspace_id', Id, nullable=False),
    sa.Column('topic', sa.String(length=32), nullable=False),
    sa.Column('opened_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('hints_shown', sa.Integer(), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('solved_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('points', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['member_id'], ['members.id'], name=op.f('fk_challenge_progress_member_id_members'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_challenge_progress_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('member_id', 'challenge_id', name=op.f('pk_challenge_progress'))
    )
    with op.batch_alter_table('challenge_progress', schema=None) as batch_op:
        batch_op.create_index('ix_challenge_progress_board', ['workspace_id', 'points', 'solved_at'], unique=False)
        batch_op.create_index('ix_challenge_progress_opened', ['member_id', 'opened_at'], unique=False)


def downgrade() -> None:
    op.drop_table('challenge_progress')
