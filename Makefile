# Longlink's two everyday commands are `make run` and `make test`; both install what is missing first.
SHELL := /bin/bash
# What building and running need (`make run`, `make build`, `make release`): the toolchain's C side, the C libraries
# Longlink links, and openssl (it creates the development token secret).
RUN_PACKAGES := binutils libc6-dev libgcc-12-dev libstdc++-12-dev pkg-config \
	libprotobuf-c-dev libssl-dev libsqlite3-dev libhiredis-dev openssl
# What the test suite adds: protoc-c (proto-check), redis-server (Redis store and broker tests; an optional backend
# for running, whose default store is SQLite), tcpdump (capture tests), prometheus (promtool), chromium (admin page
# in a headless browser), systemd (systemd-analyze checks deploy/longlink.service), python3-websockets and nodejs
# (WebSocket and JavaScript client tests).
TEST_PACKAGES := protobuf-c-compiler redis-server tcpdump prometheus chromium systemd python3-websockets nodejs valgrind
# Services of those packages that must not start at boot (the tests start their own servers); `make` disables
# them and stops their package daemons. `make NO_BOOT_SERVICES= ...` leaves a system Redis or Prometheus alone.
NO_BOOT_SERVICES ?= redis-server prometheus
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PROTO_DIR := proto
PROTO_OUT := CShims/CLonglinkProto
PROTO_SRC := $(PROTO_DIR)/longlink/v1/frames.proto
# The committed output is byte-exact for this protoc-c version (Debian 12's protobuf-c-compiler).
PROTOC_C_VERSION := 1.4.1
DATA_DIR ?= data
SWIFT_BUILD_FLAGS ?=
# Fuzzing: seconds per target for `make fuzz` (`make test` runs each for FUZZ_SMOKE_SECONDS).
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 5
FUZZ_TARGETS := frames jwt peer websocket
FUZZ_BUILD := .build/fuzz

# generate_proto(out): run protoc-c on $(PROTO_SRC) into a scratch directory, then lay the output out the way
# a SwiftPM C target wants it: the header under $(out)/include, the .c including it as "frames.pb-c.h".
define generate_proto
protoc-c --version 2>/dev/null | grep -qx "protobuf-c $(PROTOC_C_VERSION)" || \
	{ echo "proto: need protoc-c $(PROTOC_C_VERSION) (Debian 12 protobuf-c-compiler), found: $$(protoc-c --version 2>&1 | head -1)"; exit 1; }; \
gen=$$(mktemp -d) && \
protoc-c --proto_path=$(PROTO_DIR) --c_out=$$gen $(PROTO_SRC) && \
mkdir -p "$(1)/include" && \
cp $$gen/longlink/v1/frames.pb-c.h "$(1)/include/frames.pb-c.h" && \
sed 's|#include "longlink/v1/frames.pb-c.h"|#include "frames.pb-c.h"|' $$gen/longlink/v1/frames.pb-c.c > "$(1)/frames.pb-c.c" && \
rm -rf "$$gen"
endef

.PHONY: deps test-deps build release run test proto proto-check format clean fuzz fuzz-build

## deps: install the Debian packages building and running need (nothing happens when all are present). No service
## is started or left enabled at boot (scripts/apt-install).
deps:
	@SUDO="$(SUDO)" NO_BOOT_SERVICES="$(NO_BOOT_SERVICES)" scripts/apt-install $(RUN_PACKAGES)

## test-deps: deps plus the tools the test suite uses.
test-deps:
	@SUDO="$(SUDO)" NO_BOOT_SERVICES="$(NO_BOOT_SERVICES)" scripts/apt-install $(RUN_PACKAGES) $(TEST_PACKAGES)

## build: debug build.
build: deps
	swift build $(SWIFT_BUILD_FLAGS)

## release: optimised build of the `longlink` executable, the one `make run` serves and `make profile` measures.
## Built without the run-time exclusivity checks (`swift_beginAccess` on every access to a class's stored `var`):
## on the publish→push path they were 17 % of the gateway's instructions (issue 19: 43.6 k → 35.5 k instructions per
## publish→delivery). Debug builds, the test suite and the fuzz builds keep them, so a violation is still caught
## there. The flag cannot sit in Package.swift: SwiftPM refuses unsafe flags in a package used as a dependency, and
## apps depend on this one for LonglinkClient. RELEASE_SWIFT_FLAGS= (empty) builds with the checks.
## Also without type-layout lowering (`-Xfrontend -disable-type-layout`): with it, IRGen emits the outlined copy and
## destroy of a value (an `[UInt8]`, an optional box, a `Result`, a decoded `ClientFrame`) as a call to the type's
## value witness found through its metadata (`__swift_instantiateConcreteTypeFromMangledName`), where the plain
## lowering is a `swift_retain`/`swift_release` per reference. On the publish→push path that was 2.2 % of the
## gateway's instructions at full speed (issue 19, session 12: 10,012 → 9,792 per delivery). Same semantics.
RELEASE_SWIFT_FLAGS ?= -Xswiftc -enforce-exclusivity=unchecked -Xswiftc -Xfrontend -Xswiftc -disable-type-layout
release: deps
	swift build -c release $(RELEASE_SWIFT_FLAGS) $(SWIFT_BUILD_FLAGS)

## run: build in release mode and start the gateway on the embedded SQLite store in ./data, with a development
## token secret in ./data/dev-secret (created on first start).
run: release
	@mkdir -p $(DATA_DIR)
	@if [ ! -s $(DATA_DIR)/dev-secret ]; then \
		(umask 077 && openssl rand -hex 32 > $(DATA_DIR)/dev-secret) && \
		echo "make run: created a development token secret in $(DATA_DIR)/dev-secret"; \
	fi
	@echo "make run: mint a token with: .build/release/longlink token --secret-file $(DATA_DIR)/dev-secret --sub dev --routes 'order://*' --role admin --ttl 1h"
	.build/release/longlink serve --store sqlite:$(DATA_DIR)/longlink.sqlite --secret-file $(DATA_DIR)/dev-secret --api-listen 127.0.0.1:9180 --ws-listen 127.0.0.1:7071

# How many tests run at once. Unbounded, swift-testing starts every test together: on two cores the end-to-end
# tests (real gateways, Redis clusters, a browser) then each get a sliver of CPU and real-time behaviour (heartbeats,
# token lifetimes, handshake deadlines) stops being what the tests check. Six keeps both cores busy.
TEST_PARALLELISM ?= 6

# The example app (issue 15): Examples/RiderApp is a package of its own that depends on this one by path and on the
# LonglinkClient product alone. `make example-build` builds it in its own build directory (Examples/RiderApp/.build);
# `make test` builds it before the suite, whose LonglinkExamplesTests run it against a TLS gateway (and fail without it).
# Without manifest caching: SwiftPM's cached build plan does not notice a source file added to a path dependency
# (a merge adding a file to LonglinkCore would leave the example's build stale); the plan costs about a second.
EXAMPLE_PACKAGE := Examples/RiderApp
.PHONY: example-build
example-build: deps
	swift build --package-path $(EXAMPLE_PACKAGE) --disable-build-manifest-caching

## test: install, check generated code, build and run the whole suite.
test: test-deps proto-check
	swift build --build-tests $(SWIFT_BUILD_FLAGS)
	@$(MAKE) --no-print-directory example-build
	swift test --skip-build $(SWIFT_BUILD_FLAGS) --experimental-maximum-parallelization-width $(TEST_PARALLELISM)
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS)
	@$(MAKE) --no-print-directory test-release-budgets

# Issue 19's allocation budget in a release build: heap allocations per published record on the many-route path
# (target ≤ 2), counted by Tests/AllocationBudget with an interposed malloc. The ceiling sits a little above what
# the release build measures today (12.07 on main be7f4d8, 10.57 after session 7's pipeline steps, 2.57 after session 8, 2.50 in the steady state of session 10's warm-up, 1.50 with session 11's ring of push frames); lower it as the count comes down (and the release
# ceiling in Tests/LonglinkAllocationTests with it). A clean release build of the program takes about 3 minutes here.
RELEASE_ALLOCATION_CEILING ?= 2
.PHONY: test-release-budgets
## test-release-budgets: build longlink-allocation-budget in release and fail when it measures over the ceiling.
test-release-budgets: deps
	swift build -c release $(RELEASE_SWIFT_FLAGS) $(SWIFT_BUILD_FLAGS) --product longlink-allocation-budget
	.build/release/longlink-allocation-budget --records 600 --subscribers 20 --ceiling $(RELEASE_ALLOCATION_CEILING)

## fuzz-build: the libFuzzer targets (own build directory, so the normal build cache stays intact).
fuzz-build: deps
	@for t in $(FUZZ_TARGETS); do \
		swift build --sanitize=fuzzer -Xswiftc -DLONGLINK_FUZZ --build-path $(FUZZ_BUILD) --product longlink-fuzz-$$t || exit 1; \
	done

## fuzz: run every fuzz target for FUZZ_SECONDS from the seed corpus in Fuzz/corpus/<target> (new inputs go to
## .build/fuzz/corpus/<target>; a crash leaves .build/fuzz/crash-* and fails).
fuzz: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_BUILD)/corpus/$$t; \
		log=$(FUZZ_BUILD)/fuzz-$$t.log; \
		$(FUZZ_BUILD)/debug/longlink-fuzz-$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -print_final_stats=1 \
			-artifact_prefix=$(FUZZ_BUILD)/crash-$$t- $(FUZZ_BUILD)/corpus/$$t Fuzz/corpus/$$t > $$log 2>&1; \
		status=$$?; \
		runs=$$(grep -o 'stat::number_of_executed_units: *[0-9]*' $$log | grep -o '[0-9]*$$'); \
		if [ $$status -ne 0 ]; then echo "fuzz $$t: FAILED after $${runs:-?} executions (see $$log)"; tail -30 $$log; exit 1; fi; \
		echo "fuzz $$t: $$runs executions in $(FUZZ_SECONDS)s without a crash"; \
	done

## proto: regenerate the committed protobuf-c sources (CShims/CLonglinkProto) from proto/ with protoc-c $(PROTOC_C_VERSION).
proto: test-deps
	@$(call generate_proto,$(PROTO_OUT))
	@echo "proto: regenerated $(PROTO_OUT)/frames.pb-c.c and $(PROTO_OUT)/include/frames.pb-c.h"

## proto-check: fail when the committed protobuf-c sources differ from what proto/ generates.
proto-check: test-deps
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(call generate_proto,$$tmp) || exit 1; \
	if diff -u $(PROTO_OUT)/include/frames.pb-c.h $$tmp/include/frames.pb-c.h && \
		diff -u $(PROTO_OUT)/frames.pb-c.c $$tmp/frames.pb-c.c; then \
		echo "proto-check: generated code matches proto/"; \
	else \
		echo "proto-check: committed protobuf-c output differs from proto/; run 'make proto' and commit"; exit 1; \
	fi

format:
	swift format --in-place --recursive Sources Tests Package.swift

clean:
	rm -rf .build

## profile: user-space instructions per publish→delivery of the gateway and of redis-server, both under callgrind
## (`longlink bench profile`, issue 19's two workloads); needs valgrind. The callgrind files' directory is printed;
## PROFILE_FLAGS adds bench options (e.g. PROFILE_FLAGS='--counts 2000,7000 --profile-dir /tmp/profile').
## PROFILE_ROUNDS rounds (default 5, about 8 minutes), each figure their median: Redis's own count swings by a
## quarter from run to run, so one round can read a target met or missed.
PROFILE_ROUNDS ?= 5
.PHONY: profile
profile: release
	@command -v valgrind >/dev/null || { echo "make profile: needs valgrind (apt-get install valgrind)"; exit 1; }
	.build/release/longlink bench profile --binary .build/release/longlink --rounds $(PROFILE_ROUNDS) $(PROFILE_FLAGS)
