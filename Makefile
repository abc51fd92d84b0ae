# eventhub developer commands. `make test` is what CI runs (through .ci/run).
GO        ?= go
PKGS      ?= ./...
BENCHTIME ?= 1s
BENCHCOUNT ?= 5
# golangci-lint, pinned; `go run` builds it once into the Go build cache (a few minutes on
# a new machine, instant after). An installed golangci-lint of the same version is used as is.
GOLANGCI_VERSION ?= v2.15.0
GOLANGCI  ?= $(shell v=$$(golangci-lint --version 2>/dev/null | grep -o 'version [0-9.]*' | cut -d' ' -f2); \
	if [ "v$$v" = "$(GOLANGCI_VERSION)" ]; then echo golangci-lint; \
	else echo "$(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION)"; fi)
FUZZTIME  ?= 30s

.PHONY: run test test-unit test-fault lint bench bench-e2e fuzz

## run: start the hub on its embedded default (one SQLite file under ./data, no external service)
run:
	$(GO) run ./cmd/hub run

## test: lint, then every test with -race against the real services, then the fault tests,
## then the multi-replica test
test: lint test-unit test-fault test-ha

test-unit:
	$(GO) test -race -count=1 -timeout 12m $(PKGS)

## test-fault: tests behind the `fault` build tag disturb a shared service (they force-close
## RabbitMQ connections with rabbitmqctl), so they run alone, after the main suite. Fault
## tests that only touch servers they start themselves (Redis) stay in the main suite.
test-fault:
	$(GO) test -race -count=1 -timeout 8m -tags fault -run '^TestFault' ./transports/rabbitmq/

## test-ha: the multi-replica fault test (build tag `ha`): three hub binaries on one
## PostgreSQL schema, one Redis group and one RabbitMQ queue, one killed with SIGKILL and one
## stopped with SIGTERM mid-flow. It only touches its own schema, keys, exchange and queue and
## only kills the processes it started, so it disturbs no shared service; it has its own CI
## step because it runs for a minute or more and prints its accounting table (-v).
.PHONY: test-ha
test-ha:
	$(GO) vet -tags ha ./cmd/hub/hatest/
	$(GO) test -count=1 -timeout 15m -tags ha -v -run '^TestHA_' ./cmd/hub/hatest/

## bench-ha: events per second through 1, 2 and 3 hub replicas on one PostgreSQL schema
## (ingress -> outbox -> Redis, webhook deliveries, kdbstream appends), as ratios to one
## replica; docs/scaling.md has the figures and the capacity model built on them.
HA_BENCHTIME ?= 1000x
HA_BENCHCOUNT ?= 3
.PHONY: bench-ha
bench-ha:
	@mkdir -p .bench
	$(GO) test -p 1 -tags ha -run '^$$' -bench 'BenchmarkHA_' -benchtime $(HA_BENCHTIME) -count $(HA_BENCHCOUNT) -timeout 60m ./cmd/hub/hatest/ | grep -v '^{' | tee .bench/ha-raw.txt
	@echo
	@$(GO) run ./internal/cmd/benchtable < .bench/ha-raw.txt | tee .bench/ha-table.txt

## lint: go vet, gofmt, then golangci-lint with .golangci.yaml (errcheck, staticcheck,
## unused, misspell, errorlint, depguard's layering rules, ...)
lint:
	$(GO) vet ./...
	$(GO) vet -tags fault ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GOLANGCI) run ./...

## bench: every comparison benchmark beside its baselines, printed as hub-vs-baseline ratios.
## The suite runs BENCHCOUNT rounds of one run per benchmark (not -count, which puts each
## benchmark's runs back to back), so a hub and its baselines are measured seconds apart
## in every round; RATIO is the median of the per-round ratios, RANGE their spread.
## BENCH narrows it to benchmarks matching a regexp (make bench PKGS=./auth/ BENCH=JWT).
BENCH ?= .
bench:
	@mkdir -p .bench
	@: > .bench/raw.txt; : > .bench/failed.txt
	@for r in $$(seq 1 $(BENCHCOUNT)); do \
	  echo "== bench round $$r of $(BENCHCOUNT)" >&2; \
	  ( $(GO) test -p 1 -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) -count 1 -timeout 60m $(PKGS) 2>&1; echo "exit $$?" ) \
	    | tee .bench/round.txt | grep --line-buffered -E '^(Benchmark|--- FAIL|FAIL|panic)' >&2 || true; \
	  tail -n 1 .bench/round.txt | grep -qx 'exit 0' || \
	    { echo "round $$r:"; grep -E '^(--- FAIL|FAIL|panic)|_test\.go:[0-9]+:' .bench/round.txt; } >> .bench/failed.txt; \
	  grep -v -e '^ok ' -e '^exit ' .bench/round.txt >> .bench/raw.txt; \
	done
	@echo
	@$(GO) run ./internal/cmd/benchtable < .bench/raw.txt | tee .bench/table.txt
	@if [ -s .bench/failed.txt ]; then echo; echo "FAILED (their rows are missing or from fewer rounds):"; cat .bench/failed.txt; exit 1; fi

## fuzz: each fuzz target for FUZZTIME (default 30s); the seed corpora live in testdata/fuzz
fuzz:
	@set -e; for f in $$(grep -rl --include='*_test.go' '^func Fuzz' .); do \
	  dir=$$(dirname $$f); \
	  for t in $$(grep -o '^func Fuzz[A-Za-z0-9_]*' $$f | cut -d' ' -f2); do \
	    echo "== $$dir $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$dir; \
	  done; \
	done

## screenshots: run the browser tests and write their screenshots into docs/screenshots
## (the README and docs/console.md show them); other test runs leave them as they are.
.PHONY: screenshots
screenshots:
	EVENTHUB_SCREENSHOTS=1 $(GO) test -count=1 -run '^TestUI_' ./cmd/hub/

## bench-e2e: the hub binary end to end (ingress -> webhook receiver on loopback) on
## PostgreSQL and the embedded SQLite default, beside a raw signed-POST loop; a few
## minutes. E2EFLAGS passes flags (e.g. E2EFLAGS='-events 5000 -runs 10').
E2EFLAGS ?=
bench-e2e:
	$(GO) run ./internal/cmd/e2ebench $(E2EFLAGS)
