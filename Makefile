# The two commands a fresh machine needs (see README.md).
GO ?= go

.PHONY: test bench build vet

# test: every package's tests; they spawn their own redis-server processes.
test:
	$(GO) test -count=1 -timeout 15m ./...

# bench: the main job, scenarios/quick.yaml on an embedded Redis; writes results/.
bench:
	$(GO) run ./cmd/aebench run scenarios/quick.yaml

build:
	$(GO) build ./...

vet:
	$(GO) vet ./...
