#!/usr/bin/env bash
# Renders an HTML file to a PNG with headless Chromium, as a person would see
# the top of the page in a browser window of the given size.
#   utils/html_to_png.sh PAGE.html OUT.png [WIDTHxHEIGHT]   (default 1200x1600)
# Uses chromium-headless-shell (Debian package of that name) or chromium.
set -euo pipefail
page=$1 out=$2 size=${3:-1200x1600}
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
"$browser" "${extra[@]}" --no-sandbox --disable-gpu --hide-scrollbars \
  --user-data-dir="$profile" --window-size="${size/x/,}" \
  --screenshot="$(realpath -m "$out")" "file://$(realpath "$page")" \
  >"$profile/log" 2>&1 || { cat "$profile/log" >&2; exit 1; }
test -s "$out" || { echo "html_to_png.sh: $browser wrote no $out" >&2; cat "$profile/log" >&2; exit 1; }
