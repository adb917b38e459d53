#!/usr/bin/env bash
# npm-tools.sh — the npm tools `make test` runs: the MCP TypeScript SDK (a client of
# engram's MCP server nobody here wrote) and Redocly CLI (an independent validator of
# the OpenAPI document), pinned in tests/mcp-ts/package.json and its lockfile.
#
#   scripts/npm-tools.sh install   npm ci, unless node_modules already matches the lockfile
#   scripts/npm-tools.sh lint      redocly lint internal/httpapi/openapi.json
#   scripts/npm-tools.sh mcp       the TypeScript client against a real engram (a Go test)
#   scripts/npm-tools.sh all       install, lint, mcp
#
# Without npm every step says so and succeeds: the Go test of the TypeScript client
# then skips itself too.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$root/tests/mcp-ts"
stamp="$dir/node_modules/.engram-lock.sha256"

have_npm() {
	if command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1; then
		return 0
	fi
	echo "npm-tools: npm or node is not installed; skipping the MCP TypeScript client and the OpenAPI lint" >&2
	return 1
}

install() {
	have_npm || return 0
	local want
	want="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
	if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
		echo "npm-tools: node_modules matches package-lock.json"
		return 0
	fi
	echo "npm-tools: npm ci in tests/mcp-ts (@modelcontextprotocol/sdk, @redocly/cli)"
	local start=$SECONDS
	(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
	echo "$want" >"$stamp"
	echo "npm-tools: installed in $((SECONDS - start))s"
}

lint() {
	have_npm || return 0
	install
	# NO_UPDATE_NOTIFIER and REDOCLY_TELEMETRY keep the linter off the network.
	(cd "$dir" && NO_UPDATE_NOTIFIER=1 REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
		./node_modules/.bin/redocly lint --config redocly.yaml "$root/internal/httpapi/openapi.json")
}

mcp() {
	have_npm || return 0
	install
	(cd "$root" && ENGRAM_REQUIRE_NPM=1 go test -count=1 -run '^TestMCPTypeScriptSDK$' -v ./cmd/engram/ | grep -v '^=== ')
}

case "${1:-all}" in
install) install ;;
lint) lint ;;
mcp) mcp ;;
all) install && lint && mcp ;;
*)
	echo "usage: scripts/npm-tools.sh install|lint|mcp|all" >&2
	exit 2
	;;
esac
