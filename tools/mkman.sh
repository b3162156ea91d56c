#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# librmsg's man pages: one page in section 3 per function and structure
# that lib/rmsg.h documents in kernel-doc, written by the kernel's own
# scripts/kernel-doc (from Debian's linux-source, see tools/deps.sh), plus
# the tools' pages kept in Documentation/man.
#
# Usage: tools/mkman.sh KERNEL_DOC OUTDIR VERSION
set -eo pipefail
shopt -s nullglob

kdoc=$1 out=$2 version=$3
[ -r "$kdoc" ] || { echo "mkman: no kernel-doc at $kdoc (make deps)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/man1" "$out/man3" "$out/man8"

# kernel-doc writes every page to one stream, each starting with
# .TH "NAME" 9 "TITLE" "DATE" "MANUAL" LINUX, structures with NAME
# "Kernel API" and TITLE "struct x". Each becomes its own page in section
# 3, named after the function, or struct_x.
perl "$kdoc" -man lib/rmsg.h | awk -v dir="$out/man3" -v ver="$version" '
/^\.TH "/ {
	split($0, f, "\"")
	name = f[2]
	title = f[4]
	if (name == "Kernel API") {
		name = title
		sub(/^struct /, "struct_", name)
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

for src in Documentation/man/*.[18]; do
	sec=${src##*.}
	sed "s/@VERSION@/$version/g" "$src" >"$out/man$sec/$(basename "$src")"
done
