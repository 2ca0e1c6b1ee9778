"""question reports: a member's 🚩 on a question, queued for admins beside suggestions

Revision ID: 0010_learning
Revises: 0009_mock
Create Date: 2026-12-04 22:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0010_learning'
down_revision = '0009_mock'
branch_labels = None
depends_on = None

Id = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    op.create_table('question_reports',
    sa.Column('id', Id, autoincrement=True, nullable=False),
    sa.Column('workspace_id', Id, nullable=False),
    sa.Column('member_id', Id, nullable=False),
    sa.Column('question_id', sa.String(length=96), nullable=False),
    sa.Column('post_id', Id, nullable=True),
    sa.Column('reason', sa.String(length=16), nullable=False),
    sa.Column('note', sa.Text(), nullable=True),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('decided_by', sa.String(length=64), nullable=True),
    sa.ForeignKeyConstraint(['member_id'], ['members.id'], name=op.f('fk_question_reports_member_id_members'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['post_id'], ['posts.id'], name=op.f('fk_question_reports_post_id_posts'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_question_reports_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_question_reports')),
    sa.UniqueConstraint('member_id', 'question_id', name='uq_question_reports_member')
    )
    op.create_index('ix_question_reports_queue', 'question_reports', ['workspace_id', 'status', 'id'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_question_reports_queue', table_name='question_reports')
    op.drop_table('question_reports')
