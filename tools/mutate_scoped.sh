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
D='ǁDailyPostingǁ'

case "${1:-}" in
answers)
  ONLY="bot/core/answers/recording.py"
  GLOBS="bot.core.answers.recording.*"
  TESTS="tests/answers/test_click_replies.py tests/answers/test_core_answers.py tests/reveal/test_core_reveal_streaks.py
         tests/answers/test_what_members_read.py tests/quizzes/test_core_quiz_review_round.py tests/progress/test_points_and_streaks.py" ;;
reveal)
  ONLY="bot/core/*"
  GLOBS=""
  for f in reveal_message _pct explanation_message why_not_list explanation_blocks; do
    GLOBS="$GLOBS bot.core.render.reveals.x_${f}__*"; done
  for f in answer_feedback picked_text why_not_line; do GLOBS="$GLOBS bot.core.render.answers.x_${f}__*"; done
  for f in reveal_facts settle_streaks reveal due_reveals; do GLOBS="$GLOBS bot.core.reveal.posts.x_${f}__*"; done
  TESTS="tests/reveal/test_reveal_text.py tests/answers/test_what_members_read.py tests/reveal/test_core_reveal_streaks.py
         tests/reveal/test_core_boards_reveal.py tests/answers/test_core_answers.py tests/answers/test_click_replies.py
         tests/quizzes/test_core_quiz_review_round.py tests/console/test_console_render.py tests/daily/test_daily.py
         tests/content/test_content_display.py" ;;
boards)
  ONLY="bot/core/*"
  GLOBS="bot.core.progress.leaderboard.* bot.core.progress.boards.* bot.core.render.boards.x_board_message__*"
  TESTS="tests/progress/test_board_lines.py tests/progress/test_core_leaderboard_groups.py tests/reveal/test_core_boards_reveal.py
         tests/challenges/test_challenge_boards.py tests/progress/test_charts.py tests/reveal/test_reveal_text.py" ;;
daily)
  ONLY="bot/core/*"
  GLOBS="bot.core.posting.claims.* bot.core.posting.poster.* bot.core.posting.keyed.*
         bot.core.daily.service.x__reason__*"
  for f in claim_now finish_now todays_post post_for _insert_claim _take_over _send _prepare \
           recover_unsent _adhoc catch_up fire; do GLOBS="$GLOBS bot.core.daily.service.x${D}${f}__*"; done
  TESTS="tests/daily/test_daily_claims_and_replies.py tests/daily/test_daily_now_durable.py tests/weekly/test_weekly_challenge.py
         tests/posting/test_posting_once.py"
  for t in test_parse_time_and_weekdays_accept_friendly_forms_and_name_bad_values \
           test_schedule_commands_and_clear_errors test_dst_posts_at_nine_local_on_both_sides \
           test_restart_a_few_minutes_late_still_posts_once test_reveal_at_next_post_or_after_delay \
           test_crash_between_claim_and_send_is_recovered test_crash_after_post_created_resends_same_question \
           test_concurrent_fires_in_one_process; do TESTS="$TESTS tests/daily/test_daily.py::$t"; done ;;
runner)
  ONLY="runner/*"
  GLOBS="runner.outcome.* runner.explain.*"
  TESTS="tests/runner/test_limit_verdicts.py tests/runner/test_runner_rules.py"
  for t in test_every_catalog_entry_is_tested test_catalog_validates_and_has_the_core_errors \
           test_unrelated_error_is_not_explained test_last_exception_wins_over_earlier_output \
           test_chained_traceback_falls_back_to_the_cause test_multiline_message_stays_with_its_header \
           test_message_without_traceback_is_still_matched test_huge_stderr_is_scanned_from_the_end \
           test_bad_regex_names_entry_and_line test_missing_field_and_unknown_field_are_reported \
           test_duplicate_id_and_bad_yaml test_default_catalog_is_the_content_file; do
    TESTS="$TESTS tests/runs/test_explain.py::$t"; done ;;
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
