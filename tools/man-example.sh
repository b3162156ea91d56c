#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Print, as C, the example of man page PAGE (groff source) that follows the
# first line starting with TEXT: the lines between the next .nf and .fi,
# with groff's escapes \e and \- undone. test_man.sh compiles rmsg(7)'s
# server loop this way, and selftests/rmsg_man_test runs it.
#
#   tools/man-example.sh PAGE TEXT
[ $# -eq 2 ] || { echo "usage: $0 PAGE TEXT" >&2; exit 2; }
sed -n "/^$2/,/^\\.fi/p" "$1" | sed -n '/^\.nf/,/^\.fi/p' |
	sed -e '/^\.nf/d' -e '/^\.fi/d' -e 's/\\e/\\/g' -e 's/\\-/-/g'
