# fsarena: `make demo` to try it, `make test` to run the whole test suite (as root).
# While working: `make check` (about a minute, no root), then `make itest` (as root: the
# integration tests but the slowest, listed in tests/slow.txt, which `make test` runs too).
SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)
CARGO ?= cargo
# The `kv` workload's RocksDB engine links Debian's librocksdb (installed by deps), found here.
export ROCKSDB_LIB_DIR ?= /usr/lib/$(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
# `--mpi` (mpirun) needs OpenMPI's library (installed by deps), through the `mpi` feature.
FEATURES ?= --features fsarena-cli/rocksdb,fsarena-cli/mpi

.PHONY: demo test check itest build lint bench deps

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

## The quick loop, without root, mounts or reference tools: formatting, lints, every crate's
## unit tests, the in-process tests of the whole pipeline and the store's own tests.
check:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --locked $(FEATURES) -- -D warnings
	@# --workspace: one build for every crate. `cargo test -p CRATE` reuses the same built
	@# dependencies too: crates/workspace-hack (cargo hakari) gives them one feature set.
	$(CARGO) test --workspace --locked $(FEATURES) --lib --bins --test in_process --test store --test sigkill --test safety

## The integration tests (as root), less the slowest in tests/slow.txt (one name a line).
SLOW := $(shell sed -e 's/\#.*//' -e 's/[[:space:]]*$$//' -e '/^$$/d' -e 's/^/--skip /' tests/slow.txt)
itest: deps
	$(CARGO) test --workspace --locked $(FEATURES) --test tests -- $(SLOW)

## fsarena beside fio, fs_mark and bare C loops, and the store timings; prints the ratios.
bench: build
	bash bench/vs_fio.sh
	bash bench/vs_bare_meta.sh
	bash bench/vs_fsmark.sh
	bash bench/store.sh
