#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what `make run` and `make check` need, from Debian's packages only,
# and prepare the guest kernel and the kselftest harness in the cache folder.
# Idempotent: when everything is present it only checks and returns.
#
# Environment: RMSG_CACHE (default /var/cache/rmsg), KDIR (kernel headers),
# RMSG_KVER (a Debian kernel line, 6.1 or 6.12: its newest headers and guest
# kernel, fetched into the cache when its headers are not installed).
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
	python3 perl groff-base
)
# Debian's kbuild of 6.12 runs pahole (the BTF of modules); headers
# fetched into the cache bring no dependencies, so it is named here; its
# vmlinuz is zstd-compressed (rmsg-vm boots the image inside).
[ -z "${RMSG_KVER:-}" ] || packages+=(dwarves zstd)
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

cache=$(rmsg_cache)
mkdir -p "$cache"

# fetch_headers LINE: the newest generic headers of Debian's kernel line
# LINE that has a guest kernel too, unpacked into the cache with the
# common headers and kbuild they need, as the packages would install them
# (under usr/src and usr/lib, whose relative links then hold). Not
# installed on the host: installed headers of a second line would change
# what a plain make picks on this machine (rmsg_kdir, tools/lib.sh).
fetch_headers() {
	local line=$1 abi root deb dep
	abi=$(apt-cache pkgnames "linux-image-$line." |
	      sed -n "s/^linux-image-\(${line//./\\.}\.[^ ]*-amd64\)-unsigned\$/\1/p" |
	      grep -Ev -- '-(cloud|rt)-amd64$' | sort -V | tail -n 1)
	[ -n "$abi" ] ||
		die "Debian's archive has no linux-image-$line.*-amd64-unsigned (apt-get update?)"
	root="$cache/headers-$abi"
	[ -e "$root/.done" ] && return
	log "fetching the headers of $abi into $root"
	rm -rf "$root" "$cache/dl-headers"
	mkdir -p "$cache/dl-headers" "$root"
	(cd "$cache/dl-headers" && apt-get download -qq "linux-headers-$abi")
	deb=$(ls "$cache"/dl-headers/linux-headers-"$abi"_*.deb)
	# Its common headers and kbuild, at the versions it names.
	for dep in $(dpkg-deb -f "$deb" Depends | tr ',|' '\n\n' |
		     awk '$1 ~ /^linux-(headers|kbuild)-/ {
			     print $1 ($2 == "(=" ? "=" substr($3, 1, length($3) - 1) : "") }'); do
		(cd "$cache/dl-headers" && apt-get download -qq "$dep")
	done
	for deb in "$cache"/dl-headers/*.deb; do
		dpkg-deb -x "$deb" "$root"
	done
	# The flavour's Makefile includes the common one by its installed
	# path.
	sed -i "s|^include /usr/src/|include $root/usr/src/|" \
		"$root/usr/src/linux-headers-$abi/Makefile"
	[ -e "$root/usr/src/linux-headers-$abi/scripts/Makefile.build" ] ||
		die "$root: the headers of $abi lack their kbuild"
	rm -rf "$cache/dl-headers"
	touch "$root/.done"
}

if [ -n "${RMSG_KVER:-}" ] && [ -z "${KDIR:-}" ] &&
   ! rmsg_line_headers "$RMSG_KVER" >/dev/null 2>&1; then
	fetch_headers "$RMSG_KVER"
fi

kdir=$(rmsg_kdir)
abi=$(rmsg_abi "$kdir")
log "kernel $abi: headers $kdir, guest kernel $cache/kernel-$abi"

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
