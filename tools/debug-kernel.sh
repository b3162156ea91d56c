#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a debug guest kernel (lockdep, KASAN, KFENCE, atomic-sleep checks)
# from Debian's kernel source, for rmsg's test guests:
#
#   tools/debug-kernel.sh
#   KDIR=<the folder it prints> tools/testing/rmsg-vm ...
#
# 1. extracts /usr/src/linux-source-6.1.tar.xz into $RMSG_CACHE/linux-debug-src
# 2. configures an out-of-tree build in $RMSG_CACHE/linux-headers-<release>,
#    release = <kernelversion>-rmsg-debug, from x86_64_defconfig,
#    kvm_guest.config and the fragment below, and checks that every option
#    of the fragment survived `make olddefconfig`
# 3. builds bzImage and modules (nice -n 19) and installs them into
#    $RMSG_CACHE/kernel-<release> with the layout of the Debian guest kernel
#    tools/deps.sh unpacks (boot/vmlinuz-<release>, lib/modules/<release>),
#    indexed with depmod -b
# 4. prints the KDIR to use: the build folder, whose name gives rmsg_abi
#    (tools/lib.sh) the release, which is also the guest's `uname -r`
#
# Idempotent: each step leaves a marker (.done) and is skipped when it is
# there; a changed fragment reconfigures and rebuilds (make is incremental).
# Wall times of the steps are printed and appended to
# $RMSG_CACHE/debug-kernel-<release>.times.
#
# Environment: RMSG_CACHE (default /var/cache/rmsg), RMSG_DEBUG_TARBALL
# (default /usr/src/linux-source-6.1.tar.xz), RMSG_DEBUG_JOBS (default nproc).

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

cache=$(rmsg_cache)
tarball=${RMSG_DEBUG_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
jobs=${RMSG_DEBUG_JOBS:-$(nproc)}
src="$cache/linux-debug-src"
suffix=-rmsg-debug

[ -e "$tarball" ] || die "$tarball missing: apt-get install linux-source-6.1"
mkdir -p "$cache"

# What a kernel build needs beyond tools/deps.sh's packages (Kconfig's
# parser, objtool, certificates and the modules' compression).
missing=()
for p in build-essential bc bison flex libelf-dev libssl-dev kmod xz-utils; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
	[ "$(id -u)" = 0 ] ||
		die "missing Debian packages: ${missing[*]} (run as root to install)"
	log "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Heavy steps run at the lowest priority: the guests of a test run on the
# same machine keep their CPU (their timers are what the tests measure).
low() { nice -n 19 "$@"; }

times_file=
# timed NAME COMMAND...: runs COMMAND, prints and records its wall time.
timed() {
	local name=$1 start end
	shift
	start=$(date +%s.%N)
	"$@"
	end=$(date +%s.%N)
	local t
	t=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.0f", b - a }')
	log "$name took $t s"
	if [ -n "$times_file" ]; then
		printf '%s %s %s s\n' "$(date -Is)" "$name" "$t" >>"$times_file"
	fi
}

# --- 1. the source -----------------------------------------------------------

extract() {
	rm -rf "$src"
	mkdir -p "$src"
	low tar -C "$src" --strip-components=1 -xJf "$tarball"
	touch "$src/.done"
}
if [ ! -e "$src/.done" ]; then
	log "extracting $tarball into $src"
	timed extract extract
fi

release="$(make -s --no-print-directory -C "$src" kernelversion)$suffix"
build="$cache/linux-headers-$release"
kroot="$cache/kernel-$release"
times_file="$cache/debug-kernel-$release.times"

# --- 2. the configuration ----------------------------------------------------

# What the guest needs (tools/testing/vm-init, vm-guest.sh, the selftests)
# and the debug options. Every line is checked after olddefconfig: an option
# whose dependencies are missing is dropped silently by Kconfig, so a line
# that does not survive fails the build here, not the test run later.
# The modules vm-init and vm-guest.sh load are modules (=m), as in Debian's
# kernel: the initramfs rmsg-vm builds then holds virtio_pci and 9p.
fragment() {
	cat <<-'EOF'
	# identity: uname -r = <kernelversion>-rmsg-debug = rmsg_abi of KDIR
	CONFIG_LOCALVERSION="-rmsg-debug"
	# CONFIG_LOCALVERSION_AUTO is not set
	# modules, unsigned, unloadable
	CONFIG_MODULES=y
	CONFIG_MODULE_UNLOAD=y
	# CONFIG_MODULE_SIG is not set
	# CONFIG_MODVERSIONS is not set
	# boot: initramfs, serial console, root over 9p/virtio (vm-init)
	CONFIG_BLK_DEV_INITRD=y
	CONFIG_RD_GZIP=y
	CONFIG_SERIAL_8250=y
	CONFIG_SERIAL_8250_CONSOLE=y
	CONFIG_PCI=y
	CONFIG_VIRTIO_PCI=m
	CONFIG_VIRTIO_NET=m
	CONFIG_NET_9P=m
	CONFIG_NET_9P_VIRTIO=m
	CONFIG_NETWORK_FILESYSTEMS=y
	CONFIG_9P_FS=m
	CONFIG_9P_FS_POSIX_ACL=y
	CONFIG_TMPFS=y
	CONFIG_TMPFS_POSIX_ACL=y
	CONFIG_DEVTMPFS=y
	CONFIG_PROC_FS=y
	CONFIG_PROC_PAGE_MONITOR=y
	CONFIG_SYSFS=y
	CONFIG_UNIX98_PTYS=y
	CONFIG_BINFMT_ELF=y
	CONFIG_BINFMT_SCRIPT=y
	CONFIG_POSIX_TIMERS=y
	CONFIG_FUTEX=y
	CONFIG_EPOLL=y
	CONFIG_EVENTFD=y
	# Debian's preemption model and timer frequency; the defconfig's
	# -Werror would fail external modules (rmsg builds with W=1)
	CONFIG_PREEMPT_VOLUNTARY=y
	CONFIG_HZ_250=y
	# CONFIG_WERROR is not set
	# small: no graphics, sound, USB, wireless, netfilter or Ethernet NICs
	# CONFIG_DRM is not set
	# CONFIG_SOUND is not set
	# CONFIG_USB_SUPPORT is not set
	# CONFIG_WIRELESS is not set
	# CONFIG_WLAN is not set
	# CONFIG_NETFILTER is not set
	# CONFIG_ETHERNET is not set
	# network: veth pair, netem, IPv4 and IPv6 (rdma_cm, rmsg's GIDs)
	CONFIG_NET=y
	CONFIG_UNIX=y
	CONFIG_INET=y
	CONFIG_IPV6=y
	CONFIG_VETH=m
	CONFIG_NET_SCHED=y
	CONFIG_NET_SCH_NETEM=m
	CONFIG_NET_UDP_TUNNEL=m
	# RDMA: core, uverbs, rdma_cm/rdma_ucm, Soft-RoCE
	CONFIG_INFINIBAND=m
	CONFIG_INFINIBAND_USER_ACCESS=m
	CONFIG_INFINIBAND_USER_MEM=y
	CONFIG_INFINIBAND_ADDR_TRANS=y
	CONFIG_INFINIBAND_VIRT_DMA=y
	CONFIG_RDMA_RXE=m
	CONFIG_CRC32=y
	CONFIG_CRYPTO_CRC32=m
	# memory cgroups (rmsg charges GFP_KERNEL_ACCOUNT; rmsg_exhaust_test)
	CONFIG_CGROUPS=y
	CONFIG_MEMCG=y
	# tracing, perf events (rmsg-perf's raw_syscalls counter), kprobes
	CONFIG_DEBUG_FS=y
	CONFIG_PERF_EVENTS=y
	CONFIG_TRACEPOINTS=y
	CONFIG_FTRACE=y
	CONFIG_FUNCTION_TRACER=y
	CONFIG_FTRACE_SYSCALLS=y
	CONFIG_EVENT_TRACING=y
	CONFIG_KPROBES=y
	CONFIG_KPROBE_EVENTS=y
	CONFIG_MAGIC_SYSRQ=y
	# readable stacks without debug info
	CONFIG_KALLSYMS=y
	CONFIG_KALLSYMS_ALL=y
	CONFIG_STACKTRACE=y
	CONFIG_DEBUG_INFO_NONE=y
	# CONFIG_DEBUG_INFO is not set
	# hangs
	CONFIG_DEBUG_KERNEL=y
	CONFIG_SOFTLOCKUP_DETECTOR=y
	CONFIG_DETECT_HUNG_TASK=y
	# locking: lockdep, with room for the RDMA stack's many lock classes
	CONFIG_LOCKDEP=y
	CONFIG_PROVE_LOCKING=y
	CONFIG_DEBUG_ATOMIC_SLEEP=y
	CONFIG_LOCKDEP_BITS=17
	CONFIG_LOCKDEP_CHAINS_BITS=18
	CONFIG_LOCKDEP_STACK_TRACE_BITS=20
	# memory: KASAN (generic, inline, vmalloc too), KFENCE, SLUB debug
	CONFIG_SLUB=y
	CONFIG_SLUB_DEBUG=y
	CONFIG_KASAN=y
	CONFIG_KASAN_GENERIC=y
	CONFIG_KASAN_INLINE=y
	CONFIG_KASAN_VMALLOC=y
	CONFIG_KFENCE=y
	CONFIG_DEBUG_LIST=y
	EOF
}

configure() {
	mkdir -p "$build"
	fragment >"$build/rmsg-debug.config.new"
	rm -f "$build/.config"
	low make -s -C "$src" O="$build" LOCALVERSION= \
		x86_64_defconfig kvm_guest.config >/dev/null
	low "$src/scripts/kconfig/merge_config.sh" -m -O "$build" \
		"$build/.config" "$build/rmsg-debug.config.new" >/dev/null
	low make -s -C "$src" O="$build" LOCALVERSION= olddefconfig >/dev/null
	mv "$build/rmsg-debug.config.new" "$build/rmsg-debug.config"
}

# Every line of the fragment, as olddefconfig left it: fails naming each
# option that did not end up as asked.
verify_config() {
	local line sym missing=()
	while read -r line; do
		case "$line" in
		'# CONFIG_'*' is not set')
			sym=${line#\# }
			sym=${sym%% *}
			if grep -q "^$sym=" "$build/.config"; then
				missing+=("$line (is $(grep "^$sym=" "$build/.config"))")
			fi
			;;
		CONFIG_*)
			grep -qxF "$line" "$build/.config" ||
				missing+=("$line (is $(grep -E "^(# )?${line%%=*}[= ]" "$build/.config" || echo absent))")
			;;
		esac
	done < <(fragment)
	if ((${#missing[@]})); then
		printf 'rmsg: config option not as required: %s\n' "${missing[@]}" >&2
		die "$build/.config lacks required options (their dependencies?)"
	fi
}

if [ ! -e "$build/.config-done" ] ||
   ! fragment | cmp -s - "$build/rmsg-debug.config"; then
	log "configuring $release in $build"
	rm -f "$build/.config-done" "$kroot/.done"
	timed config configure
	touch "$build/.config-done"
fi
verify_config
krel=$(cat "$build/include/config/kernel.release" 2>/dev/null || true)
if [ -n "$krel" ] && [ "$krel" != "$release" ]; then
	die "$build: kernel.release is $krel, not $release"
fi

# --- 3. build and install ---------------------------------------------------

compile() {
	# LOCALVERSION= on the command line: no "+" for an unknown tree.
	low make -s -C "$build" -j"$jobs" LOCALVERSION= bzImage modules
	[ "$(cat "$build/include/config/kernel.release")" = "$release" ] ||
		die "built $(cat "$build/include/config/kernel.release"), not $release"
}

install_kernel() {
	local new="$kroot.new"
	rm -rf "$new"
	mkdir -p "$new/boot"
	cp "$build/arch/x86/boot/bzImage" "$new/boot/vmlinuz-$release"
	cp "$build/System.map" "$new/boot/System.map-$release"
	cp "$build/.config" "$new/boot/config-$release"
	low make -s -C "$build" LOCALVERSION= INSTALL_MOD_PATH="$new" \
		INSTALL_MOD_STRIP=1 DEPMOD=/bin/true modules_install
	# build -> the build folder (it stays, as KDIR); no source link into
	# the host's tree from a guest's module folder.
	ln -sfn "$build" "$new/lib/modules/$release/build"
	rm -f "$new/lib/modules/$release/source"
	depmod -b "$new" "$release"
	rm -rf "$kroot"
	mv "$new" "$kroot"
}

# The modules vm-init and vm-guest.sh load, as modprobe in the guest sees
# them (a module or built in), and an external module built against $build.
verify_install() {
	local m tmp
	for m in virtio_pci 9pnet_virtio 9p crc32_generic rdma_rxe rdma_ucm \
		 veth virtio_net sch_netem; do
		modprobe -d "$kroot" -S "$release" --show-depends "$m" \
			>/dev/null || die "$kroot: no module $m"
	done
	[ -e "$kroot/lib/modules/$release/build/Module.symvers" ] ||
		die "$kroot/lib/modules/$release/build is broken"
	tmp=$(mktemp -d)
	cp "$here/testing/warn-module/Kbuild" \
	   "$here/testing/warn-module/rmsg_warn_probe.c" "$tmp/"
	if ! low make -s -C "$build" M="$tmp" modules >"$tmp/log" 2>&1; then
		cat "$tmp/log" >&2
		rm -rf "$tmp"
		die "$build cannot build an external module"
	fi
	modinfo -F vermagic "$tmp/rmsg_warn_probe.ko" | grep -q "^$release " ||
		die "external module's vermagic is not $release"
	rm -rf "$tmp"
}

if [ ! -e "$kroot/.done" ]; then
	log "building $release with -j$jobs (nice 19)"
	timed build compile
	timed install install_kernel
	verify_install
	# rmsg-vm rebuilds its initramfs only when vm-init changes: drop
	# this repository's, which may hold modules of an earlier build.
	rm -f "$here/../build/vm/initramfs-$release.cpio.gz"
	touch "$kroot/.done"
fi

log "debug guest kernel $release in $kroot"
echo "KDIR=$build"
