# The two commands a fresh machine needs (see README.md).
GO ?= go
# -buildvcs=auto stamps the git revision into the binary (aebench version,
# summary.json) where git can read the checkout, and is silent elsewhere.
AEBENCH = $(GO) run -buildvcs=auto ./cmd/aebench

.PHONY: test bench build vet baseline regress capacity claims example

# test: every package's tests; they spawn their own redis-server processes.
test:
	$(GO) test -count=1 -timeout 15m ./...
	$(MAKE) example

# bench: the main job, scenarios/quick.yaml on an embedded Redis; writes results/.
bench:
	$(AEBENCH) run scenarios/quick.yaml

# claims: the seeds' claims (verdicts over 6 repeats) and flaws (each seed variant against its
# corrected backend); rewrites README.md's generated block (about 8 minutes).
claims:
	$(AEBENCH) claims --readme README.md

build:
	$(GO) build ./...

vet:
	$(GO) vet ./...

# capacity: scenarios/capacity.yaml, every strategy beside the floor and
# asynq at claim/ack batches 1 and 100 on both clients (about 5 minutes).
capacity:
	$(AEBENCH) run scenarios/capacity.yaml

# baseline: scenarios/ci.yaml into BASE (default results/baseline-<UTC
# time>), the directory `make regress BASE=...` compares against.
BASE ?=
baseline:
	$(AEBENCH) run scenarios/ci.yaml --out $(or $(BASE),results/baseline-$(shell date -u +%Y%m%dT%H%M%SZ))

# regress: scenarios/ci.yaml into a new directory, compared against BASE
# (see README.md, "Gating CI on a regression"). Make exits 2 on any
# failure; scripts/regress.sh, which this calls, exits with compare's own
# code (1 correctness, 2 refused, 3 infrastructure, 4 regression).
regress:
	@test -n "$(BASE)" || { echo "make regress: give BASE=dir (a results directory from make baseline)" >&2; exit 2; }
	GO=$(GO) scripts/regress.sh --base-dir $(BASE)

# example: the out-of-tree store of examples/custom-store (its own module):
# the conformance suite on it, then a short run of its scenario through its
# own aebench binary. The parent module's ./... does not reach it.
example:
	cd examples/custom-store && $(GO) vet ./... && $(GO) test -count=1 ./... && \
		out=$$(mktemp -d) && $(GO) run . run scenario.yaml --duration 3s --out "$$out" && rm -rf "$$out"
