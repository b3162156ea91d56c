# SPDX-License-Identifier: GPL-2.0
#
# Shared by insn-lat.sh and insn-open.sh (sourced): the plugin's profile
# of each counted window, when rmsg-vm runs with RMSG_VM_INSN_PROFILE=1
# (RMSG_INSN_PROFILE_OUT set), kept for tools/testing/insn-profile.

# insn_profile_setup OUT PERF: where the windows' profiles go, kernel
# addresses in /proc/kallsyms (not zeros), and a copy of the rmsg-perf
# that runs, whose symbols a later build must not move.
insn_profile_setup() {
	mkdir -p "$1/profile" "$1/maps" "$1/bin" &&
		echo 0 >/proc/sys/kernel/kptr_restrict &&
		cp "$2" "$1/bin/"
}

# insn_profile_keep OUT LABEL SIZE: the window's profile, what the plugin
# appended to its file past SIZE bytes, to OUT/profile/LABEL.gz, and the
# kernel's symbols to OUT/kallsyms once.
insn_profile_keep() {
	tail -c +"$(($3 + 1))" "$RMSG_INSN_PROFILE_OUT" |
		gzip -1 >"$1/profile/$2.gz" || return 1
	[ -s "$1/kallsyms" ] || cat /proc/kallsyms >"$1/kallsyms"
}
