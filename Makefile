# fsbox — build, test, generate, bench.
GO        ?= go
BIN       ?= bin/fsbox
PREFIX    ?= /usr/local
FUZZTIME  ?= 10s
PKGS      := ./...

.PHONY: all build cross test test-s3 test-deps s3server vet fmt-check race golden fuzz bench bench-quick bench-baseline bench-kernel generate check-generated install links clean

all: build

# urfave_cli_no_docs leaves out urfave/cli's markdown/man renderer, whose
# package init alone costs milliseconds at every start; internal/gendocs
# (built without the tag) renders the man pages instead.
TAGS      ?= urfave_cli_no_docs

# CGO_ENABLED=0: a static binary (quicker to start) whose Landlock setup
# uses syscall.AllThreadsSyscall.
# VERSION: git describe when this is a git checkout; --version adds the
# commit and Go version from the build info (go install fills those too).
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null)
LDFLAGS   := $(if $(VERSION),-X github.com/fsbox/fsbox/internal/cli.Version=$(VERSION))

# fsbox-mcp is the MCP server (fsbox with it built in): a host runs it
# directly, and fsbox runs it from beside itself for `fsbox mcp`. A binary
# of its own: the MCP SDK's package init (about 0.9 ms) would otherwise be
# paid by every fsbox call. (gojq, for --jq, is in fsbox: a second process
# start would cost a --jq call more than gojq costs it, and fsbox's copy,
# internal/jq/gojq, builds its builtins when a --jq program is compiled,
# not at every start.)
MCPBIN    := $(dir $(BIN))fsbox-mcp
# fsbox-s3 is fsbox with the S3 client (object roots, s3:// in a policy):
# fsbox and fsbox-mcp hand such a call over to the fsbox-s3 beside them,
# so that the client's package initialisation (tens of milliseconds)
# is never paid by a local call.
S3BIN     := $(dir $(BIN))fsbox-s3

# Each binary is linked to a temporary name and then copied into place:
# the linker writes its output through mmap, which leaves the file in the
# page cache as 4 KiB pages, and every exec of it then takes about 0.25 ms
# more page faults than the same bytes written sequentially (as install,
# cp, go install or a read from disk leave them) until the cache drops it.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=auto -tags $(TAGS) -ldflags '$(LDFLAGS)' -o $(BIN).link ./cmd/fsbox
	CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=auto -tags $(TAGS) -ldflags '$(LDFLAGS)' -o $(MCPBIN).link ./cmd/fsbox-mcp
	cp $(BIN).link $(BIN).new && mv -f $(BIN).new $(BIN) && rm -f $(BIN).link
	cp $(MCPBIN).link $(MCPBIN).new && mv -f $(MCPBIN).new $(MCPBIN) && rm -f $(MCPBIN).link
	CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=auto -tags $(TAGS) -ldflags '$(LDFLAGS)' -o $(S3BIN) ./cmd/fsbox-s3

# Build for every supported platform and vet it, tests included (Linux-
# and Unix-only parts, and the tests that make FIFOs, sit behind build tags).
CROSS ?= linux/amd64 linux/arm64 darwin/arm64 windows/amd64
cross:
	@set -e; for p in $(CROSS); do \
	  os=$${p%/*}; arch=$${p#*/}; ext=; [ $$os = windows ] && ext=.exe; \
	  echo "build $$os/$$arch"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -tags $(TAGS) -o bin/cross/fsbox-$$os-$$arch$$ext ./cmd/fsbox; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -tags $(TAGS) -o bin/cross/fsbox-mcp-$$os-$$arch$$ext ./cmd/fsbox-mcp; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) vet -tags $(TAGS) ./...; \
	done

# Tests are hermetic: they run with a home of their own (a fresh temporary
# directory, removed after), so every journal, state, config and cache a
# test or a program it starts writes (fsbox's default journal, npm's cache
# and the node client's install) lies below it, never in $HOME. Go's own
# caches and settings, and npm's user config (its registry), are read from
# where they are.
HERMETIC = home=$$(mktemp -d) && trap 'rm -rf "$$home"' EXIT && \
	export GOCACHE="$$($(GO) env GOCACHE)" GOMODCACHE="$$($(GO) env GOMODCACHE)" GOPATH="$$($(GO) env GOPATH)" \
	  GOENV="$$($(GO) env GOENV)" npm_config_userconfig="$$HOME/.npmrc" && \
	export HOME="$$home" XDG_STATE_HOME="$$home/state" XDG_CACHE_HOME="$$home/cache" \
	  XDG_CONFIG_HOME="$$home/config" npm_config_cache="$$home/npm" &&

# The test command CI runs (.ci/run) and README shows.
#
# Where the CPU goes is in README's Development section. In short:
#
#   - Every command is built once (FSBOX_TEST_BIN, internal/testbin) for
#     the tests that run fsbox as a process, instead of each test site
#     linking its own; with go's default flags (no -trimpath, no
#     CGO_ENABLED=0), so it reuses what go vet compiled.
#   - Every test runs under the race detector but two kinds, which run
#     plain, at the same time as the raced packages: cmd/fsbox, whose
#     goldens start its test binary as fsbox about 1,800 times (a raced
#     start costs about four times a plain one), and PLAIN_TESTS, single
#     calls over many MiB whose point is a size or a memory bound, where
#     the detector multiplies the time by 5-10 and finds nothing the raced
#     tests of the same code (its parallel paths) do not.
#   - Every property test runs TEST_PROPERTY_N sequences (the journal's
#     2 crashed children) and the batch crash test TEST_CRASH_N runs;
#     CI's `make fuzz` runs them by the hundred.
#
# FSBOX_TEST_CACHE keeps the node client's install (testdata/mcp-node)
# outside the tree and the tests' home, so it is made once per machine.
# TEST_TIMEOUT is per package: at least 4x the slowest package's time on
# a quiet machine, so a loaded machine slows the run rather than failing.
TEST_TIMEOUT    ?= 25m
TESTCACHE       ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/fsbox-test
TEST_PROPERTY_N ?= 8
TEST_CRASH_N    ?= 12
PLAIN_TESTS     := ^(TestSortMemoryBound|TestPatchMemoryBounded|TestLongLinesNeverHeldWhole|TestGrepNoLineSkipped|TestGrepStreamLongLine|TestSortAgainstGNU)$$
test: fmt-check vet
	@$(HERMETIC) export FSBOX_TEST_BIN="$$home/bin" FSBOX_TEST_CACHE="$(TESTCACHE)" \
	    FSBOX_PROPERTY_N=$(TEST_PROPERTY_N) FSBOX_PROPERTY_CRASHES=2 FSBOX_CRASH_N=$(TEST_CRASH_N) && \
	  $(GO) build -tags $(TAGS) -o "$$FSBOX_TEST_BIN/" ./cmd/... && \
	  race=$$($(GO) list $(PKGS) | grep -vx 'github.com/fsbox/fsbox/cmd/fsbox') && \
	  { $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) -skip '$(PLAIN_TESTS)|$(S3_TESTS)' $$race & pid=$$!; \
	    $(GO) test -count=1 -timeout $(TEST_TIMEOUT) -skip '$(S3_TESTS)' ./cmd/fsbox; plain=$$?; \
	    $(GO) test -count=1 -timeout $(TEST_TIMEOUT) -run '$(PLAIN_TESTS)' ./pkg/ops || plain=1; \
	    wait $$pid; raced=$$?; test $$plain = 0 && test $$raced = 0; }

# The object-store tests (issues 43-44: S3 roots against a real S3 server
# the tests start on 127.0.0.1), run by .ci/run after make test with a
# budget of their own: every test named TestS3..., which `make test`
# skips. The server is versitygw (an S3 gateway over a directory), pinned
# in its own module (internal/tools/s3server, so fsbox's go.mod does not
# gain its dependencies) and built into TESTCACHE once (a cold build
# takes minutes); internal/s3test starts it, found through FSBOX_VERSITYGW.
S3SERVER ?= $(TESTCACHE)/versitygw-v1.8.0
S3_TESTS := ^TestS3
s3server: $(S3SERVER)
$(S3SERVER):
	@mkdir -p $(dir $(S3SERVER))
	cd internal/tools/s3server && $(GO) build -o $(abspath $(S3SERVER)).new github.com/versity/versitygw/cmd/versitygw
	mv -f $(S3SERVER).new $(S3SERVER)

# The bucket goldens (cmd/fsbox-s3's TestS3Script) run plain, as make
# test runs cmd/fsbox's: they start the test binary as fsbox hundreds of
# times, and a raced start costs about four times a plain one.
test-s3: s3server
	@$(HERMETIC) export FSBOX_VERSITYGW="$(S3SERVER)" && \
	  race=$$($(GO) list $(PKGS) | grep -vx 'github.com/fsbox/fsbox/cmd/fsbox-s3') && \
	  $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) -run '$(S3_TESTS)' $$race && \
	  $(GO) test -count=1 -timeout $(TEST_TIMEOUT) -run '$(S3_TESTS)' ./cmd/fsbox-s3

# What the tests need beyond Go, for a fresh machine (.ci/run calls it):
# node and npm (Debian's), then the MCP client and the reference server
# (testdata/mcp-node, npm ci at the lock file's versions) into TESTCACHE,
# and the S3 server make test-s3 starts (s3server).
test-deps: s3server
	@command -v node >/dev/null && command -v npm >/dev/null || \
	  { apt-get update -qq && apt-get install -y -qq nodejs npm; }
	@$(HERMETIC) FSBOX_TEST_CACHE="$(TESTCACHE)" CI=true $(GO) test -count=1 -run '^TestNodeClientInstalled$$' ./internal/mcpserver

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l cmd internal pkg); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# Rewrite the testscript goldens from the current behaviour; review the diff.
golden:
	$(GO) test ./cmd/fsbox -run TestScript -update
	$(GO) test ./internal/cli -run TestHelpExamplesRun -count=1 -update-examples

# Each fuzz target briefly (FUZZTIME each: a duration, or a count of inputs
# such as 10000x, which CI uses); the seed corpora also run in `make test`.
# Then PROPERTY_N random policy/call sequences of the sandbox property test
# (`make test` runs TEST_PROPERTY_N) and 20*PROPERTY_N generated files
# searched both through mapped windows and by reading (`make test`:
# 20*TEST_PROPERTY_N).
# Each sequence now also runs nested policies, several writable roots,
# patches under toggles and a whole-tree diff per step (about 0.25 s each
# here): 1000 of them take about 4 minutes, hence the explicit timeout.
PROPERTY_N ?= 1000
# Crash runs of a 20-file batch killed at random points (make test:
# TEST_CRASH_N).
CRASH_N ?= 200
# Sequences of the journal's property (tenants sharing a journal dir, a
# loose and a strict policy on one journal; about 0.2 s each) and its
# crash children (a plan left under a stricter policy; make test: TEST_PROPERTY_N
# and 2).
JOURNAL_N ?= 200
JOURNAL_CRASHES ?= 20
# Sequences of the narrowing property (issue 39: narrowing never widens;
# make test: TEST_PROPERTY_N).
NARROW_N ?= 200
fuzz:
	@set -e; $(HERMETIC) for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$t ($(FUZZTIME))"; \
	    $(GO) test $$pkg -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME); \
	  done; \
	done
	@$(HERMETIC) FSBOX_PROPERTY_N=$(PROPERTY_N) $(GO) test ./pkg/ops -run '^(TestPropertySequences|TestGrepMappedAgreesWithRead)$$' -count=1 -timeout 30m
	@$(HERMETIC) FSBOX_CRASH_N=$(CRASH_N) $(GO) test ./pkg/sandbox -run '^TestBatchCrashRecovery$$' -count=1 -timeout 30m
	@$(HERMETIC) FSBOX_PROPERTY_N=$(JOURNAL_N) FSBOX_PROPERTY_CRASHES=$(JOURNAL_CRASHES) $(GO) test ./pkg/ops -run '^TestPropertyJournal' -count=1 -timeout 30m
	@$(HERMETIC) FSBOX_PROPERTY_N=$(NARROW_N) $(GO) test ./pkg/ops -run '^TestPropertyNarrowNeverWidens$$' -count=1 -timeout 30m

# Go benchmarks, then whole-process ratios against the GNU tools, ripgrep
# and fd where installed, and the hostile-size rows (fsbox alone). Data is
# generated under BENCHDATA (about 1.4 GiB).
BENCHDATA ?= /tmp/fsbox-bench
# KERNEL=DIR, an extracted Linux source tree (apt-get install linux-source,
# then untar /usr/src/linux-source-*.tar.xz), adds the grep-kernel-* rows:
# ripgrep's kernel pattern set against rg. The bench never fetches it.
KERNEL ?=
KERNELFLAG = $(if $(KERNEL),-kernel $(KERNEL))
# The s3-* rows (object roots on versitygw, against a raw-SDK program)
# use the server make s3server builds.
bench: build s3server
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/...
	FSBOX_VERSITYGW="$(S3SERVER)" $(GO) run ./internal/bench -fsbox $(BIN) -data $(BENCHDATA) -shell $(KERNELFLAG)

# The kernel rows alone, median of 5 interleaved runs a side.
bench-kernel: build
	@test -n "$(KERNEL)" || { echo "usage: make bench-kernel KERNEL=/path/to/linux-source"; exit 2; }
	$(GO) run ./internal/bench -fsbox $(BIN) -data $(BENCHDATA) -shell -kernel $(KERNEL) -only '^grep-kernel-' -min-runs 5

bench-quick: build
	$(GO) run ./internal/bench -fsbox $(BIN) -data $(BENCHDATA) -quick

# The same rows (-shell twins and MCP rows included) timed against an
# earlier build, BASELINE=path/to/its/fsbox (its fsbox-mcp, or for a build
# before fsbox-mcp its fsbox-full, beside it),
# interleaved run for run, rivals left out; rows slower than the baseline
# by more than 5 % and 0.2 ms are flagged REGRESSION.
bench-baseline: build
	@test -n "$(BASELINE)" || { echo "usage: make bench-baseline BASELINE=/path/to/old/fsbox"; exit 2; }
	$(GO) run ./internal/bench -fsbox $(BIN) -data $(BENCHDATA) -shell -baseline $(BASELINE) $(KERNELFLAG)

generate:
	$(GO) run ./internal/gendocs/cmd -root .

check-generated:
	$(GO) test ./internal/gendocs -count=1

install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
	  $(DESTDIR)$(PREFIX)/share/zsh/site-functions \
	  $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/fsbox
	install -m 0755 $(MCPBIN) $(DESTDIR)$(PREFIX)/bin/fsbox-mcp
	install -m 0755 $(S3BIN) $(DESTDIR)$(PREFIX)/bin/fsbox-s3
	install -m 0644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 completions/fsbox.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/fsbox
	install -m 0644 completions/_fsbox $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_fsbox
	install -m 0644 completions/fsbox.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/fsbox.fish

links: build
	$(BIN) links $(dir $(BIN))

clean:
	rm -rf bin
