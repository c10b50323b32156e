# fsbox — build, test, generate, bench.
GO        ?= go
BIN       ?= bin/fsbox
PREFIX    ?= /usr/local
FUZZTIME  ?= 10s
PKGS      := ./...

.PHONY: all build test vet fmt-check race golden fuzz bench bench-quick generate check-generated install links clean

all: build

# urfave_cli_no_docs leaves out urfave/cli's markdown/man renderer, whose
# package init alone costs milliseconds at every start; internal/gendocs
# (built without the tag) renders the man pages instead.
TAGS      ?= urfave_cli_no_docs

build:
	$(GO) build -trimpath -tags $(TAGS) -o $(BIN) ./cmd/fsbox

# The test command CI runs (.ci/run) and README shows.
test: fmt-check vet
	$(GO) test -race -count=1 $(PKGS)

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l cmd internal pkg); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# Rewrite the testscript goldens from the current behaviour; review the diff.
golden:
	$(GO) test ./cmd/fsbox -run TestScript -update

# Each fuzz target briefly (FUZZTIME each); the seed corpora also run in `make test`.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$t ($(FUZZTIME))"; \
	    $(GO) test $$pkg -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME); \
	  done; \
	done

# Go benchmarks, then whole-process ratios against the GNU tools, ripgrep
# and fd where installed. Data is generated under BENCHDATA (about 1.1 GiB).
BENCHDATA ?= /tmp/fsbox-bench
bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/...
	$(GO) run ./internal/bench -fsbox $(BIN) -data $(BENCHDATA)

bench-quick: build
	$(GO) run ./internal/bench -fsbox $(BIN) -data $(BENCHDATA) -quick

generate:
	$(GO) generate ./...

check-generated:
	$(GO) test ./internal/gendocs -count=1

install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/fsbox

links: build
	$(BIN) links $(dir $(BIN))

clean:
	rm -rf bin
