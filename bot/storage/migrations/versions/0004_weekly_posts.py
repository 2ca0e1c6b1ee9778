"""weekly posts: weekly_claims, and the weekly challenge / digest times on schedules

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-04 04:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None

Id = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    op.create_table('weekly_claims',
    sa.Column('id', Id, autoincrement=True, nullable=False),
    sa.Column('channel_id', Id, nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('week_start', sa.Date(), nullable=False),
    sa.Column('claimed_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('claimed_by', sa.String(length=64), nullable=False),
    sa.Column('item', sa.String(length=64), nullable=True),
    sa.Column('opened_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('sent_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('platform_ref', sa.String(length=128), nullable=True),
    sa.Column('closed_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['channel_id'], ['channels.id'], name=op.f('fk_weekly_claims_channel_id_channels'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_weekly_claims')),
    sa.UniqueConstraint('channel_id', 'kind', 'week_start', name=op.f('uq_weekly_claims_channel_id'))
    )
    with op.batch_alter_table('schedules', schema=None) as batch_op:
        batch_op.add_column(sa.Column('challenge_at', sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column('digest_at', sa.String(length=16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('schedules', schema=None) as batch_op:
        batch_op.drop_column('digest_at')
        batch_op.drop_column('challenge_at')
    op.drop_table('weekly_claims')
