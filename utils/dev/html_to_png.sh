#!/usr/bin/env bash
# Renders an HTML file with headless Chromium, as a person would see it:
#   utils/dev/html_to_png.sh PAGE.html OUT.png [WIDTHxHEIGHT]  the top of the page in a
#                                                          window of that size (default 1200x1600)
#   utils/dev/html_to_png.sh --dom PAGE.html                   the DOM after the page's
#                                                          scripts ran, on stdout
# Uses chromium-headless-shell (Debian package of that name) or chromium.
set -euo pipefail
dom=false
if [ "${1:-}" = --dom ]; then dom=true; shift; fi
page=$1
browser=""
for b in chromium-headless-shell chromium chromium-browser; do
  if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
if [ -z "$browser" ]; then
  echo "html_to_png.sh: no headless Chromium (apt-get install chromium-headless-shell)" >&2
  exit 2
fi
extra=()
[ "$browser" != chromium-headless-shell ] && extra+=(--headless)
# --no-sandbox: CI runs as root; a private profile so parallel runs do not
# share one; the page loads nothing from the network.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
common=("${extra[@]}" --no-sandbox --disable-gpu --hide-scrollbars
        --user-data-dir="$profile")
url="file://$(realpath "$page")"
if $dom; then
  "$browser" "${common[@]}" --dump-dom "$url" 2>"$profile/log" ||
    { cat "$profile/log" >&2; exit 1; }
  exit 0
fi
out=$2 size=${3:-1200x1600}
"$browser" "${common[@]}" --window-size="${size/x/,}" \
  --screenshot="$(realpath -m "$out")" "$url" >"$profile/log" 2>&1 ||
  { cat "$profile/log" >&2; exit 1; }
test -s "$out" || { echo "html_to_png.sh: $browser wrote no $out" >&2; cat "$profile/log" >&2; exit 1; }
