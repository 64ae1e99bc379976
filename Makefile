# fsarena: `make demo` to try it, `make test` to run the whole test suite (as root).
SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)
CARGO ?= cargo
# The `kv` workload's RocksDB engine links Debian's librocksdb (installed by deps), found here.
export ROCKSDB_LIB_DIR ?= /usr/lib/$(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
# `--mpi` (mpirun) needs OpenMPI's library (installed by deps), through the `mpi` feature.
FEATURES ?= --features fsarena-cli/rocksdb,fsarena-cli/mpi

.PHONY: demo test build lint bench deps

deps:
	bash scripts/install-deps.sh

build: deps
	$(CARGO) build --release --locked $(FEATURES)

## Install what is missing, build in release mode and run the demo.
demo: build
	./target/release/fsarena demo

## The whole test suite: lints, unit tests and the integration tests against real
## filesystems and real fio (installed when missing).
test: deps
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --locked $(FEATURES) -- -D warnings
	@# The build without the optional features (no RocksDB, no MPI) must stay whole too.
	$(CARGO) clippy -p fsarena-cli --all-targets --locked -- -D warnings
	@mkdir -p target
	set -o pipefail; $(CARGO) test --workspace --locked $(FEATURES) 2>&1 | tee target/test.log
	@# One closing line for the whole suite (the last cargo line is the doc-tests' "0 passed").
	@awk '/^test result:/ { passed += $$4; failed += $$6 } END { printf "%d passed, %d failed\n", passed, failed }' target/test.log

## fsarena beside fio, fs_mark and bare C loops, and the store timings; prints the ratios.
bench: build
	bash bench/vs_fio.sh
	bash bench/vs_bare_meta.sh
	bash bench/vs_fsmark.sh
	bash bench/store.sh
