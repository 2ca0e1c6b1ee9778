"""habits: streak freezes (banked and used per member and channel), role rewards and grants

Revision ID: 0008_habits
Revises: 0007_clicks
Create Date: 2026-12-04 22:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0008_habits'
down_revision = '0007_clicks'
branch_labels = None
depends_on = None


ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    with op.batch_alter_table('streaks') as batch:
        batch.add_column(sa.Column('freezes', sa.Integer(), server_default='0', nullable=False))
        batch.add_column(sa.Column('freezes_used', sa.Integer(), server_default='0', nullable=False))
    op.create_table('role_rewards',
    sa.Column('id', ID, autoincrement=True, nullable=False),
    sa.Column('channel_id', ID, nullable=False),
    sa.Column('threshold', sa.Integer(), nullable=False),
    sa.Column('role_id', sa.String(length=32), nullable=False),
    sa.Column('problem', sa.String(length=300), nullable=True),
    sa.Column('created_by', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['channel_id'], ['channels.id'], name=op.f('fk_role_rewards_channel_id_channels'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_role_rewards')),
    sa.UniqueConstraint('channel_id', 'role_id', name='uq_role_rewards_role'),
    )
    op.create_table('role_grants',
    sa.Column('reward_id', ID, nullable=False),
    sa.Column('member_id', ID, nullable=False),
    sa.Column('granted_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['reward_id'], ['role_rewards.id'], name=op.f('fk_role_grants_reward_id_role_rewards'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['member_id'], ['members.id'], name=op.f('fk_role_grants_member_id_members'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('reward_id', 'member_id', name=op.f('pk_role_grants')),
    )


def downgrade() -> None:
    op.drop_table('role_grants')
    op.drop_table('role_rewards')
    with op.batch_alter_table('streaks') as batch:
        batch.drop_column('freezes_used')
        batch.drop_column('freezes')
