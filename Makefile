# Longlink's two everyday commands are `make run` and `make test`; both install what is missing first.
SHELL := /bin/bash
APT_PACKAGES := binutils libc6-dev libgcc-12-dev pkg-config libprotobuf-c-dev protobuf-c-compiler \
	libssl-dev libsqlite3-dev libhiredis-dev redis-server openssl libstdc++-12-dev
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PROTO_DIR := proto
PROTO_OUT := CShims/CLonglinkProto
DATA_DIR ?= data
SWIFT_BUILD_FLAGS ?=

.PHONY: deps build release run test proto proto-check format clean

## deps: install the Debian packages Longlink needs (nothing happens when all are present).
deps:
	@missing=""; \
	for p in $(APT_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "make deps: installing$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

## build: debug build.
build: deps
	swift build $(SWIFT_BUILD_FLAGS)

## release: optimised build of the `longlink` executable.
release: deps
	swift build -c release $(SWIFT_BUILD_FLAGS)

## run: build in release mode and start the gateway on the embedded SQLite store in ./data.
run: release
	@mkdir -p $(DATA_DIR)
	.build/release/longlink serve --store sqlite:$(DATA_DIR)/longlink.sqlite

## test: install, check generated code, build and run the whole suite.
test: deps proto-check
	swift build --build-tests $(SWIFT_BUILD_FLAGS)
	swift test --skip-build $(SWIFT_BUILD_FLAGS)

## proto: regenerate the committed protobuf-c sources from proto/.
proto: deps
	protoc-c --proto_path=$(PROTO_DIR) --c_out=$(PROTO_OUT) $(PROTO_DIR)/longlink/v1/frames.proto
	mv $(PROTO_OUT)/longlink/v1/frames.pb-c.h $(PROTO_OUT)/include/frames.pb-c.h
	mv $(PROTO_OUT)/longlink/v1/frames.pb-c.c $(PROTO_OUT)/frames.pb-c.c
	sed -i 's|#include "longlink/v1/frames.pb-c.h"|#include "frames.pb-c.h"|' $(PROTO_OUT)/frames.pb-c.c
	rm -rf $(PROTO_OUT)/longlink

## proto-check: fail when the committed protobuf-c sources differ from what proto/ generates.
proto-check: deps
	@tmp=$$(mktemp -d); \
	$(MAKE) --no-print-directory -s proto PROTO_OUT=$$tmp >/dev/null 2>&1 || { mkdir -p $$tmp/include; protoc-c --proto_path=$(PROTO_DIR) --c_out=$$tmp $(PROTO_DIR)/longlink/v1/frames.proto; }; \
	if [ -f $(PROTO_DIR)/longlink/v1/frames.proto ]; then \
		diff -q $$tmp/include/frames.pb-c.h $(PROTO_OUT)/include/frames.pb-c.h >/dev/null && \
		diff -q $$tmp/frames.pb-c.c $(PROTO_OUT)/frames.pb-c.c >/dev/null || \
		{ echo "proto-check: committed protobuf-c output differs from proto/; run 'make proto' and commit"; rm -rf $$tmp; exit 1; }; \
	fi; \
	rm -rf $$tmp; echo "proto-check: generated code matches proto/"

format:
	swift format --in-place --recursive Sources Tests Package.swift

clean:
	rm -rf .build
