#!/bin/sh
# Regenerates docs/report.png (the README's screenshot) with the project's own commands:
# a real quickstart experiment at slow-80 and fast-750 (wall clock, ~1-2 minutes), then
# `looplab report --screenshot` (needs Chromium: /usr/bin/chromium or $LOOPLAB_CHROMIUM).
set -eu
cd "$(dirname "$0")/.."
LOOPLAB=${LOOPLAB:-.venv/bin/looplab}
OUT=${OUT:-runs/report-demo}
"$LOOPLAB" --no-log-file run experiments/configs/quickstart.yaml -c "output_dir=$OUT" \
  -c 'tasks=[coding/fix-pager,coding/nbugs-4,web/signup-wizard]' -c concurrency=2
"$LOOPLAB" --no-log-file report "$OUT" --screenshot docs/report.png --screenshot-height 1900
