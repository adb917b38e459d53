#!/usr/bin/env bash
# chromium.sh — make sure a headless Chromium is available for the console's browser
# test (internal/console, driven with chromedp). `make test` runs it.
#
# Installs Debian's chromium with apt-get when no Chromium is on PATH and the machine
# can (root, apt-get). Otherwise it says what to do and leaves the decision to the
# test: it skips on a developer's machine and fails in CI (CI=true).
set -euo pipefail

log() { printf 'chromium: %s\n' "$*" >&2; }

for name in "${ENGRAM_CHROMIUM:-}" chromium chromium-browser google-chrome google-chrome-stable; do
	if [[ -n "$name" ]] && command -v "$name" >/dev/null 2>&1; then
		exit 0
	fi
done

if [[ "$(id -u)" -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
	log "installing Debian's chromium (for the console's browser test)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends chromium >/dev/null
	command -v chromium >/dev/null 2>&1 && exit 0
	log "apt-get installed no chromium binary"
else
	log "no Chromium on PATH and cannot install it here (needs root and apt-get)."
	log "  install it (apt-get install chromium, brew install --cask chromium) or set ENGRAM_CHROMIUM;"
	log "  the console's browser test skips without it (and fails when CI=true)."
fi
if [[ "${CI:-}" == "true" ]]; then
	exit 1
fi
exit 0
