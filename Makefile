# engram — the two commands of a fresh machine are `make demo` and `make test`.
SHELL := /bin/bash
GO ?= go
BIN := bin/engram
# The race detector roughly doubles test time; CI keeps it on (it fits well inside the budget).
RACE ?= -race
TEST_TIMEOUT ?= 20m
# Fuzzing budgets in executions, not seconds: a duration's deadline races the fuzzing
# workers when it expires (golang/go#75804), and the target then fails with a bare
# "context deadline exceeded" and no failing input. About 5 s and 15 s of fuzzing here.
FUZZTIME ?= 20000x
FUZZTIME_STORABLE ?= 5000x

.PHONY: all build services services-stop services-status chromium test test-short test-cluster vet fmt dev demo bench image clean npm-tools openapi-lint mcp-ts openapi

all: build

build:
	$(GO) build -o $(BIN) ./cmd/engram

## services: install PostgreSQL + pgvector if missing and start the project-local cluster.
services:
	@bash scripts/services.sh start

services-stop:
	@bash scripts/services.sh stop

services-status:
	@bash scripts/services.sh status

## chromium: install Debian's Chromium if missing (the console's browser test drives it headless).
chromium:
	@bash scripts/chromium.sh

## npm-tools: install the pinned npm tools (MCP TypeScript SDK, Redocly CLI); says so and skips without npm.
npm-tools:
	@bash scripts/npm-tools.sh install

## openapi-lint: Redocly's strict lint of internal/httpapi/openapi.json.
openapi-lint:
	@bash scripts/npm-tools.sh lint

## mcp-ts: the MCP TypeScript SDK against a real engram, over stdio and /mcp (also part of go test ./...).
mcp-ts:
	@bash scripts/npm-tools.sh mcp

## openapi: regenerate internal/httpapi/openapi.json, its examples recorded from real calls.
openapi:
	$(GO) test -count=1 -run '^TestOpenAPIDocument$$' ./internal/httpapi/ -update

## test: set up what is missing, then run every test against real PostgreSQL and JetStream.
test: services chromium vet npm-tools
	@bash scripts/npm-tools.sh lint
	@# No evaluation sentence (golden, holdout, ../shared/data) may be copied into the extractor,
	@# resolver or lifecycle code or their tests; CI has ../shared beside the clone.
	@if [ -x ../shared/tools/test-phrases-in-code ]; then \
		../shared/tools/test-phrases-in-code --tests --cases testdata/holdout2 --cases testdata/dev --cases testdata/dev3 --cases testdata/dev4 --cases testdata/dev5 --cases testdata/dev6 --cases testdata/dev7 --cases testdata/dev8 --cases testdata/dev9 --cases testdata/dev10 --cases testdata/dev11 --cases testdata/dev12 --cases testdata/dev13 --cases testdata/dev14 --cases testdata/dev15 --cases testdata/dev16 --cases testdata/dev17 --cases testdata/dev18 --cases testdata/dev19 --cases testdata/dev20 --cases testdata/dev21 --cases testdata/dev22 --cases testdata/dev23 --cases testdata/dev24 --cases testdata/dev25 --cases testdata/dev26 --cases testdata/dev27 --cases testdata/dev28 --cases testdata/dev29 --cases testdata/dev30 --cases testdata/dev31 --cases testdata/dev32 --cases testdata/dev33 --cases testdata/dev34 --cases testdata/dev35 --cases testdata/dev36 --cases testdata/dev37 --cases testdata/dev38 --cases testdata/dev39 --cases testdata/dev40 --cases testdata/dev41 --cases testdata/dev42 --cases testdata/dev43 --cases testdata/dev44 --cases testdata/dev45 --cases testdata/dev46 --cases testdata/dev47 --cases testdata/dev48 --cases testdata/dev49 --cases testdata/dev50 --cases testdata/dev51 --cases testdata/dev52 --cases testdata/dev53 --cases testdata/dev54 --cases testdata/dev55 --cases testdata/holdout3 --in extractor --in consolidator --in internal/lifecycle || exit 1; \
		../shared/tools/test-phrases-in-code --tests --cases testdata/holdout --in extractor --in consolidator --in internal/lifecycle; \
	fi
	@# A few seconds of real fuzzing of what parses untrusted input, then every test.
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeTurns$$' -fuzztime $(FUZZTIME) ./ingest/
	$(GO) test -run '^$$' -fuzz '^FuzzRedact$$' -fuzztime $(FUZZTIME) ./internal/redact/
	$(GO) test -run '^$$' -fuzz '^FuzzEncodeToken$$' -fuzztime $(FUZZTIME) ./streams/
	@# FuzzStorable spends its first seconds starting a database and JetStream per worker.
	$(GO) test -run '^$$' -fuzz '^FuzzStorable$$' -fuzztime $(FUZZTIME_STORABLE) ./internal/httpapi/
	$(GO) test $(RACE) -timeout $(TEST_TIMEOUT) ./...

test-short: services
	$(GO) test -short ./...

## test-chaos: the outage and chaos checks at full size: PostgreSQL down 5 minutes, a wrong-dims
## embedding endpoint for a minute, and bench chaos over 10,000 turns (300 turns and seconds in `make test`).
test-chaos: services
	ENGRAM_TEST_PG_OUTAGE=5m ENGRAM_TEST_EMBED_FAULT=1m ENGRAM_TEST_CHAOS_TURNS=10000 ENGRAM_TEST_CHAOS_OUTAGE=20s \
		$(GO) test -count=1 -run '^(TestPostgresOutageHoldsTurns|TestEmbeddingWrongDimsThenRecovers|TestChaosSmall)$$' -v -timeout 90m ./cmd/engram/

## test-cluster: the failover tests on a three-node JetStream cluster at full size (10,000 turns; 1,000 in `make test`).
test-cluster: services
	ENGRAM_CLUSTER_TURNS=10000 $(GO) test -count=1 -parallel 1 -run '^(TestJetStreamClusterFailover|TestPostgresRestartMidIngest)$$' -v -timeout 20m ./cmd/engram/

## image: the container image (needs a Docker engine).
image:
	docker build -t engram:local .

vet:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@# go.mod and go.sum say exactly what the code imports.
	$(GO) mod tidy -diff

fmt:
	gofmt -w $$(git ls-files '*.go')

## dev: run engram on embedded defaults (migrations, JetStream in-process, HTTP on :8080) until Ctrl-C.
dev: services build
	./$(BIN) dev

## demo: the main job end to end on embedded defaults (no LLM, no network).
demo: services build
	./$(BIN) demo

bench: services build
	./$(BIN) bench ingest

clean:
	rm -rf bin
