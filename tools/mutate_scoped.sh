#!/usr/bin/env bash
# Mutation score of one area of the core, as measured for the README (issue 21).
#
#   tools/mutate_scoped.sh answers|reveal|boards|daily|runner
#
# `make mutate-all` covers all of bot/core and runner/ with every test; on the 2-core machine one
# area at a time is what fits. A preset narrows pyproject's [tool.mutmut] for the run only
# (only_mutate: the area's files; the test selection: the tests that reach them, without the
# multi-second subprocess tests), runs the area's mutant-name globs with one child, prints the
# report, and restores pyproject.toml.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin

# An area is its modules and the feature folders of tests that reach them (tests by feature,
# mirroring the source); `--mutation` in pyproject's pytest arguments leaves out the tests
# marked not_for_mutation (multi-second subprocess and platform flows), `-k "not postgres"`
# the PostgreSQL cases.
case "${1:-}" in
answers)
  ONLY="bot/core/answers/*"
  GLOBS="bot.core.answers.*"
  TESTS="tests/answers tests/reveal tests/quizzes" ;;
reveal)
  ONLY="bot/core/*"
  GLOBS="bot.core.reveal.* bot.core.render.reveals.* bot.core.render.answers.*"
  TESTS="tests/reveal tests/answers tests/content/test_content_display.py" ;;
boards)
  ONLY="bot/core/*"
  GLOBS="bot.core.progress.leaderboard.* bot.core.progress.boards.* bot.core.render.boards.*"
  TESTS="tests/progress tests/reveal tests/challenges/test_challenge_boards.py" ;;
daily)
  ONLY="bot/core/*"
  GLOBS="bot.core.posting.* bot.core.daily.* bot.core.drill.delivery.*"
  TESTS="tests/daily tests/posting tests/weekly" ;;
runner)
  ONLY="runner/*"
  GLOBS="runner.outcome.* runner.explain.*"
  TESTS="tests/runner/test_limit_verdicts.py tests/runner/test_runner_rules.py tests/runs/test_explain.py" ;;
*)
  echo "usage: $0 answers|reveal|boards|daily|runner" >&2; exit 2 ;;
esac

make --no-print-directory install
"$BIN/pip" install --quiet "mutmut==3.8.1"
cp -p pyproject.toml pyproject.toml.mutate-backup  # -p: the restored file keeps its time (no reinstall)
trap 'mv pyproject.toml.mutate-backup pyproject.toml' EXIT
"$BIN/python" - "$ONLY" $TESTS <<'PY'
import json
import sys
from pathlib import Path

path = Path("pyproject.toml")
text = path.read_text()
old = 'pytest_add_cli_args_test_selection = ["tests"]'
assert old in text, "pyproject's mutmut test selection changed; update tools/mutate_scoped.sh"
new = f"pytest_add_cli_args_test_selection = {json.dumps(sys.argv[2:])}\nonly_mutate = {json.dumps([sys.argv[1]])}"
path.write_text(text.replace(old, new))
PY
rm -rf mutants
# shellcheck disable=SC2086  # the globs are words
"$BIN/mutmut" run --max-children 1 $GLOBS || true
"$BIN/python" tools/mutation_report.py
