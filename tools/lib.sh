# SPDX-License-Identifier: GPL-2.0
# Shared helpers for rmsg's shell tools; sourced, not run.

log() { printf 'rmsg: %s\n' "$*" >&2; }
die() { printf 'rmsg: error: %s\n' "$*" >&2; exit 1; }

# The kernel headers to build against: $KDIR if set, else the installed
# Debian headers of the running kernel, else the newest installed ones. The
# host of a CI run is not the kernel we test on, so uname -r is only a hint.
rmsg_kdir() {
	if [ -n "${KDIR:-}" ]; then
		echo "$KDIR"
		return
	fi
	# The running kernel's headers wherever its packaging put them.
	local running
	running=$(readlink -f "/lib/modules/$(uname -r)/build" 2>/dev/null)
	if [ -n "$running" ] && [ -e "$running/Makefile" ]; then
		echo "$running"
		return
	fi
	running="/usr/src/linux-headers-$(uname -r)"
	if [ -e "$running/Makefile" ]; then
		echo "$running"
		return
	fi
	# Else the test guest's kernel (make module says it is not the
	# running one).
	local newest
	newest=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null |
		 sort -V | tail -n 1)
	[ -n "$newest" ] || die "no linux-headers-*-amd64 installed"
	echo "$newest"
}

# "6.1.0-56-amd64" from "/usr/src/linux-headers-6.1.0-56-amd64".
rmsg_abi() {
	local kdir=$1
	# Debian names the ABI (the package and /lib/modules suffix) only in
	# the headers' folder; kernel.release holds the upstream version.
	basename "$(readlink -f "$kdir")" | sed 's/^linux-headers-//' 
}

rmsg_cache() { echo "${RMSG_CACHE:-/var/cache/rmsg}"; }
