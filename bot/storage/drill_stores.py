"""The drill's stores, built once for the wiring root (``bot.app.build_drill``): every storage
implementation the drill and the areas it builds use, as ``bot.core.drill.ports.DrillStores``."""

from __future__ import annotations

from bot.core.answers.ports import AnswerStores
from bot.core.community_banks.shelf import Shelf
from bot.core.content.bank import Library
from bot.core.domain.clock import Clock
from bot.core.drill.ports import DrillStores
from bot.storage.clicks import StoredClicks
from bot.storage.community import StoredCommunityRows
from bot.storage.db import Database
from bot.storage.drill_posts import StoredDrillPosts
from bot.storage.groups import StoredGroups
from bot.storage.identity import StoredIdentities
from bot.storage.learning_picks import StoredQualityData
from bot.storage.mocks import StoredMocks
from bot.storage.posts import StoredPosts
from bot.storage.progress_queries import StoredProgressReads
from bot.storage.question_reports import StoredReports
from bot.storage.quizzes import StoredQuizzes
from bot.storage.role_grants import StoredRoleGrants
from bot.storage.rounds import StoredRounds
from bot.storage.served import StoredServed
from bot.storage.srs_cards import StoredCards


def drill_stores(db: Database, library: Library, clock: Clock) -> DrillStores[Database]:
    """One of each store over ``db``; one community shelf, which /mock's store reads too, and
    one set of the click path's stores, which /mock records its answers through."""
    shelf = Shelf(library, StoredCommunityRows())
    posts = StoredPosts()
    answers = AnswerStores(StoredClicks(), StoredCards(), StoredQuizzes(posts), StoredProgressReads())
    return DrillStores(
        db=db, shelf=shelf, identities=StoredIdentities(clock), posts=posts,
        channel_posts=StoredDrillPosts(db), role_grants=StoredRoleGrants(db),
        served=StoredServed(), progress=answers.progress, groups=StoredGroups(clock),
        cards=answers.cards, quizzes=answers.quizzes, answers=answers, rounds=StoredRounds(db, clock),
        mocks=StoredMocks(db, library, clock, shelf, answers), reports=StoredReports(db, clock),
        quality_data=StoredQualityData(db),
    )
