"""Role tracks for /mock. The tracks themselves are data (``content/tracks.yaml``): the topics
a role's interview leans on (weights), the difficulty its explain-it questions are chosen
nearest to, and the coding challenges it draws from. The loader and its rules live here, so
``content check`` and the running bot read a track the same way.

Loading stays plain: a broken file leaves the tracks that parse and reports the rest with
``file:line``. A community adds its own tracks beside the shipped ones (a tracks file uploaded
with /bank upload, checked by the same rules; its slugs cannot shadow ours).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bot.core.content.bank import DEFAULT_CONTENT_DIR, Problem, _LineLoader
from bot.core.domain.topics import TOPICS

TRACKS_FILE = "tracks.yaml"
SLUG = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
NAME_MAX = 60
WEIGHT_MAX = 10


@dataclass(frozen=True)
class Track:
    slug: str
    name: str
    weights: dict[str, int]  # topic -> relative share of the MCQs
    challenges: tuple[str, ...]  # challenge ids, in the order they are offered
    aliases: tuple[str, ...] = ()
    difficulty: int = 2  # explain-it questions nearest this difficulty first

    @property
    def topics(self) -> tuple[str, ...]:
        return tuple(self.weights)


def _known_challenge(challenge_id: str) -> bool:
    from bot.core.content.challenges import shipped_challenges

    return shipped_challenges().get(challenge_id) is not None


def _parse_one(raw: dict[str, Any], path: Path, known_challenge: Callable[[str], bool],
               taken: dict[str, int]) -> tuple[Track | None, list[Problem]]:
    """One track entry; every problem names the line of the field it is about."""
    lines: dict[str, int] = raw.get("__key_lines__", {})
    at = raw.get("__line__", 1)
    problems: list[Problem] = []

    def bad(field: str, message: str) -> None:
        problems.append(Problem(path, lines.get(field, at), f"{field}: {message}"))

    slug, name = raw.get("slug"), raw.get("name")
    if not isinstance(slug, str) or not SLUG.match(slug):
        bad("slug", "a lowercase word of letters, digits and '-' (at most 32), e.g. 'ml'")
    if not isinstance(name, str) or not name.strip() or len(name) > NAME_MAX:
        bad("name", f"the role's name, 1–{NAME_MAX} characters")
    aliases = raw.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) and SLUG.match(a) for a in aliases):
        bad("aliases", "a list of lowercase words")
        aliases = []
    difficulty = raw.get("difficulty", 2)
    if not isinstance(difficulty, int) or isinstance(difficulty, bool) or not 1 <= difficulty <= 3:
        bad("difficulty", "1 easy, 2 medium or 3 hard")
    weights = raw.get("weights")
    clean: dict[str, int] = {}
    if not isinstance(weights, dict) or not [k for k in weights if not k.startswith("__")]:
        bad("weights", "a mapping of topic to weight, e.g. {autograd: 2, tensors: 1}")
    else:
        for topic, weight in weights.items():
            if topic.startswith("__"):
                continue
            line = weights.get("__key_lines__", {}).get(topic, lines.get("weights", at))
            if topic not in TOPICS:
                problems.append(Problem(path, line, f"weights: unknown topic {topic!r} "
                                                    f"(known: {', '.join(sorted(TOPICS))})"))
            elif not isinstance(weight, int) or isinstance(weight, bool) or not 0 < weight <= WEIGHT_MAX:
                problems.append(Problem(path, line, f"weights: {topic}'s weight must be a whole "
                                                    f"number from 1 to {WEIGHT_MAX}"))
            else:
                clean[topic] = weight
    challenges = raw.get("challenges")
    if not isinstance(challenges, list) or not challenges:
        bad("challenges", "a list of challenge ids (content/challenges/)")
        challenges = []
    for cid in challenges:
        if not isinstance(cid, str) or not known_challenge(cid):
            bad("challenges", f"unknown challenge {cid!r}")
    for word in [slug, *aliases] if isinstance(slug, str) else aliases:
        if word in taken:
            bad("slug", f"{word!r} already names the track at line {taken[word]}" if taken[word]
                else f"{word!r} is taken (a built-in track, or a word /mock reads)")
    if problems or not isinstance(slug, str) or not isinstance(name, str):
        return None, problems
    for word in [slug, *aliases]:
        taken[word] = at
    return Track(slug, name.strip(), clean, tuple(challenges), tuple(aliases), difficulty), []


def parse_tracks(text: str, path: Path,
                 known_challenge: Callable[[str], bool] = _known_challenge,
                 taken: Collection[str] = ()) -> tuple[list[Track], list[Problem]]:
    """The tracks of a ``tracks.yaml`` text; a track with a problem is left out and reported.
    ``taken``: slugs already used (a community's tracks cannot shadow the shipped ones)."""
    try:
        raw = yaml.load(text, Loader=_LineLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return [], [Problem(path, mark.line + 1 if mark else 1,
                            f"invalid YAML: {getattr(exc, 'problem', None) or exc}")]
    if not isinstance(raw, dict) or not isinstance(raw.get("tracks"), list):
        return [], [Problem(path, 1, "a tracks file must be a mapping with a list 'tracks'")]
    used = {word: 0 for word in taken}
    tracks: list[Track] = []
    problems: list[Problem] = []
    for index, entry in enumerate(raw["tracks"]):
        if not isinstance(entry, dict):
            problems.append(Problem(path, raw["__key_lines__"].get("tracks", 1),
                                    f"tracks[{index}] must be a mapping"))
            continue
        found, wrong = _parse_one(entry, path, known_challenge, used)
        problems += wrong
        if found is not None:
            tracks.append(found)
    return tracks, problems


def load_tracks(path: Path) -> tuple[list[Track], list[Problem]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [], [Problem(path, 1, f"cannot read file: {exc}")]
    return parse_tracks(text, path)


def check_tracks(content_dir: Path) -> list[Problem]:
    """The hook `torchdrill content check` calls: problems of content_dir/tracks.yaml."""
    from bot.core.content.challenges import load_challenges

    path = content_dir / TRACKS_FILE
    if not path.is_file():
        return []
    own = content_dir / "challenges"
    if not own.is_dir():
        return load_tracks(path)[1]
    bank = load_challenges(own)  # the challenges beside the tracks, as the bot would load them
    return parse_tracks(path.read_text(encoding="utf-8"), path,
                        lambda cid: bank.get(cid) is not None)[1]


@functools.cache
def shipped_tracks() -> tuple[Track, ...]:
    """The shipped tracks, read once per process (CI's `content check` keeps them clean)."""
    return tuple(load_tracks(DEFAULT_CONTENT_DIR / TRACKS_FILE)[0])


TRACKS: tuple[Track, ...] = shipped_tracks()
DEFAULT_TRACK = "ml"


def track(slug: str | None) -> Track:
    """The track named ``slug`` (the catalogue has validated it); the default for None."""
    wanted = slug or DEFAULT_TRACK
    found = next((t for t in TRACKS if t.slug == wanted), None)
    # a stored mock of a track since removed from the data still reads by its slug
    return found or Track(wanted, wanted, {}, ())


MAX_COMMUNITY_TRACKS = 20
# words /mock reads as actions: a community track named so could only be chosen by name
RESERVED = ("start", "answer", "status", "end", "date", "schedule", "cancel", "clear")


def builtin_words() -> set[str]:
    return {w for t in TRACKS for w in (t.slug, *t.aliases)}


def looks_like_tracks(text: str) -> bool:
    """An upload that is a tracks file (a top-level ``tracks:`` list), not a question bank."""
    return re.search(r"^tracks\s*:", text, re.M) is not None and re.search(r"^questions\s*:", text, re.M) is None


def check_community_tracks(text: str, filename: str) -> tuple[list[Track], list[Problem]]:
    """A community's tracks file, by the rules of content/tracks.yaml (shipped challenges
    only), with slugs that cannot take a built-in track's name or a /mock action's."""
    tracks, problems = parse_tracks(text, Path(filename), taken=builtin_words() | set(RESERVED))
    if not tracks and not problems:
        problems.append(Problem(Path(filename), 1, "the file has no tracks"))
    if len(tracks) > MAX_COMMUNITY_TRACKS:
        problems.append(Problem(Path(filename), 1, f"{len(tracks)} tracks; a community may have at "
                                                   f"most {MAX_COMMUNITY_TRACKS}"))
    return tracks, problems


def community_tracks(source: str | None) -> list[Track]:
    """A community's stored tracks (stored only when clean; a track that no longer checks,
    e.g. its challenge left the bank, is left out)."""
    return check_community_tracks(source, TRACKS_FILE)[0] if source else []


def find_track(word: str | None, extra: Collection[Track] = ()) -> Track | None:
    """The track a member named, by slug or alias (the default for None), built-in first."""
    wanted = (word or DEFAULT_TRACK).strip().lower()
    return next((t for t in (*TRACKS, *extra) if wanted == t.slug or wanted in t.aliases), None)


def listing(extra: Collection[Track] = ()) -> str:
    return ", ".join(f"{t.slug} ({t.name})" for t in (*TRACKS, *extra))


def per_track(chosen: Track, per_topic: dict[str, float]) -> float:
    """Readiness for a role: the per-topic figures averaged with the track's weights (topics
    without questions in the banks left out)."""
    weights = {t: w for t, w in chosen.weights.items() if w > 0 and t in per_topic}
    total = sum(weights.values())
    return sum(per_topic[t] * w for t, w in weights.items()) / total if total else 0.0
