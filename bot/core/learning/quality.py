"""The question-quality lab: what the picks say about each question, and flags for bad ones.

Per question: share right, discrimination (point-biserial correlation between being right
and the member's fitted ability in the topic; the 2PL slope once fitted), the pick rate of each
choice, the median time to answer, calibrated against labelled difficulty. Flags:

- *likely wrong key*: members in the top third of ability pick one distractor more often than
  the key, and picking that distractor correlates positively with ability (a hard question's
  popular distractor is popular with the weak, not the strong).
- *dead distractor*: a distractor drawing under ``dead_share`` of the wrong answers, judged
  only once there are ``min_wrong_for_dead`` wrong answers (on an easy question a distractor
  may simply never have had a chance).
- *mislabelled difficulty*: the calibrated difficulty is nearest another label's typical
  difficulty and, with 95% confidence, more than ``mislabel_logits`` from its own label's
  (typical: the median fitted difficulty of the questions carrying that label).
- *no signal*: the point-biserial is below ``no_signal_correlation`` (under the 0.2 usually
  called marginal, leaving room for sampling noise of about 1/sqrt(answers)), or the fitted
  2PL slope is below ``no_signal_slope`` (Baker's "very low" discrimination).

A likely wrong key explains negative discrimination and confounds every other statistic of the
question (the true answer counts as a wrong one), so it suppresses the other flags; no signal
likewise suppresses mislabelled difficulty (without discrimination, difficulty is undefined).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from bot.core.learning.irt import Calibration, ItemEstimate
from bot.core.learning.picks import ItemInfo, Pick
from bot.core.learning.readiness import level_reference


class Flag(StrEnum):
    WRONG_KEY = "likely wrong key"
    DEAD_DISTRACTOR = "dead distractor"
    MISLABELLED = "mislabelled difficulty"
    NO_SIGNAL = "no signal"


@dataclass(frozen=True, slots=True)
class QualityRules:
    min_answers: int = 30  # fewer: the numbers are shown, no flag is raised
    groups: int = 3  # strong = the top 1/groups of respondents by ability (n // groups of them)
    min_group: int = 10
    key_like_correlation: float = 0.2
    dead_share: float = 0.03
    min_wrong_for_dead: int = 30
    no_signal_slope: float = 0.35
    no_signal_correlation: float = 0.15
    mislabel_logits: float = 1.0


@dataclass(frozen=True, slots=True)
class QuestionQuality:
    question: str
    bank: str
    topic: str
    answers: int
    share_right: float
    discrimination: float | None  # point-biserial; None without variation
    slope: float | None  # 2PL slope, None while Rasch
    pick_rates: tuple[float, ...]  # per original choice index
    key: int
    median_ms: int | None
    labelled: int
    calibrated: float | None  # fitted difficulty (logits)
    calibrated_level: int | None
    flags: tuple[Flag, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class QuestionStats:
    """What the flags need of a question's picks, as sums: one pass (or one SQL aggregate)
    over its answers, each carrying the member's ability in the topic (``theta``).

    ``strong`` counts the picks of each choice among the strongest ``strong_size`` respondents
    (the top ``1 / QualityRules.groups`` by ability)."""

    answers: int
    right: int
    counts: tuple[int, ...]  # picks per original choice index
    theta_by_choice: tuple[float, ...]  # sum of the pickers' abilities per choice
    strong: tuple[int, ...]  # picks per choice among the strongest
    strong_size: int
    sum_theta: float
    sum_theta2: float
    sum_right_theta: float  # sum of the abilities of those who were right
    median_ms: int | None = None

    @classmethod
    def empty(cls, n_choices: int) -> QuestionStats:
        return cls(0, 0, (0,) * n_choices, (0.0,) * n_choices, (0,) * n_choices, 0, 0.0, 0.0, 0.0)


def _letter(index: int) -> str:
    return chr(ord("A") + index)


def _correlation_of_sums(n: int, sx: float, sxx: float, sy: float, sxy: float) -> float | None:
    """Pearson correlation between abilities x and a 0/1 outcome y (``sy`` ones), from sums;
    None without variation on either side (as ``statistics.correlation`` refuses it)."""
    if n < 3 or sy <= 0 or sy >= n:
        return None
    mean_x = sx / n
    var_x = sxx / n - mean_x ** 2
    if var_x <= 1e-12 * (1.0 + mean_x ** 2):
        return None
    p = sy / n
    cov = sxy / n - mean_x * p
    return max(-1.0, min(1.0, cov / math.sqrt(var_x * p * (1.0 - p))))


def _nearest_level(value: float, references: dict[int, float]) -> int:
    return min(references, key=lambda level: abs(value - references[level]))


def stats_of(item: ItemInfo, picks: Sequence[Pick], abilities: Sequence[float], groups: int) -> QuestionStats:
    """The sums of ``picks`` (one question's), ``abilities[k]`` being the k-th picker's."""
    n = len(picks)
    counts = [0] * item.n_choices
    theta = [0.0] * item.n_choices
    strong = [0] * item.n_choices
    size = n // groups
    strongest = set(sorted(range(n), key=abilities.__getitem__)[n - size:]) if size else set()
    for k, pick in enumerate(picks):
        if 0 <= pick.choice < item.n_choices:
            counts[pick.choice] += 1
            theta[pick.choice] += abilities[k]
            strong[pick.choice] += k in strongest
    times = [p.ms for p in picks if p.ms > 0]
    return QuestionStats(
        answers=n, right=sum(1 for p in picks if p.correct), counts=tuple(counts),
        theta_by_choice=tuple(theta), strong=tuple(strong), strong_size=size,
        sum_theta=sum(abilities), sum_theta2=sum(a * a for a in abilities),
        sum_right_theta=sum(a for a, p in zip(abilities, picks, strict=True) if p.correct),
        median_ms=int(statistics.median(times)) if times else None)


def assess(items: Sequence[ItemInfo], picks: Sequence[Pick], calibration: Calibration,
           rules: QualityRules | None = None) -> list[QuestionQuality]:
    """One row per question in ``items`` (answered or not), in the order given, from the picks
    and a batch fit of them (the simulation's path; chat and the export read sums and stored
    estimates: ``assess_stats``)."""
    r = rules or QualityRules()
    by_question: dict[str, list[Pick]] = defaultdict(list)
    for pick in picks:
        by_question[pick.question].append(pick)
    stats = {}
    for item in items:
        mine = by_question.get(item.question, [])
        abilities = []
        for pick in mine:
            found = calibration.ability(pick.member, pick.topic)
            abilities.append(found.ability if found else 0.0)
        stats[item.question] = stats_of(item, mine, abilities, r.groups)
    return assess_stats(items, stats, calibration.items, r)


def assess_stats(items: Sequence[ItemInfo], stats: Mapping[str, QuestionStats],
                 estimates: Mapping[str, ItemEstimate], rules: QualityRules | None = None) -> list[QuestionQuality]:
    """One row per question in ``items``, in the order given, from each question's sums and
    its difficulty estimate (fitted or stored; a question without one has no calibrated
    difficulty and is not judged on it)."""
    r = rules or QualityRules()
    labels = {item.question: item.labelled for item in items}
    references = {level: level_reference(estimates, labels, level) for level in (1, 2, 3)}
    return [_assess_one(item, stats.get(item.question) or QuestionStats.empty(item.n_choices),
                        estimates.get(item.question), references, r)
            for item in items]


def _assess_one(item: ItemInfo, st: QuestionStats, estimate: ItemEstimate | None,
                references: dict[int, float], r: QualityRules) -> QuestionQuality:
    n = st.answers
    flags: list[Flag] = []
    notes: list[str] = []
    discrimination = _correlation_of_sums(n, st.sum_theta, st.sum_theta2, st.right, st.sum_right_theta)
    if n >= r.min_answers:
        wrong_key = _wrong_key(item, st, r)
        if wrong_key:
            flags.append(Flag.WRONG_KEY)
            notes.append(wrong_key)
        dead = None if wrong_key else _dead(item, list(st.counts), n - st.right, r)
        if dead:
            flags.append(Flag.DEAD_DISTRACTOR)
            notes.append(dead)
        no_signal = False
        if not wrong_key:
            no_signal = discrimination is None or discrimination < r.no_signal_correlation or (
                estimate is not None and estimate.slope_se is not None
                and estimate.slope < r.no_signal_slope)
        if no_signal:
            flags.append(Flag.NO_SIGNAL)
        if not wrong_key and not no_signal and estimate is not None:
            distance = abs(estimate.difficulty - references[item.labelled])
            level = _nearest_level(estimate.difficulty, references)
            if level != item.labelled and distance - 1.96 * estimate.difficulty_se > r.mislabel_logits:
                flags.append(Flag.MISLABELLED)
                notes.append(f"answered like a difficulty-{level} question, labelled {item.labelled}")
    return QuestionQuality(
        question=item.question, bank=item.bank, topic=item.topic, answers=n,
        share_right=st.right / n if n else 0.0, discrimination=discrimination,
        slope=estimate.slope if estimate is not None and estimate.slope_se is not None else None,
        pick_rates=tuple(c / n if n else 0.0 for c in st.counts), key=item.key,
        median_ms=st.median_ms, labelled=item.labelled,
        calibrated=estimate.difficulty if estimate is not None else None,
        calibrated_level=_nearest_level(estimate.difficulty, references) if estimate is not None else None,
        flags=tuple(flags), notes=tuple(notes),
    )


def _wrong_key(item: ItemInfo, st: QuestionStats, r: QualityRules) -> str | None:
    """A note when the strongest third prefer a distractor that behaves like a key.

    Behaving like a key: picking it correlates with ability at least ``key_like_correlation``
    (a hard question's popular distractor draws the weak, so its correlation is negative).
    """
    size = st.strong_size
    if size < r.min_group:
        return None

    def share(choice: int) -> float:
        return st.strong[choice] / size

    key_strong = share(item.key)
    for choice in sorted((c for c in range(item.n_choices) if c != item.key), key=share, reverse=True):
        if share(choice) <= key_strong:
            return None
        correlation = _correlation_of_sums(st.answers, st.sum_theta, st.sum_theta2, st.counts[choice],
                                           st.theta_by_choice[choice])
        if correlation is not None and correlation >= r.key_like_correlation:
            return (f"the strongest third pick {_letter(choice)} ({share(choice):.0%}) over the key "
                    f"{_letter(item.key)} ({key_strong:.0%})")
    return None


def _dead(item: ItemInfo, counts: list[int], wrong: int, r: QualityRules) -> str | None:
    if wrong < r.min_wrong_for_dead:
        return None
    dead = [c for c in range(item.n_choices) if c != item.key and counts[c] < r.dead_share * wrong]
    if not dead:
        return None
    return "; ".join(f"{_letter(c)} drew {counts[c]} of {wrong} wrong answers" for c in dead)
