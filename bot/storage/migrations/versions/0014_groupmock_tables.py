"""group mocks and community tracks: group_mocks, group_mock_claims, group_mock_takers,
community_tracks (/mock schedule; /bank upload of a tracks file)

Revision ID: 0014_groupmock
Revises: 0013_estimates
Create Date: 2026-12-05 01:45:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0014_groupmock'
down_revision = '0013_estimates'
branch_labels = None
depends_on = None

Id = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')
When = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table('group_mocks',
    sa.Column('id', Id, autoincrement=True, nullable=False),
    sa.Column('channel_id', Id, nullable=False),
    sa.Column('track', sa.String(length=32), nullable=False),
    sa.Column('minutes', sa.Integer(), nullable=False),
    sa.Column('starts_at', When, nullable=False),
    sa.Column('closes_at', When, nullable=False),
    sa.Column('timezone', sa.String(length=64), nullable=False),
    sa.Column('items', sa.Text(), nullable=False),
    sa.Column('created_by', sa.String(length=64), nullable=False),
    sa.Column('created_at', When, nullable=False),
    sa.Column('cancelled_at', When, nullable=True),
    sa.ForeignKeyConstraint(['channel_id'], ['channels.id'], name=op.f('fk_group_mocks_channel_id_channels'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_group_mocks'))
    )
    op.create_index('ix_group_mocks_due', 'group_mocks', ['cancelled_at', 'starts_at'], unique=False)
    op.create_table('group_mock_claims',
    sa.Column('id', Id, autoincrement=True, nullable=False),
    sa.Column('group_mock_id', Id, nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('claimed_at', When, nullable=False),
    sa.Column('claimed_by', sa.String(length=64), nullable=False),
    sa.Column('opened_at', When, nullable=True),
    sa.Column('sent_at', When, nullable=True),
    sa.Column('platform_ref', sa.String(length=128), nullable=True),
    sa.ForeignKeyConstraint(['group_mock_id'], ['group_mocks.id'], name=op.f('fk_group_mock_claims_group_mock_id_group_mocks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_group_mock_claims')),
    sa.UniqueConstraint('group_mock_id', 'kind', name='uq_group_mock_claims_ref')
    )
    op.create_table('group_mock_takers',
    sa.Column('group_mock_id', Id, nullable=False),
    sa.Column('member_id', Id, nullable=False),
    sa.Column('mock_id', Id, nullable=False),
    sa.ForeignKeyConstraint(['group_mock_id'], ['group_mocks.id'], name=op.f('fk_group_mock_takers_group_mock_id_group_mocks'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['member_id'], ['members.id'], name=op.f('fk_group_mock_takers_member_id_members'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['mock_id'], ['mock_sessions.id'], name=op.f('fk_group_mock_takers_mock_id_mock_sessions'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('group_mock_id', 'member_id', name=op.f('pk_group_mock_takers'))
    )
    op.create_table('community_tracks',
    sa.Column('workspace_id', Id, nullable=False),
    sa.Column('source', sa.Text(), nullable=False),
    sa.Column('uploaded_by', sa.String(length=64), nullable=False),
    sa.Column('updated_at', When, nullable=False),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], name=op.f('fk_community_tracks_workspace_id_workspaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('workspace_id', name=op.f('pk_community_tracks'))
    )


def downgrade() -> None:
    op.drop_table('community_tracks')
    op.drop_table('group_mock_takers')
    op.drop_table('group_mock_claims')
    op.drop_index('ix_group_mocks_due', table_name='group_mocks')
    op.drop_table('group_mocks')
