"""Tables. Names of constraints are explicit so Alembic batch mode works on SQLite.

Answers carry copies of the channel and workspace they belong to: leaderboards read one table
through covering indexes instead of joining posts at query time. All-time boards read
``channel_scores``/``workspace_scores``, totals credited when a post is revealed (so an open
question never shows on a board); see bot.storage.scores.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# BIGINT ids on PostgreSQL, INTEGER (rowid alias, autoincrement) on SQLite.
Id = BigInteger().with_variant(Integer(), "sqlite")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map = {datetime: DateTime(timezone=True)}


class Workspace(Base):
    """A Discord guild or Slack workspace (or the console)."""

    __tablename__ = "workspaces"
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    platform: Mapped[str] = mapped_column(String(16))
    external_id: Mapped[str] = mapped_column(String(64))
    name: Mapped[str | None] = mapped_column(String(200))
    __table_args__ = (UniqueConstraint("platform", "external_id", name="uq_workspaces_ref"),)


class Member(Base):
    __tablename__ = "members"
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(String(64))
    display_name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime]
    __table_args__ = (UniqueConstraint("workspace_id", "user_id", name="uq_members_ref"),)


class Channel(Base):
    __tablename__ = "channels"
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    channel_id: Mapped[str] = mapped_column(String(64))
    name: Mapped[str | None] = mapped_column(String(200))
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    speed_bonus: Mapped[bool] = mapped_column(Boolean, default=False)
    # streaks count weeks of at least this many answers (None: days; bot.core.domain.scoring)
    streak_per_week: Mapped[int | None] = mapped_column(Integer)
    __table_args__ = (UniqueConstraint("workspace_id", "channel_id", name="uq_channels_ref"),)


class Schedule(Base):
    """When a channel gets its daily question. One row per channel."""

    __tablename__ = "schedules"
    channel_id: Mapped[int] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True
    )
    time_of_day: Mapped[str] = mapped_column(String(5))  # "HH:MM" local
    timezone: Mapped[str] = mapped_column(String(64))
    weekdays: Mapped[str] = mapped_column(String(32))  # "mon,tue,wed,thu,fri"
    topic: Mapped[str | None] = mapped_column(String(32))
    reveal_after_minutes: Mapped[int] = mapped_column(Integer, default=720)
    paused: Mapped[bool] = mapped_column(Boolean, default=False)
    updated_at: Mapped[datetime]
    # Weekly posts in the schedule's timezone, "mon 09:00"; None = off (bot.core.weekly.service)
    challenge_at: Mapped[str | None] = mapped_column(String(16))
    digest_at: Mapped[str | None] = mapped_column(String(16))
    # Which banks the daily question comes from: builtin, community or both (None: both)
    bank_source: Mapped[str | None] = mapped_column(String(16))


class Round(Base):
    """A live channel round: questions posted one by one with a timer."""

    __tablename__ = "rounds"
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    started_by: Mapped[int | None] = mapped_column(ForeignKey("members.id", ondelete="SET NULL"))
    n_questions: Mapped[int] = mapped_column(Integer)
    seconds_per_question: Mapped[int] = mapped_column(Integer)
    topic: Mapped[str | None] = mapped_column(String(32))
    started_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]


class Quiz(Base):
    """A personal quiz or review session: a private sequence of questions for one member."""

    __tablename__ = "quizzes"
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    member_id: Mapped[int] = mapped_column(ForeignKey("members.id", ondelete="CASCADE"))
    mode: Mapped[str] = mapped_column(String(16))  # quiz | review
    question_ids: Mapped[str] = mapped_column(Text)  # comma separated, in order
    position: Mapped[int] = mapped_column(Integer, default=0)
    topic: Mapped[str | None] = mapped_column(String(32))
    started_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]


class Post(Base):
    """A question delivered somewhere. ``choice_order`` fixes the shuffled order for every view."""

    __tablename__ = "posts"
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(16))  # daily | round | quiz | review | now
    question_id: Mapped[str] = mapped_column(String(96))
    choice_order: Mapped[str] = mapped_column(String(64), default="")  # "2,0,3,1"
    channel_id: Mapped[int | None] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    member_id: Mapped[int | None] = mapped_column(ForeignKey("members.id", ondelete="CASCADE"))
    round_id: Mapped[int | None] = mapped_column(ForeignKey("rounds.id", ondelete="CASCADE"))
    quiz_id: Mapped[int | None] = mapped_column(ForeignKey("quizzes.id", ondelete="CASCADE"))
    local_date: Mapped[date | None] = mapped_column(Date)
    opened_at: Mapped[datetime]
    closes_at: Mapped[datetime | None]
    closed_at: Mapped[datetime | None]
    settled: Mapped[bool] = mapped_column(Boolean, default=False)
    platform_ref: Mapped[str | None] = mapped_column(String(256))  # adapter's message reference
    __table_args__ = (
        Index("ix_posts_channel_kind", "channel_id", "kind", "id"),
        Index("ix_posts_open", "closed_at", "closes_at"),
    )


class DailyClaim(Base):
    """Exactly-once daily posts: whoever inserts (channel, local date) first posts."""

    __tablename__ = "daily_claims"
    channel_id: Mapped[int] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True
    )
    local_date: Mapped[date] = mapped_column(Date, primary_key=True)
    claimed_at: Mapped[datetime]
    claimed_by: Mapped[str] = mapped_column(String(64))
    post_id: Mapped[int | None] = mapped_column(ForeignKey("posts.id", ondelete="SET NULL"))
    sent_at: Mapped[datetime | None]


class WeeklyClaim(Base):
    """Exactly-once weekly posts: whoever inserts (channel, kind, week) first posts.

    ``item`` is what the week's post shows (a challenge id); ``closed_at`` is set once its
    thread got the closing summary, so that also happens once."""

    __tablename__ = "weekly_claims"
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(16))
    week_start: Mapped[date] = mapped_column(Date)  # local Monday of the week it belongs to
    claimed_at: Mapped[datetime]
    claimed_by: Mapped[str] = mapped_column(String(64))
    item: Mapped[str | None] = mapped_column(String(64))
    opened_at: Mapped[datetime | None]  # when the post was first built (bounds a channel search)
    sent_at: Mapped[datetime | None]
    platform_ref: Mapped[str | None] = mapped_column(String(128))
    closed_at: Mapped[datetime | None]
    __table_args__ = (UniqueConstraint("channel_id", "kind", "week_start"),)


class Answer(Base):
    __tablename__ = "answers"
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    post_id: Mapped[int] = mapped_column(ForeignKey("posts.id", ondelete="CASCADE"))
    member_id: Mapped[int] = mapped_column(ForeignKey("members.id", ondelete="CASCADE"))
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    channel_id: Mapped[int | None] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    question_id: Mapped[str] = mapped_column(String(96))
    topic: Mapped[str] = mapped_column(String(32))
    choice: Mapped[int] = mapped_column(Integer)  # original choice index, or a 1-4 self-grade
    correct: Mapped[bool] = mapped_column(Boolean)
    points: Mapped[int] = mapped_column(Integer, default=0)
    response_ms: Mapped[int] = mapped_column(Integer, default=0)
    answered_at: Mapped[datetime]
    __table_args__ = (
        UniqueConstraint("post_id", "member_id", name="uq_answers_post_member"),
        Index(
            "ix_answers_channel_time", "channel_id", "answered_at", "member_id", "points", "correct", "post_id"
        ),
        Index(
            "ix_answers_workspace_time", "workspace_id", "answered_at", "member_id", "points", "correct",
            "post_id",
        ),
        Index("ix_answers_member_question", "member_id", "question_id", "answered_at"),
    )


class PostAnswerCount(Base):
    """A channel post's public answer count, split into stripes (member id modulo
    ``hot_statements.COUNT_STRIPES``) and summed when rendered: concurrent clicks on one post
    bump different rows instead of queueing on one row lock (bot.storage.hot_statements)."""

    __tablename__ = "post_answer_counts"
    __table_args__ = {"sqlite_with_rowid": False}  # SQLite: rows clustered by key
    post_id: Mapped[int] = mapped_column(ForeignKey("posts.id", ondelete="CASCADE"), primary_key=True)
    stripe: Mapped[int] = mapped_column(Integer, primary_key=True)
    n: Mapped[int] = mapped_column(Integer, default=0)


class MemberAbility(Base):
    """A member's ability per topic (logits, Gaussian belief): updated online by every answer
    when it is revealed, overwritten by the periodic refit (bot.storage.estimates)."""

    __tablename__ = "member_abilities"
    __table_args__ = {"sqlite_with_rowid": False}  # SQLite: rows clustered by key
    member_id: Mapped[int] = mapped_column(ForeignKey("members.id", ondelete="CASCADE"), primary_key=True)
    topic: Mapped[str] = mapped_column(String(32), primary_key=True)
    mean: Mapped[float] = mapped_column(Float)
    var: Mapped[float] = mapped_column(Float)
    n: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime | None]


class QuestionDifficulty(Base):
    """A question's difficulty as of the last refit (or none: the prior from its label) per bank
    scope: ``scope_id`` 0 for built-in questions (all communities), the workspace id for a
    community's own questions. Online updates since then live in its stripes."""

    __tablename__ = "question_difficulties"
    __table_args__ = {"sqlite_with_rowid": False}  # SQLite: rows clustered by key
    question_id: Mapped[str] = mapped_column(String(96), primary_key=True)
    scope_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    mean: Mapped[float] = mapped_column(Float)
    var: Mapped[float] = mapped_column(Float)
    n: Mapped[int] = mapped_column(Integer, default=0)
    refit_at: Mapped[datetime | None]
    slope: Mapped[float | None] = mapped_column(Float)  # the refit's 2PL slope; None: Rasch
    slope_se: Mapped[float | None] = mapped_column(Float)


class QuestionDifficultyStripe(Base):
    """Online evidence on a difficulty since its refit, one stripe per revealed post modulo 32
    (reveals of one question at once must not queue on one row): mean = base mean - sum(shift),
    precision = 1 / base var + sum(info)."""

    __tablename__ = "question_difficulty_stripes"
    __table_args__ = {"sqlite_with_rowid": False}  # SQLite: rows clustered by key
    question_id: Mapped[str] = mapped_column(String(96), primary_key=True)
    scope_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    stripe: Mapped[int] = mapped_column(Integer, primary_key=True)
    n: Mapped[int] = mapped_column(Integer, default=0)
    info: Mapped[float] = mapped_column(Float, default=0.0)
    shift: Mapped[float] = mapped_column(Float, default=0.0)


class ChannelScore(Base):
    """Revealed points of one member in one channel, all time; see bot.storage.scores."""

    __tablename__ = "channel_scores"
    channel_id: Mapped[int] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True
    )
    member_id: Mapped[int] = mapped_column(
        ForeignKey("members.id", ondelete="CASCADE"), primary_key=True
    )
    points: Mapped[int] = mapped_column(Integer, default=0)
    correct: Mapped[int] = mapped_column(Integer, default=0)
    answered: Mapped[int] = mapped_column(Integer, default=0)
    reached_at: Mapped[datetime | None]  # latest scoring answer: the tie-break


class WorkspaceScore(Base):
    """Revealed points of one member in one workspace, all time."""

    __tablename__ = "workspace_scores"
    workspace_id: Mapped[int] = mapped_column(
        ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True
    )
    member_id: Mapped[int] = mapped_column(
        ForeignKey("members.id", ondelete="CASCADE"), primary_key=True
    )
    points: Mapped[int] = mapped_column(Integer, default=0)
    correct: Mapped[int] = mapped_column(Integer, default=0)
    answered: Mapped[int] = mapped_column(Integer, default=0)
    reached_at: Mapped[datetime | None]


class Streak(Base):
    __tablename__ = "streaks"
    __table_args__ = (Index("ix_streaks_channel", "channel_id"),)  # a reveal reads a channel's
    member_id: Mapped[int] = mapped_column(
        ForeignKey("members.id", ondelete="CASCADE"), primary_key=True
    )
    channel_id: Mapped[int] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True
    )
    current: Mapped[int] = mapped_column(Integer, default=0)
    best: Mapped[int] = mapped_column(Integer, default=0)
    last_post_id: Mapped[int | None] = mapped_column(Integer)
    freezes: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    freezes_used: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # weekly mode: the Monday of the week last settled, its answers, whether it counts already
    week_of: Mapped[date | None] = mapped_column(Date)
    week_answers: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    week_done: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class StudyGroup(Base):
    __tablename__ = "study_groups"
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(64))
    name_key: Mapped[str] = mapped_column(String(64))  # lower-cased for uniqueness
    created_by: Mapped[int | None] = mapped_column(ForeignKey("members.id", ondelete="SET NULL"))
    created_at: Mapped[datetime]
    __table_args__ = (UniqueConstraint("workspace_id", "name_key", name="uq_study_groups_name"),)


class GroupMember(Base):
    __tablename__ = "group_members"
    group_id: Mapped[int] = mapped_column(
        ForeignKey("study_groups.id", ondelete="CASCADE"), primary_key=True
    )
    member_id: Mapped[int] = mapped_column(
        ForeignKey("members.id", ondelete="CASCADE"), primary_key=True
    )
    joined_at: Mapped[datetime]
    __table_args__ = (Index("ix_group_members_member", "member_id"),)


class SrsCard(Base):
    """One FSRS card per member and question; ``state`` is fsrs.Card.to_json()."""

    __tablename__ = "srs_cards"
    member_id: Mapped[int] = mapped_column(
        ForeignKey("members.id", ondelete="CASCADE"), primary_key=True
    )
    question_id: Mapped[str] = mapped_column(String(96), primary_key=True)
    state: Mapped[str] = mapped_column(Text)
    due: Mapped[datetime]
    reps: Mapped[int] = mapped_column(Integer, default=0)
    __table_args__ = (Index("ix_srs_cards_due", "member_id", "due"),)


class Served(Base):
    """Which questions a channel has seen in the current cycle of its pool (no repeats)."""

    __tablename__ = "served"
    channel_id: Mapped[int] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True
    )
    pool: Mapped[str] = mapped_column(String(64), primary_key=True)  # filter key, e.g. "all"
    cycle: Mapped[int] = mapped_column(Integer, primary_key=True)
    question_id: Mapped[str] = mapped_column(String(96), primary_key=True)


class ChallengeProgress(Base):
    """A member's work on one /challenge problem: opened, hints seen, attempts, first solve.

    One row per (member, challenge): the first solve sets ``solved_at`` and ``points`` once,
    so resubmissions never earn more; the board breaks ties by the earlier solve.
    """

    __tablename__ = "challenge_progress"
    member_id: Mapped[int] = mapped_column(
        ForeignKey("members.id", ondelete="CASCADE"), primary_key=True
    )
    challenge_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    topic: Mapped[str] = mapped_column(String(32))
    opened_at: Mapped[datetime]
    hints_shown: Mapped[int] = mapped_column(Integer, default=0)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    solved_at: Mapped[datetime | None]
    points: Mapped[int] = mapped_column(Integer, default=0)
    __table_args__ = (
        Index("ix_challenge_progress_board", "workspace_id", "points", "solved_at"),
        Index("ix_challenge_progress_opened", "member_id", "opened_at"),
    )


class MockSession(Base):
    """A member's timed /mock: its deadline (swept by the scheduler, so it ends on time after
    a restart too), the item on screen and readiness when it began. ``finished_at`` is set
    once, by whoever ends it first (the member, a button after the deadline, the sweep)."""

    __tablename__ = "mock_sessions"
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    member_id: Mapped[int] = mapped_column(ForeignKey("members.id", ondelete="CASCADE"))
    track: Mapped[str] = mapped_column(String(32))
    minutes: Mapped[int] = mapped_column(Integer)
    position: Mapped[int] = mapped_column(Integer, default=0)
    started_at: Mapped[datetime]
    deadline_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]
    ready_before: Mapped[float | None] = mapped_column(Float)
    ready_after: Mapped[float | None] = mapped_column(Float)
    score: Mapped[float | None] = mapped_column(Float)  # share of the items' marks, at the end
    __table_args__ = (
        Index("ix_mock_sessions_member", "member_id", "started_at"),
        Index("ix_mock_sessions_open", "finished_at", "deadline_at"),
    )


class MockItem(Base):
    """One item of a mock: an MCQ or explain-it question (its Post records the answer and the
    card) or a coding challenge; times, the self-graded ticks and the mark earned."""

    __tablename__ = "mock_items"
    mock_id: Mapped[int] = mapped_column(
        ForeignKey("mock_sessions.id", ondelete="CASCADE"), primary_key=True
    )
    idx: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))  # mcq | explain | code
    ref: Mapped[str] = mapped_column(String(96))  # question or challenge id
    topic: Mapped[str] = mapped_column(String(32))
    post_id: Mapped[int | None] = mapped_column(ForeignKey("posts.id", ondelete="SET NULL"))
    shown_at: Mapped[datetime | None]
    answered_at: Mapped[datetime | None]
    answer: Mapped[str | None] = mapped_column(Text)  # an explain-it answer, as written
    ticks: Mapped[str] = mapped_column(String(64), default="")  # ticked key points: "0,2"
    score: Mapped[float | None] = mapped_column(Float)  # 0-1 once marked
    detail: Mapped[str | None] = mapped_column(String(200))  # a verdict's summary


class InterviewDate(Base):
    """A member's interview date (``/mock date``): /stats and mock reports count down to it,
    and their review cards due after it are brought to the day before (migration 0011)."""

    __tablename__ = "interview_dates"
    member_id: Mapped[int] = mapped_column(
        ForeignKey("members.id", ondelete="CASCADE"), primary_key=True
    )
    day: Mapped[date] = mapped_column(Date)
    set_at: Mapped[datetime]


class GroupMock(Base):
    """A mock an admin scheduled for a channel (``/mock schedule``, migration 0014): its items
    are fixed when it is scheduled, so everyone who joins gets the same questions; it closes
    at ``starts_at + minutes``. Its announcement and its board are claims in
    ``group_mock_claims`` (bot.core.posting), each exactly once."""

    __tablename__ = "group_mocks"
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    track: Mapped[str] = mapped_column(String(32))
    minutes: Mapped[int] = mapped_column(Integer)
    starts_at: Mapped[datetime]
    closes_at: Mapped[datetime]
    timezone: Mapped[str] = mapped_column(String(64))  # how its times are shown
    items: Mapped[str] = mapped_column(Text)  # JSON: [[kind, ref, topic], ...]
    created_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime]
    cancelled_at: Mapped[datetime | None]
    __table_args__ = (Index("ix_group_mocks_due", "cancelled_at", "starts_at"),)


class GroupMockClaim(Base):
    """Exactly-once posts of a group mock: ``post`` (the announcement with its Start button)
    and ``board`` (the ranks when it closes, in the announcement's thread)."""

    __tablename__ = "group_mock_claims"
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    group_mock_id: Mapped[int] = mapped_column(ForeignKey("group_mocks.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(16))
    claimed_at: Mapped[datetime]
    claimed_by: Mapped[str] = mapped_column(String(64))
    opened_at: Mapped[datetime | None]  # when the post was first built (bounds a channel search)
    sent_at: Mapped[datetime | None]
    platform_ref: Mapped[str | None] = mapped_column(String(128))
    __table_args__ = (UniqueConstraint("group_mock_id", "kind", name="uq_group_mock_claims_ref"),)


class GroupMockTaker(Base):
    """A member who joined a group mock from its post, and their mock session (one each)."""

    __tablename__ = "group_mock_takers"
    group_mock_id: Mapped[int] = mapped_column(
        ForeignKey("group_mocks.id", ondelete="CASCADE"), primary_key=True)
    member_id: Mapped[int] = mapped_column(ForeignKey("members.id", ondelete="CASCADE"), primary_key=True)
    mock_id: Mapped[int] = mapped_column(ForeignKey("mock_sessions.id", ondelete="CASCADE"))


class CommunityTracks(Base):
    """A community's own /mock tracks: the tracks YAML an admin uploaded with /bank upload."""

    __tablename__ = "community_tracks"
    workspace_id: Mapped[int] = mapped_column(
        ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True)
    source: Mapped[str] = mapped_column(Text)
    uploaded_by: Mapped[str] = mapped_column(String(64))
    updated_at: Mapped[datetime]


class CommunityBank(Base):
    """A question bank a community uploaded from chat (migration 0005).

    ``source`` is the latest uploaded YAML (what /bank export returns); a re-upload bumps
    ``version``. Its questions live in ``community_questions``, kept when a later version drops
    them, so posts made from an older version still render.
    """

    __tablename__ = "community_banks"
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    slug: Mapped[str] = mapped_column(String(96))
    title: Mapped[str] = mapped_column(String(200))
    version: Mapped[int] = mapped_column(Integer, default=1)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    source: Mapped[str] = mapped_column(Text)
    uploaded_by: Mapped[str] = mapped_column(String(64))
    updated_at: Mapped[datetime]
    __table_args__ = (UniqueConstraint("workspace_id", "slug", name="uq_community_banks_ref"),)


class CommunityQuestion(Base):
    """One question of a community bank as served (JSON of the validated question)."""

    __tablename__ = "community_questions"
    bank_id: Mapped[int] = mapped_column(
        ForeignKey("community_banks.id", ondelete="CASCADE"), primary_key=True
    )
    slug: Mapped[str] = mapped_column(String(96), primary_key=True)
    version: Mapped[int] = mapped_column(Integer)
    retired: Mapped[bool] = mapped_column(Boolean, default=False)  # dropped by a later upload
    data: Mapped[str] = mapped_column(Text)


class Suggestion(Base):
    """A member's suggested question waiting for an admin's /bank review (migration 0005)."""

    __tablename__ = "suggestions"
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    author_id: Mapped[str] = mapped_column(String(64))
    author_name: Mapped[str] = mapped_column(String(200))
    data: Mapped[str] = mapped_column(Text)  # the question as JSON, already checked
    status: Mapped[str] = mapped_column(String(16), default="pending")
    reason: Mapped[str | None] = mapped_column(Text)
    bank_id: Mapped[int | None] = mapped_column(ForeignKey("community_banks.id", ondelete="SET NULL"))
    created_at: Mapped[datetime]
    decided_at: Mapped[datetime | None]
    decided_by: Mapped[str | None] = mapped_column(String(64))
    __table_args__ = (Index("ix_suggestions_queue", "workspace_id", "status", "id"),)


class QuestionReport(Base):
    """A member's 🚩 report of a question (migration 0007): one per member and question, a
    second report updates it. Admins see open ones in /bank review beside suggestions."""

    __tablename__ = "question_reports"
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    member_id: Mapped[int] = mapped_column(ForeignKey("members.id", ondelete="CASCADE"))
    question_id: Mapped[str] = mapped_column(String(96))
    post_id: Mapped[int | None] = mapped_column(ForeignKey("posts.id", ondelete="SET NULL"))
    reason: Mapped[str] = mapped_column(String(16))  # wrong-key | ambiguous | outdated | typo
    note: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16), default="open")  # open | retired | dismissed
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    decided_by: Mapped[str | None] = mapped_column(String(64))
    __table_args__ = (
        UniqueConstraint("member_id", "question_id", name="uq_question_reports_member"),
        Index("ix_question_reports_queue", "workspace_id", "status", "id"),
    )


# ---- Slack installations (OAuth installs) -------------------------------------------------
# Read and written by slack-sdk's SQLAlchemy stores (bot.adapters.slack.installs), which bring
# their own Table objects with these names and columns; declared here too so that Alembic
# creates them and the schema check covers them. Token columns are Text: they hold Fernet
# ciphertexts, longer than the plain tokens the library sizes them for. Datetimes are naive
# UTC, as the library writes them.
SlackToken = Text


def _slack_table(name: str, *columns: Column[Any], index: tuple[str, ...]) -> Table:
    return Table(
        name, Base.metadata,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("client_id", String(32), nullable=False),
        Column("app_id", String(32), nullable=False),
        Column("enterprise_id", String(32)),
        Column("enterprise_name", String(200)),
        *columns,
        Column("is_enterprise_install", Boolean, nullable=False, default=False),
        Column("installed_at", DateTime, nullable=False),
        Index(f"{name}_idx", *index),
    )


_BOT_COLUMNS = (
    ("team_id", String(32)), ("team_name", String(200)), ("bot_token", SlackToken()),
    ("bot_id", String(32)), ("bot_user_id", String(32)), ("bot_scopes", String(1000)),
    ("bot_refresh_token", SlackToken()), ("bot_token_expires_at", DateTime()),
)
slack_bots = _slack_table(
    "slack_bots", *(Column(n, t) for n, t in _BOT_COLUMNS),
    index=("client_id", "enterprise_id", "team_id", "installed_at"),
)
slack_installations = _slack_table(
    "slack_installations",
    Column("enterprise_url", String(200)),
    *(Column(n, t) for n, t in _BOT_COLUMNS),
    Column("user_id", String(32), nullable=False),
    Column("user_token", SlackToken()),
    Column("user_scopes", String(1000)),
    Column("user_refresh_token", SlackToken()),
    Column("user_token_expires_at", DateTime),
    Column("incoming_webhook_url", String(200)),
    Column("incoming_webhook_channel", String(200)),
    Column("incoming_webhook_channel_id", String(200)),
    Column("incoming_webhook_configuration_url", String(200)),
    Column("token_type", String(32)),
    index=("client_id", "enterprise_id", "team_id", "user_id", "installed_at"),
)
slack_oauth_states = Table(
    "slack_oauth_states", Base.metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("state", String(200), nullable=False),
    Column("expire_at", DateTime, nullable=False),
)


class RoleReward(Base):
    """An admin's rule: a milestone earns the role (Discord). ``kind`` is ``streak`` (a daily
    streak of ``threshold`` in the channel), ``solved`` (``threshold`` challenges solved in the
    workspace) or ``readiness`` (``threshold`` percent readiness in ``topic``)."""

    __tablename__ = "role_rewards"
    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    threshold: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16), default="streak", server_default="streak")
    topic: Mapped[str | None] = mapped_column(String(32))
    role_id: Mapped[str] = mapped_column(String(32))
    problem: Mapped[str | None] = mapped_column(String(300))  # why the last grant failed
    created_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime]
    __table_args__ = (UniqueConstraint("channel_id", "role_id", name="uq_role_rewards_role"),)


class RoleGrant(Base):
    """A role the bot gave a member for a reward (removed when the streak falls below it)."""

    __tablename__ = "role_grants"
    reward_id: Mapped[int] = mapped_column(
        ForeignKey("role_rewards.id", ondelete="CASCADE"), primary_key=True
    )
    member_id: Mapped[int] = mapped_column(
        ForeignKey("members.id", ondelete="CASCADE"), primary_key=True
    )
    granted_at: Mapped[datetime]
