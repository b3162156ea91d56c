# SPDX-License-Identifier: GPL-2.0
# Shared helpers for rmsg's shell tools; sourced, not run.

log() { printf 'rmsg: %s\n' "$*" >&2; }
die() { printf 'rmsg: error: %s\n' "$*" >&2; exit 1; }

# The kernel headers to build against, and so the guest kernel the test
# bed boots (the same Debian ABI):
#   1. $KDIR if set;
#   2. with $RMSG_KVER (a Debian kernel line: 6.1, 6.12), the newest
#      headers of that line installed in /usr/src, else the ones
#      tools/deps.sh fetched into the cache (rmsg_line_headers);
#   3. the running kernel's headers, wherever its packaging put them;
#   4. the headers Debian's linux-headers-amd64 stands for (Debian 12:
#      6.1), when installed: another kernel's headers installed beside
#      them (6.12's) do not change the default;
#   5. else the newest installed ones.
# The host of a CI run is not the kernel we test on, so uname -r is only a
# hint. Fails, with the reason on stderr, when none is there.
rmsg_kdir() {
	if [ -n "${KDIR:-}" ]; then
		echo "$KDIR"
		return
	fi
	if [ -n "${RMSG_KVER:-}" ]; then
		rmsg_line_headers "$RMSG_KVER" && return
		die "no headers of Linux $RMSG_KVER: run make deps RMSG_KVER=$RMSG_KVER (tools/deps.sh)"
	fi
	# The running kernel's headers wherever its packaging put them.
	local running
	running=$(readlink -f "/lib/modules/$(uname -r)/build" 2>/dev/null) ||
		true
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
	# running one): Debian's default line first.
	local meta
	meta=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null |
	       grep -o '^linux-headers-[^ ,]*')
	if [ -n "$meta" ] && [ -e "/usr/src/$meta/Makefile" ]; then
		echo "/usr/src/$meta"
		return
	fi
	local newest
	newest=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null |
		 sort -V | tail -n 1)
	[ -n "$newest" ] || die "no linux-headers-*-amd64 installed"
	echo "$newest"
}

# rmsg_line_headers LINE: the newest headers of Debian's kernel line LINE
# (6.12: linux-headers-6.12.117+deb12-amd64), installed or in the cache,
# the generic flavour only (not -cloud, not -rt). Fails when there are
# none.
rmsg_line_headers() {
	local line=$1 found
	[[ "$line" =~ ^[0-9]+\.[0-9]+$ ]] ||
		die "RMSG_KVER=$line: a kernel line such as 6.1 or 6.12"
	# Of one ABI both installed and fetched, the installed (listed last).
	for found in "$(rmsg_cache)/headers-$line".*-amd64/usr/src/linux-headers-"$line".*-amd64 \
		     "/usr/src/linux-headers-$line".*-amd64; do
		if [ -e "$found/Makefile" ]; then echo "$found"; fi
	done | grep -Ev -- '-(cloud|rt)-amd64$' |
	awk -F / '{ print $NF, $0 }' | sort -s -V -k 1,1 | tail -n 1 |
	cut -d ' ' -f 2- | grep .
}

# "6.1.0-56-amd64" from "/usr/src/linux-headers-6.1.0-56-amd64".
rmsg_abi() {
	local kdir=$1
	# Debian names the ABI (the package and /lib/modules suffix) only in
	# the headers' folder; kernel.release holds the upstream version.
	basename "$(readlink -f "$kdir")" | sed 's/^linux-headers-//' 
}

rmsg_cache() { echo "${RMSG_CACHE:-/var/cache/rmsg}"; }
