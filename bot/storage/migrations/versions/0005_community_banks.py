"""community banks: community_banks, community_questions, suggestions, schedules.bank_source

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-04 06:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None

Id = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    op.create_table('community_banks',
    sa.Column('id', Id, autoincrement=True, nullable=False),
    sa.Column('workspace_id', Id, nullable=False),
    sa.Column('slug', sa.String(length=96), nullable=False),
    sa.Column('title', sa.String(length=200), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('enabled', sa.Boolean(), nullable=False),
    sa.Column('source', sa.Text(), nullable=False),
    sa.Column('uploaded_by', sa.String(length=64), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_community_banks_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_community_banks')),
    sa.UniqueConstraint('workspace_id', 'slug', name='uq_community_banks_ref')
    )
    op.create_table('community_questions',
    sa.Column('bank_id', Id, nullable=False),
    sa.Column('slug', sa.String(length=96), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('retired', sa.Boolean(), nullable=False),
    sa.Column('data', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['bank_id'], ['community_banks.id'], name=op.f('fk_community_questions_bank_id_community_banks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('bank_id', 'slug', name=op.f('pk_community_questions'))
    )
    op.create_table('suggestions',
    sa.Column('id', Id, autoincrement=True, nullable=False),
    sa.Column('workspace_id', Id, nullable=False),
    sa.Column('author_id', sa.String(length=64), nullable=False),
    sa.Column('author_name', sa.String(length=200), nullable=False),
    sa.Column('data', sa.Text(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('reason', sa.Text(), nullable=True),
    sa.Column('bank_id', Id, nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('decided_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('decided_by', sa.String(length=64), nullable=True),
    sa.ForeignKeyConstraint(['bank_id'], ['community_banks.id'], name=op.f('fk_suggestions_bank_id_community_banks'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_suggestions_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_suggestions'))
    )
    op.create_index('ix_suggestions_queue', 'suggestions', ['workspace_id', 'status', 'id'], unique=False)
    with op.batch_alter_table('schedules', schema=None) as batch_op:
        batch_op.add_column(sa.Column('bank_source', sa.String(length=16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('schedules', schema=None) as batch_op:
        batch_op.drop_column('bank_source')
    op.drop_index('ix_suggestions_queue', table_name='suggestions')
    op.drop_table('suggestions')
    op.drop_table('community_questions')
    op.drop_table('community_banks')
