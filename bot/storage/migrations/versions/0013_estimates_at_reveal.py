"""estimates move at the reveal, not the click: drop the online evidence the clicks wrote

Before this revision each click moved the stored estimates; now each answer moves them when it
is revealed (bot.storage.estimates.apply_revealed). A post answered before the upgrade and
revealed after it would count twice, and the estimates held unrevealed answers, so the online
evidence (member abilities, difficulty stripes) is dropped: it is derived data. Refit bases
(question_difficulties) stay. Run ``torchdrill learning refit`` after upgrading to rebuild
abilities and difficulties from every revealed answer.

Revision ID: 0013_estimates
Revises: 0012_habits2
Create Date: 2026-12-04 23:50:00
"""

from __future__ import annotations

from alembic import op

revision = '0013_estimates'
down_revision = '0012_habits2'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("DELETE FROM question_difficulty_stripes")
    op.execute("DELETE FROM member_abilities")


def downgrade() -> None:
    """Nothing to restore: the dropped rows were derived (a refit rebuilds them)."""
