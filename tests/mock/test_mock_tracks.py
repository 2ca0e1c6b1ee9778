"""Tracks are data in content/tracks.yaml, checked like the banks: `torchdrill content check`
names the file and line of a bad track; a good file passes; the shipped tracks load whole."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from bot.cli import app
from bot.core.content.bank import DEFAULT_CONTENT_DIR, bank_files
from bot.core.domain.topics import TOPICS
from bot.core.mock.tracks import TRACKS, TRACKS_FILE, load_tracks, parse_tracks, track
from tests.support.content_check import BANKS, line_of

BAD = """\
tracks:
  - slug: ml
    name: ML engineer
    difficulty: 2
    weights: {tensors: 2, autograd: 1}
    challenges: [layer-norm]
  - slug: quantum
    name: Quantum engineer
    difficulty: 5
    weights:
      tensors: 2
      qubits: 1
    challenges: [layer-norm, no-such-challenge]
  - slug: ml
    name: Again
    weights: {tensors: 1}
    challenges: [layer-norm]
"""


def test_the_shipped_tracks_load_whole_and_are_no_bank() -> None:
    tracks, problems = load_tracks(DEFAULT_CONTENT_DIR / TRACKS_FILE)
    assert problems == [] and tuple(tracks) == TRACKS
    assert [t.slug for t in TRACKS] == ["ml", "research", "infra"]
    assert [t.difficulty for t in TRACKS] == [2, 3, 2]
    assert DEFAULT_CONTENT_DIR / TRACKS_FILE not in bank_files(DEFAULT_CONTENT_DIR)
    assert track("gone").name == "gone"  # an old mock of a track since removed still reports


def test_a_bad_track_is_left_out_and_reported_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / TRACKS_FILE
    path.write_text(BAD)
    tracks, problems = parse_tracks(BAD, path)
    assert [t.slug for t in tracks] == ["ml"]
    assert [str(p) for p in problems] == [
        f"{path}:9: difficulty: 1 easy, 2 medium or 3 hard",
        f"{path}:12: weights: unknown topic 'qubits' (known: {', '.join(sorted(TOPICS))})",
        f"{path}:13: challenges: unknown challenge 'no-such-challenge'",
        f"{path}:14: slug: 'ml' already names the track at line 2",
    ]
    assert parse_tracks("tracks: {}", path)[1][0].message == (
        "a tracks file must be a mapping with a list 'tracks'")


def test_content_check_reports_a_bad_track_file_and_line(tmp_path: Path) -> None:
    shutil.copy(BANKS / "good.yaml", tmp_path / "good.yaml")
    (tmp_path / TRACKS_FILE).write_text(BAD)
    result = CliRunner().invoke(app, ["content", "check", "--content-dir", str(tmp_path)])
    assert result.exit_code == 1
    where = tmp_path / TRACKS_FILE
    assert f"{where}:{line_of(where, 'no-such-challenge')}: challenges: unknown challenge " \
           "'no-such-challenge'" in " ".join(result.output.split())
    assert "4 problem(s)" in result.output


def test_content_check_passes_the_shipped_tracks(tmp_path: Path) -> None:
    shutil.copy(BANKS / "good.yaml", tmp_path / "good.yaml")
    shutil.copy(DEFAULT_CONTENT_DIR / TRACKS_FILE, tmp_path / TRACKS_FILE)
    result = CliRunner().invoke(app, ["content", "check", "--content-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
