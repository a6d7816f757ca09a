#!/bin/sh
# Regenerates the README's screenshots with the project's own commands: a real quickstart
# experiment at slow-80 and fast-750 (wall clock, ~1-2 minutes), then
# `looplab report --screenshot` (needs Chromium: /usr/bin/chromium or $LOOPLAB_CHROMIUM):
#   docs/report.png      the report's top (headline, compounding)
#   docs/diff.png        the first step-aligned diff (slow-80 vs fast-750, one task)
#   docs/transcript.png  the featured run's timeline, where the time goes and transcript
set -eu
cd "$(dirname "$0")/.."
LOOPLAB=${LOOPLAB:-.venv/bin/looplab}
OUT=${OUT:-runs/report-demo}
"$LOOPLAB" --no-log-file run experiments/configs/quickstart.yaml -s "output_dir=$OUT" \
  -s 'tasks=[coding/fix-pager,coding/nbugs-4,web/signup-wizard]' -s concurrency=2
"$LOOPLAB" --no-log-file report "$OUT" --screenshot docs/report.png --screenshot-height 1900
"$LOOPLAB" --no-log-file report "$OUT" --screenshot docs/diff.png --screenshot-at diff \
  --screenshot-height 1100
"$LOOPLAB" --no-log-file report "$OUT" --screenshot docs/transcript.png \
  --screenshot-at transcript --screenshot-height 1300
