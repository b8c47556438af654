# The two commands a fresh machine needs (see README.md).
GO ?= go
# STAMP: the checkout's revision, linked into every binary make runs or
# builds (aebench --version, summary.json). go run never stamps VCS data and
# GOFLAGS=-buildvcs=false turns go build's off; an -ldflags on the command
# line wins over GOFLAGS. Outside a git checkout the binary says "unknown".
REV := $(shell git rev-parse HEAD 2>/dev/null)
DIRTY := $(shell test -n "$$(git status --porcelain --untracked-files=no 2>/dev/null)" && echo true)
STAMP = -ldflags "-X github.com/aebench/aebench/harness/runner.linkedRevision=$(REV) -X github.com/aebench/aebench/harness/runner.linkedModified=$(DIRTY)"
AEBENCH = $(GO) run $(STAMP) ./cmd/aebench

.PHONY: version test bench build vet baseline regress capacity claims mutants gate-mutants example drivers peers peer-check

# test: every package's tests; they spawn their own redis-server processes.
# The BullMQ driver's packages are installed first where npm is present (a
# driver whose runtime is missing is skipped with how to install it).
# go test runs two test binaries at a time on 2 cores, in the order named:
# the longest packages go first, so the 8-minute harness/runner is not left
# to start after every other package (./... names it 30th: make test took
# 13 minutes with it last, most of it waiting on clocks at 0.74 cores).
SLOW_TESTS = ./harness/runner/ ./conformance/ ./harness/lab/
test: drivers
	$(GO) test -count=1 -timeout 15m $(SLOW_TESTS) ./...
	$(MAKE) example

# drivers: the Node packages of drivers/bullmq (npm ci, pinned by its
# package-lock.json), when npm is there and they are not yet installed;
# the Python drivers' virtual environments, drivers/{rq,celery}/.venv
# (Debian's python3 and python3-venv; every package pinned with its hash in
# the driver's requirements.lock), each when it is not yet made.
PY_DRIVERS = rq:rq celery:celery
drivers:
	@if command -v npm >/dev/null 2>&1 && [ ! -d drivers/bullmq/node_modules/bullmq ]; then \
		cd drivers/bullmq && npm ci --no-audit --no-fund --loglevel=error; fi
	@for d in $(PY_DRIVERS); do dir=drivers/$${d%%:*}; bin=$${d##*:}; \
		if [ ! -x $$dir/.venv/bin/$$bin ] && /usr/bin/python3 -c 'import ensurepip' >/dev/null 2>&1; then \
			rm -rf $$dir/.venv && /usr/bin/python3 -m venv $$dir/.venv && \
			$$dir/.venv/bin/pip install -q --disable-pip-version-check --require-hashes --no-deps \
				-r $$dir/requirements.lock || exit 1; fi; done

# peers: the job systems people run (BullMQ, Sidekiq, RQ, asynq) beside zset
# and dual, then under SIGKILL, and each driver's overhead against its
# plain loop (about 6 minutes).
peers: drivers
	$(AEBENCH) run scenarios/peers.yaml
	$(AEBENCH) run scenarios/peers-crash.yaml
	$(AEBENCH) drivers --overhead

# peer-check: aebench's asynq and floor against plain programs written
# outside the harness (bench/plain), on one Redis (11 rounds: with the
# command's 7 the floor's median fell to 0.86x on a noisy afternoon and
# passed at 0.96x with 11, docs/results.md 2026-11-29), then Redis's
# instructions a job on both sides under callgrind (about 9 minutes).
peer-check:
	$(AEBENCH) peer-check --rounds 11

# bench: the main job, scenarios/quick.yaml on an embedded Redis; writes results/.
bench:
	$(AEBENCH) run scenarios/quick.yaml

# claims: the seeds' claims (verdicts over 6 repeats) and flaws (each seed variant against its
# corrected backend); rewrites README.md's generated block (about 25 minutes, most of it the
# backlog claim's twelve loads of a million jobs).
claims:
	$(AEBENCH) claims --readme README.md

# mutants: each flaw row's mutants (mutants/*.patch), applied one at a time to a copy of the tree:
# the row's fidelity test must fail on every one and pass on the unchanged tree (about a minute).
mutants:
	mutants/run

# gate-mutants: each regression of mutants/gate/*.patch (an extra command on the hand-off, pop and
# recovery paths, +3% Lua work in each claim and complete, +16 bytes a record, +1 allocation a
# claimed job) built and run through ci-cost, which must catch it naming its metric; and an A/A
# pair that must pass. Needs valgrind; about 25 minutes. Table: results/gate-mutants-*/table.md.
gate-mutants:
	GO=$(GO) mutants/gate-run

# build: every package, and the aebench binary in the checkout (./aebench).
build:
	$(GO) build ./...
	$(GO) build $(STAMP) -o aebench ./cmd/aebench

vet:
	$(GO) vet ./...

# capacity: scenarios/capacity.yaml, every strategy beside the floor and
# asynq at claim/ack batches 1 and 100 on both clients (about 5 minutes).
capacity:
	$(AEBENCH) run scenarios/capacity.yaml

# baseline: scenarios/ci.yaml into BASE/ci and scenarios/ci-cost.yaml (Redis
# under callgrind) into BASE/ci-cost; BASE defaults to
# results/baseline-<UTC time>. `make regress BASE=...` compares against it.
# Without valgrind both fail (the deterministic gate cannot run) unless
# NO_COST_GATE=1 says to gate on ci.yaml alone, which they then print.
BASE ?=
NO_COST_GATE ?=
BASEDIR := $(or $(BASE),results/baseline-$(shell date -u +%Y%m%dT%H%M%SZ))
baseline:
	$(AEBENCH) run scenarios/ci.yaml --out $(BASEDIR)/ci
	@if command -v callgrind_control >/dev/null 2>&1; then \
		$(AEBENCH) run scenarios/ci-cost.yaml --out $(BASEDIR)/ci-cost; \
	elif [ -n "$(NO_COST_GATE)" ]; then echo "make baseline: NO_COST_GATE: scenarios/ci-cost.yaml NOT run (valgrind not installed)" >&2; \
	else echo "make baseline: valgrind is not installed, so scenarios/ci-cost.yaml cannot run: apt-get install valgrind, or NO_COST_GATE=1" >&2; exit 3; fi

# regress: scenarios/ci.yaml and ci-cost.yaml into a new directory, each
# compared against BASE/<name> (see docs/ci.md, "Gating CI on a
# regression"). Make exits 2 on any failure; scripts/regress.sh, which this
# calls, exits with compare's own code (1 correctness, 2 refused, 3
# infrastructure, 4 regression).
regress:
	@test -n "$(BASE)" || { echo "make regress: give BASE=dir (a results directory from make baseline)" >&2; exit 2; }
	GO=$(GO) scripts/regress.sh --base-dir $(BASE) $(if $(NO_COST_GATE),--no-cost-gate)

# example: the out-of-tree store of examples/custom-store (its own module):
# the conformance suite on it, then a short run of its scenario through its
# own aebench binary. The parent module's ./... does not reach it.
example:
	cd examples/custom-store && $(GO) vet ./... && $(GO) test -count=1 ./... && \
		out=$$(mktemp -d) && $(GO) run . run scenario.yaml --duration 3s --out "$$out" && rm -rf "$$out"

# version: what `aebench --version` says of the binary make runs (the
# revision stamped as above).
version:
	$(AEBENCH) --version
