# gcfs: see README.md. Every target works on a fresh machine after .ci/run's installs.
export PATH := /usr/local/go/bin:$(PATH)
GO      ?= go
BIN     := bin/gcfs
FUZZTIME ?= 30s
FUZZMINIMIZE ?= 2s
DEMO    := $(CURDIR)/.demo
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

# make install: gcfs in $(BINDIR), and the mount(8) helpers mount.gcfs and
# mount.fuse.gcfs in $(SBINDIR), /sbin whatever PREFIX is: mount(8) looks for
# helpers only in /sbin (and /sbin/fs.d, /sbin/fs), never on PATH. With them,
# "mount -t gcfs IMAGE DIR", "mount -t fuse.gcfs IMAGE DIR" and fstab lines
# of either type run gcfs itself. Without mount.fuse.gcfs, type fuse.gcfs
# would go through fuse3's mount.fuse3, which runs "gcfs" by name with
# mount(8)'s fixed PATH and so finds only a gcfs in /usr/local/bin, /usr/bin
# or /bin ("gcfs: not found" for any other PREFIX).
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
SBINDIR ?= /sbin
HELPERS := mount.gcfs mount.fuse.gcfs

.PHONY: all build install test vet bench fuzz demo demo-deps clean check-mounts

all: build

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/gcfs

install: build
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR)
	install -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/gcfs
	for h in $(HELPERS); do install -m 0755 $(BIN) $(DESTDIR)$(SBINDIR)/$$h || exit 1; done

vet:
	@test -z "$$(gofmt -l . | tee /dev/stderr)" || { echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...

# Two passes: every package but integration under -race with -short (which
# trims the matrices only the race detector makes slow), then every test at
# full size without -race.
test: vet
	$(GO) test -race -short -timeout 30m $$($(GO) list ./... | grep -v '^gcfs/integration$$')
	$(GO) test -timeout 30m ./...
	@$(MAKE) --no-print-directory check-mounts

# Fails when a test left a gcfs mount behind.
check-mounts:
	@if grep -E ' fuse\.gcfs |^gcfs ' /proc/mounts; then echo "a gcfs mount was left behind" >&2; exit 1; fi

bench: build
	$(GO) test -run '^$$' -bench . -timeout 60m ./... | tee bench.out
	@echo "== speed figures (scripts/bench-summary.sh bench.out)"
	@./scripts/bench-summary.sh bench.out
	@GO=$(GO) ./scripts/bench-squashfs.sh $(BIN)

# Each target fuzzes for FUZZTIME; a new interesting input is minimised for at
# most FUZZMINIMIZE (Go's default, 60s, left little time to fuzz). The output
# ends with the execs of every target.
fuzz:
	@set -e; log=$$(mktemp); sum=$$(mktemp); trap 'rm -f $$log $$sum' EXIT; \
	for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$t"; \
	    if ! $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) $$pkg >$$log 2>&1; then \
	      cat $$log; echo "fuzz $$pkg $$t: FAILED"; exit 1; fi; \
	    execs=$$(grep -o 'execs: [0-9]*' $$log | tail -n 1 | cut -d' ' -f2); \
	    echo "  $$t: $${execs:-0} execs in $(FUZZTIME)" | tee -a $$sum; \
	  done; done; \
	echo "fuzz: execs per target"; cat $$sum

demo: demo-deps build
	./scripts/demo.sh $(BIN) $(DEMO)

# What the demo runs besides gcfs: fusermount3 (fuse3) and getfattr (attr).
demo-deps:
	@need=""; \
	command -v fusermount3 >/dev/null 2>&1 || need="$$need fuse3"; \
	command -v getfattr >/dev/null 2>&1 || need="$$need attr"; \
	command -v file >/dev/null 2>&1 || need="$$need file"; \
	if [ -n "$$need" ]; then \
	  echo "installing$$need"; \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $$need; \
	fi

clean:
	rm -rf bin $(DEMO) bench.out
