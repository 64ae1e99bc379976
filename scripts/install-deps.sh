#!/usr/bin/env bash
# Installs what fsarena needs on Debian or Ubuntu, as root: build tools, the Rust toolchain
# (rustup, when cargo is missing), the mkfs tools and FUSE programs of the targets, and the
# reference tools the tests and benchmarks run beside fsarena (fio, postmark, dbench, db_bench,
# sqlite3), Debian's RocksDB library the `kv` workload links to, GlusterFS for the glusterfs
# target, OpenMPI for `run --mpi` (and iproute2 for scripts/nscluster's hosts), and the servers and load generators of the `pgbench`,
# `sysbench` and `http` workloads (postgresql, mariadb-server, sysbench, nginx, apache2-utils).
# Installs only what is missing.
set -euo pipefail

packages=(build-essential pkg-config ca-certificates curl fio gnuplot-nox python3 chromium e2fsprogs xfsprogs btrfs-progs f2fs-tools nilfs-tools fuse2fs fuse3 mount util-linux iproute2 postmark dbench zstd sqlite3 librocksdb-dev libclang-dev rocksdb-tools glusterfs-server hostname openmpi-bin libopenmpi-dev pbzip2 openssl postgresql mariadb-server sysbench nginx apache2-utils strace bindfs)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    # fsarena starts its own PostgreSQL, MariaDB and nginx with their data in the target; the
    # packages' own services must not start on install (they would listen on the machine's
    # ports and sockets). Debian's maintainer scripts ask /usr/sbin/policy-rc.d first: a
    # temporary one that refuses (101) keeps them down. Only when none exists, and removed on
    # every exit; a service that already existed is never stopped, disabled or reconfigured.
    policy=/usr/sbin/policy-rc.d
    if [ ! -e "$policy" ]; then
        trap 'rm -f "$policy"' EXIT
        printf '#!/bin/sh\n# temporary, from fsarena scripts/install-deps.sh\nexit 101\n' >"$policy"
        chmod 755 "$policy"
    fi
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
    # The glusterfs target starts a glusterd of its own and refuses to run beside one it did
    # not start: when this install just brought glusterfs-server onto a systemd machine, which
    # starts its service, stop and disable that service again (never one installed before).
    if [[ " ${missing[*]} " == *" glusterfs-server "* ]] && [ -d /run/systemd/system ]; then
        systemctl disable --now glusterd.service >/dev/null 2>&1 || true
    fi
fi

if ! command -v cargo >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/cargo" ]; then
    echo "installing the Rust toolchain with rustup" >&2
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --component clippy,rustfmt
fi

# The held-out corpus of tests/fio_examples.rs: fio 3.33's own examples/, from Debian's source
# tarball, kept in a cache outside the repository and checked against its pinned sha256 (the
# test fetches it too when it is missing; in CI it is fetched here, and a failed fetch fails).
if [ "${CI:-}" = "true" ]; then
    cache=/var/cache/fsarena-tests
    tarball=$cache/fio_3.33.orig.tar.gz
    sum=d2410e13e0f379d061d077cc5ae325835bb7c6186aa7bafc1df954cbc9b014fc
    mkdir -p "$cache"
    if [ ! -f "$tarball" ]; then
        curl -sSfL --retry 3 -o "$tarball.part" http://deb.debian.org/debian/pool/main/f/fio/fio_3.33.orig.tar.gz
        mv "$tarball.part" "$tarball"
    fi
    echo "$sum  $tarball" | sha256sum -c --quiet -
fi
