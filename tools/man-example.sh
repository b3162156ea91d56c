#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Print, as C, the example of man page PAGE (groff source) that follows the
# first line starting with TEXT: the lines between the next .nf and .fi,
# with groff's escapes \e and \- undone. With WORD, the example must
# contain it: a page whose text moved gives an error, not an empty or
# wrong example. test_man.sh compiles rmsg(7)'s server loop this way, and
# selftests/rmsg_man_test runs it.
#
#   tools/man-example.sh PAGE TEXT [WORD]
[ $# -eq 2 ] || [ $# -eq 3 ] || {
	echo "usage: $0 PAGE TEXT [WORD]" >&2
	exit 2
}
example=$(sed -n "/^$2/,/^\\.fi/p" "$1" | sed -n '/^\.nf/,/^\.fi/p' |
	sed -e '/^\.nf/d' -e '/^\.fi/d' -e 's/\\e/\\/g' -e 's/\\-/-/g')
if [ -z "$example" ] || { [ $# -eq 3 ] && ! printf '%s\n' "$example" |
		grep -q -- "$3"; }; then
	echo "$0: no example${3:+ with $3} after \"$2\" in $1" >&2
	exit 1
fi
printf '%s\n' "$example"
