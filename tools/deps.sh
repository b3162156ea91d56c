#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what `make run` and `make check` need, from Debian's packages only,
# and prepare the guest kernel and the kselftest harness in the cache folder.
# Idempotent: when everything is present it only checks and returns.
#
# Environment: RMSG_CACHE (default /var/cache/rmsg), KDIR (kernel headers).
# With --bench it also installs what `make bench` needs for its plot. With
# --fuzz it installs only what `make fuzz` needs (clang and its libFuzzer
# runtime) and touches no cache.

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

packages=(
	build-essential linux-headers-amd64 kmod pkg-config
	qemu-system-x86 busybox-static cpio xz-utils
	rdma-core ibverbs-utils ibverbs-providers libibverbs-dev librdmacm-dev
	rdmacm-utils perftest iproute2 iputils-ping linux-source-6.1
	libfabric-dev libfabric-bin openmpi-bin libopenmpi-dev netpipe-openmpi
	hpcc ucx-utils
	python3 perl
)
if [ "${1:-}" = --bench ]; then
	packages+=(gnuplot-nox)
elif [ "${1:-}" = --fuzz ]; then
	packages=(clang libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

if ((${#missing[@]})); then
	if [ "$(id -u)" != 0 ]; then
		die "missing Debian packages: ${missing[*]} (run as root to install)"
	fi
	log "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

[ "${1:-}" != --fuzz ] || exit 0

kdir=$(rmsg_kdir)
abi=$(rmsg_abi "$kdir")
cache=$(rmsg_cache)
mkdir -p "$cache"

# The guest kernel: the same ABI as the headers the module is built against.
kroot="$cache/kernel-$abi"
if [ ! -e "$kroot/.done" ]; then
	log "fetching guest kernel linux-image-$abi-unsigned"
	rm -rf "$kroot" "$cache/dl"
	mkdir -p "$cache/dl" "$kroot"
	(cd "$cache/dl" && apt-get download -qq "linux-image-$abi-unsigned")
	dpkg-deb -x "$cache"/dl/linux-image-"$abi"-unsigned_*.deb "$kroot"
	depmod -b "$kroot" "$abi"
	rm -rf "$cache/dl"
	touch "$kroot/.done"
fi

# The kselftest harness and checkpatch come from Debian's kernel source
# tarball; they are used from the cache and never copied into the repository.
src="$cache/linux-source"
if [ ! -e "$src/.done" ]; then
	log "extracting kselftest harness and checkpatch from linux-source"
	rm -rf "$src"
	mkdir -p "$src"
	tarball=$(ls /usr/src/linux-source-*.tar.xz | sort -V | tail -n 1)
	top=$(basename "$tarball" .tar.xz)
	tar -C "$src" --strip-components=1 -xJf "$tarball" \
		"$top/tools/testing/selftests/kselftest_harness.h" \
		"$top/tools/testing/selftests/kselftest.h" \
		"$top/scripts/checkpatch.pl" \
		"$top/scripts/spelling.txt" \
		"$top/scripts/const_structs.checkpatch"
	touch "$src/.done"
fi
