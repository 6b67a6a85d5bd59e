# Everything a newcomer needs: `make run` starts the whole stack, `make test` runs every test
# against real PostgreSQL and real NATS JetStream.

SHELL := /bin/bash
GO    ?= go
# Binaries live with the stack's state: DATA_DIR (default .data) decides both.
BIN   ?= $(or $(DATA_DIR),.data)/bin
# Every package of every module of the workspace (go.work), as ./dir/... patterns.
PKGS  := $(shell $(GO) list -m -f '{{.Dir}}' | sed "s|^$(CURDIR)|.|; s|$$|/...|")
SERVICES := gateway merchant pool payment-projection webhook-dispatcher ctl devstack
# -p 1: one package at a time. The black-box packages (e2e, e2e/chaos) each start whole stacks
# and measure recoveries against fault windows; two of them at once on 2 cores starve each
# other (a chaos run then misses fault kinds, webhook attempts time out).
TEST_FLAGS ?= -race -count=1 -timeout 30m -p 1

.PHONY: run build chaos test test-short fuzz bench bench-dashboard screenshots lint generate check-generated tidy clean help

help: ## Show the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

build: ## Build every service binary into $DATA_DIR/bin (.data/bin)
	@mkdir -p $(BIN)
	@echo "building $(words $(SERVICES)) programs and nats-server into $(BIN); the first build downloads the modules and compiles everything (about 1-5 minutes on 2 cores), later ones take seconds"
	@i=0; for s in $(SERVICES); do i=$$((i+1)); printf '  [%d/%d] %s\n' $$i $(words $(SERVICES)) $$s; \
		$(GO) build -o $(BIN)/ ./services/$$s/cmd/... || exit 1; done
	@echo "  nats-server (the version the platform is built and tested with; at least 2.10 is needed)"
	@cd pkg && $(GO) build -o $(abspath $(BIN))/nats-server github.com/nats-io/nats-server/v2
	@echo "built: $(SERVICES) nats-server -> $(BIN)"

run: build ## Run the whole stack in the foreground (Ctrl-C stops it); CLUSTER=1: 3 NATS nodes, 2 replicas of each service
	DEV_CLUSTER=$(CLUSTER) BIN_DIR=$(BIN) $(BIN)/devstack

chaos: build ## Faults under load, then the money invariants (CHAOS_DURATION=5m, CHAOS_SEED, CHAOS_RATE=300)
	@$(GO) build -o $(BIN)/chaos ./e2e/chaos/cmd/chaos
	BIN_DIR=$(BIN) $(BIN)/chaos

test: ## Run every test (race detector on) against real PostgreSQL and NATS, the dashboard's in chromium
	@bash scripts/ensure-postgres.sh
	@bash scripts/ensure-chromium.sh
	$(GO) test $(TEST_FLAGS) $(PKGS)
	@echo "the end-to-end benchmarks, once each (they must keep working: docs/BENCHMARKS.md)"
	$(GO) test -count=1 -run '^$$' -bench . -benchtime 1x -timeout 20m ./e2e/

# The request decoders' native fuzz targets (services/gateway/ports/decoders_fuzz_test.go).
FUZZ_TARGETS = FuzzDecodeCreateCompany FuzzDecodeCreateMerchant FuzzDecodeMerchantStatus FuzzDecodePoolSettings \
	FuzzDecodePoolDeposit FuzzDecodeWebhookConfig FuzzDecodePaymentRequest FuzzPoolFilter FuzzPaymentFilter \
	FuzzMerchantLedgerLimit FuzzWebhookLogFilter
FUZZTIME ?= 20s

fuzz: ## Attack a live stack with 200,000 requests from the OpenAPI document (FUZZ_REQUESTS, FUZZ_SEED; report in $DATA_DIR/fuzz-report.txt), then each request decoder's native fuzz target for FUZZTIME (20s)
	@mkdir -p $(or $(DATA_DIR),.data)
	FUZZ_REQUESTS=$(or $(FUZZ_REQUESTS),200000) FUZZ_REPORT=$(abspath $(or $(DATA_DIR),.data))/fuzz-report.txt \
		$(GO) test -count=1 -run '^TestFuzzAPIFromDocument$$' -timeout 90m ./e2e/
	@cat $(or $(DATA_DIR),.data)/fuzz-report.txt
	@for t in $(FUZZ_TARGETS); do echo "==> $$t"; \
		$(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) ./services/gateway/ports/ || exit 1; done

test-short: ## Run the tests without the race detector
	$(GO) test -count=1 $(PKGS)

bench: ## Run the benchmarks recorded in docs/BENCHMARKS.md (one after the other: 2 cores)
	$(GO) test -run '^$$' -bench . -benchtime 3s ./pkg/eventstore/ ./pkg/projection/
	$(GO) test -run '^$$' -bench . -benchtime 100000x ./pkg/relay/
	$(GO) test -run '^$$' -bench Fetching -benchtime 200000x -count 3 ./pkg/bus/
	$(GO) test -run '^$$' -bench . -benchtime 5000x ./services/merchant/service/
	$(GO) test -run '^$$' -bench 'HotPool|RawBatched|ProjectionApply' -benchtime 20000x ./services/pool/service/ ./services/payment-projection/service/
	$(GO) test -run '^$$' -bench PoolRebuild -benchtime 1000000x -timeout 30m ./services/pool/service/
	$(GO) test -run '^$$' -bench PaymentsRebuild -benchtime 1000000x -timeout 30m ./services/payment-projection/service/
	$(GO) test -run '^$$' -bench . -benchtime 2500x ./services/webhook-dispatcher/service/
	$(GO) test -run '^$$' -bench . -benchtime 3s ./services/gateway/ports/
	$(GO) test -run '^$$' -bench MerchantCreate -benchtime 2000x ./e2e/
	$(GO) test -run '^$$' -bench ListMerchants -benchtime 2000x ./e2e/
	$(GO) test -run '^$$' -bench PaymentsEndToEnd -benchtime 50000x -timeout 60m ./e2e/
	$(MAKE) bench-dashboard

bench-dashboard: ## Time every dashboard page with 10,000 merchants and 1,000,000 payments (docs/BENCHMARKS.md)
	$(GO) test -run '^$$' -bench DashboardPages -benchtime 200x -timeout 60m ./services/gateway/ports/dashboard/

screenshots: ## Write a screenshot of every dashboard page at 375 and 1440 px into docs/dashboard/
	@bash scripts/ensure-chromium.sh
	SCREENSHOTS_DIR=$(CURDIR)/docs/dashboard $(GO) test -count=1 -run '^TestDashboardScreenshots$$' -timeout 10m ./e2e/

lint: ## go vet and gofmt on every module, buf lint and breaking on the event contract, the OpenAPI document's lint, generated code current
	$(GO) vet $(PKGS)
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); if [ -n "$$out" ]; then echo "not gofmt-formatted:"; echo "$$out"; exit 1; fi
	bash scripts/check-generated.sh

generate: ## Regenerate the event contract's Go code (proto-events) and the API's JSON document and typed client (api/)
	bash scripts/generate.sh

check-generated: ## Fail when the committed generated code is stale
	bash scripts/check-generated.sh

clean: ## Remove built binaries (keeps .data state)
	rm -rf $(BIN)
