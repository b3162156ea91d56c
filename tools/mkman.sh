#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# librmsg's man pages: one page in section 3 per function, structure and
# enumeration that lib/rmsg.h documents in kernel-doc, and per structure
# and enumeration of <rdma/rmsg.h> a program of the library meets (UAPI
# below), written by the kernel's own scripts/kernel-doc (from Debian's
# linux-kbuild or linux-source, see tools/deps.sh) and finished by
# tools/mkman.pl; plus the pages kept in Documentation/man: rmsg(7), the
# overview, librmsg(3) and the tools' pages.
#
# Usage: tools/mkman.sh KERNEL_DOC OUTDIR VERSION
set -eo pipefail
shopt -s nullglob

# What <rdma/rmsg.h> gives a program of librmsg: what its calls take and
# fill in, the rings' entries, and the kinds of events.
UAPI=(rmsg_version rmsg_port_info rmsg_dev_info rmsg_ep_setup
      rmsg_ring_offsets rmsg_sqe rmsg_cqe rmsg_cqe_kind rmsg_chan_opts
      rmsg_chan_info rmsg_chan_info_addrs rmsg_link_info)

kdoc=$1 out=$2 version=$3
here=$(dirname "$0")
[ -r "$kdoc" ] || { echo "mkman: no kernel-doc at $kdoc (make deps)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/man1" "$out/man3" "$out/man7" "$out/man8"

# kernel-doc writes every page to one stream, each starting with
# .TH "NAME" 9 "TITLE" "DATE" "MANUAL" LINUX, structures and enumerations
# with NAME "Kernel API" and TITLE "struct x" or "enum x". Each becomes its
# own page in section 3, named after the function, struct_x or enum_x.
split_pages() {
	awk -v dir="$out/man3" -v ver="$version" '
/^\.TH "/ {
	split($0, f, "\"")
	name = f[2]
	title = f[4]
	if (name == "Kernel API") {
		name = title
		sub(/ /, "_", name)
	} else {
		title = name
	}
	if (page)
		close(page)
	page = dir "/" name ".3"
	printf ".TH \"%s\" 3 \"%s\" \"librmsg %s\" \"librmsg Manual\"\n", \
		title, f[6], ver > page
	next
}
page { print > page }'
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
perl "$here/mkman.pl" prep lib/rmsg.h >"$tmp/rmsg.h"
perl "$here/mkman.pl" prep include/uapi/rdma/rmsg.h >"$tmp/uapi.h"
perl "$kdoc" -man "$tmp/rmsg.h" | split_pages
perl "$kdoc" -man ${UAPI[@]/#/-function } "$tmp/uapi.h" | split_pages
for page in "$out"/man3/*.3; do
	perl "$here/mkman.pl" page "$page" "$out/man3" lib/rmsg.h \
		include/uapi/rdma/rmsg.h
done

for src in Documentation/man/*.[1378]; do
	sec=${src##*.}
	sed "s/@VERSION@/$version/g" "$src" >"$out/man$sec/$(basename "$src")"
done
