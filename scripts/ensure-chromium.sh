#!/usr/bin/env bash
# Makes sure the dashboard's browser tests (e2e/, chromedp) have a browser: $CHROMIUM, or
# chromium on PATH. On a machine with neither, installs Debian's chromium package when it can
# (root and apt-get). When no browser can be had, the tests skip with the reason, except under
# CI, where they fail: this script then says so and exits non-zero.
set -euo pipefail

have_browser() {
  { [ -n "${CHROMIUM:-}" ] && [ -x "${CHROMIUM}" ]; } || command -v chromium >/dev/null 2>&1 ||
    command -v chromium-browser >/dev/null 2>&1
}

if have_browser; then exit 0; fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: no chromium found; installing Debian's chromium package" >&2
  apt-get update -qq
  # fonts-dejavu-core: readable text in screenshots on a minimal machine.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core >/dev/null
fi

if have_browser; then exit 0; fi
echo "ensure-chromium: no chromium and it could not be installed (needs root and apt-get);" \
  "the dashboard's browser tests will skip (set CHROMIUM=/path/to/chromium to use another)" >&2
if [ -n "${CI:-}" ]; then exit 1; fi
exit 0
