#!/usr/bin/env bash
# Render an optcmp HTML report to a PNG with headless Chromium, so a person can check it.
#
# usage: scripts/render_report.sh REPORT.html [OUT.png] [WIDTH] [HEIGHT]
#   REPORT.html  a report from `optcmp report results.json -o REPORT.html` or Comparison.to_html
#   OUT.png      default: REPORT.png next to the report
#   WIDTH        window width in CSS pixels (default 1280)
#   HEIGHT       window height, i.e. how much of the page is captured (default 6000)
#
# Needs Debian's chromium (apt-get install -y chromium) or $CHROMIUM pointing at a binary.
# The browser runs offline-minded: no sandbox (containers), no GPU, no background networking,
# no component updates, no sync, and a fresh empty profile that is deleted afterwards.
set -euo pipefail

if [[ $# -lt 1 || "$1" == "-h" || "$1" == "--help" ]]; then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
report=$1
out=${2:-${report%.*}.png}
width=${3:-1280}
height=${4:-6000}

if [[ ! -f "$report" ]]; then
  echo "render_report: no such file: $report" >&2
  exit 2
fi
browser=${CHROMIUM:-}
if [[ -z "$browser" ]]; then
  for b in chromium chromium-browser google-chrome; do
    if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
  done
fi
if [[ -z "$browser" ]]; then
  echo "render_report: chromium not found; install it (apt-get install -y chromium) or set CHROMIUM" >&2
  exit 3
fi

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
abs_report=$(cd "$(dirname "$report")" && pwd)/$(basename "$report")
abs_out=$(mkdir -p "$(dirname "$out")" && cd "$(dirname "$out")" && pwd)/$(basename "$out")

"$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --disable-sync --no-first-run --hide-scrollbars \
  --user-data-dir="$profile" --window-size="${width},${height}" \
  --screenshot="$abs_out" "file://$abs_report" >/dev/null 2>&1

if [[ ! -s "$abs_out" ]]; then
  echo "render_report: chromium wrote no screenshot" >&2
  exit 1
fi
echo "$abs_out"
