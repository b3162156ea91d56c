#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The man pages are complete (tools/mkman.sh makes them):
#  - man.NAME: every function librmsg exports (lib/librmsg.map) and every
#    inline one of lib/rmsg.h has its page, with a NAME line that says what
#    it does, a SYNOPSIS with #include <rmsg.h> and "Link with -lrmsg",
#    RETURN VALUE, ERRORS, NOTES and SEE ALSO;
#  - man.struct_X, man.enum_X: every structure of lib/rmsg.h, those of
#    <rdma/rmsg.h> the library's calls take, and the kinds of events have
#    theirs (NAME, SYNOPSIS, SEE ALSO), the event page every RMSG_CQE_*;
#  - man.rmsg.7 is the overview: it names every page of section 3, and
#    librmsg(3) leads to it;
#  - synopsis.NAME: the SYNOPSIS of every page of sections 3 and 7
#    compiles against lib/rmsg.h with the system's cc (a structure's under
#    another name, of the same size as the header's; an enumeration's
#    constants likewise, of the header's values);
#  - the tools have their pages.
# KTAP; run from the top of the tree. MAN_CC overrides the compiler.
shopt -s nullglob
man=${1:-build/man}
cc=${MAN_CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mapfile -t syms < <(sed -n 's/^[[:space:]]*\(rmsg_[a-z0-9_]*\);/\1/p' lib/librmsg.map)
mapfile -t inline < <(sed -n 's/^static inline .*[ *]\(rmsg_[a-z0-9_]*\)(.*/\1/p' lib/rmsg.h)
# Documented structures and enumerations of lib/rmsg.h, and what
# tools/mkman.sh takes from the UAPI.
mapfile -t types < <(sed -n 's/^ \* \(struct\|enum\) \(rmsg_[a-z0-9_]*\) - .*/\1_\2/p' lib/rmsg.h
		     sed -n '/^UAPI=(/,/)/p' tools/mkman.sh | tr -s ' ()\t' '\n' |
		     grep '^rmsg_' | while read -r n; do
			     grep -q "^ \* \(struct\|enum\) $n - " include/uapi/rdma/rmsg.h &&
				     sed -n "s/^ \* \(struct\|enum\) \($n\) - .*/\1_\2/p" include/uapi/rdma/rmsg.h
		     done)
mapfile -t kinds < <(sed -n '/^enum rmsg_cqe_kind {/,/^}/s/^\t\(RMSG_CQE_[A-Z_]*\).*/\1/p' include/uapi/rdma/rmsg.h)
mapfile -t all3 < <(cd "$man/man3" 2>/dev/null && ls -- *.3 | sed 's/\.3$//')
pages=("$man"/man3/*.3 "$man"/man7/*.7)

funcs=("${syms[@]}" "${inline[@]}")
echo "TAP version 13"
echo "1..$(( ${#funcs[@]} + ${#types[@]} + 3 + ${#pages[@]} + 2 ))"
n=0 status=0

result() {	# NAME OK WHY
	n=$((n + 1))
	if [ "$2" = 1 ]; then
		echo "ok $n $1"
	else
		echo "not ok $n $1 # $3"
		status=1
	fi
}

# The sections of page $1 (unquoted), one a line.
sections() {
	sed -n 's/^\.SH  *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$1"
}

# Page $1 (man/secN/name.N): .TH first, NAME "name \- what", and the
# sections $2...; prints what is missing.
missing() {
	local f=$1 name s secs
	shift
	name=$(basename "$f")
	name=${name%.*}
	# struct_x's NAME line: "struct x \- what"
	case "$name" in struct_*|enum_*) name=${name/_/ } ;; esac
	[ -s "$f" ] || { echo "no page $f"; return; }
	grep -m 1 -v '^\.\\"' "$f" | grep -q '^\.TH ' || echo "no .TH first"
	grep -A1 '^\.SH "\{0,1\}NAME' "$f" | grep -q "^$name \\\\- ..." ||
		echo "no NAME line"
	# The page's sections read once, each asked for matched as a line.
	secs=$'\n'$(sections "$f")$'\n'
	for s in "$@"; do
		[[ $secs == *$'\n'"$s"$'\n'* ]] || echo "no $s"
	done
}

# The SYNOPSIS of page $1 as text, into $syn; each page is formatted once
# (the functions' pages are read twice: groff was a third of the time).
declare -A syn_of
synopsis_text() {
	[ -n "${syn_of[$1]+set}" ] ||
		syn_of[$1]=$(groff -man -Tutf8 -rLL=200n -P-cbou "$1" 2>/dev/null |
			     sed -n '/^SYNOPSIS/,/^[A-Z]/{/^[A-Z]/d;p}')
	syn=${syn_of[$1]}
}

for f in "${funcs[@]}"; do
	p="$man/man3/$f.3"
	why=$(missing "$p" SYNOPSIS "RETURN VALUE" ERRORS NOTES "SEE ALSO")
	if [ -z "$why" ]; then
		synopsis_text "$p"
		s=$syn
		grep -q '#include <rmsg\.h>' <<<"$s" || why="no #include <rmsg.h>"
		grep -q 'Link with -lrmsg' <<<"$s" || why="$why no Link with -lrmsg"
	fi
	result "man.$f" "$([ -z "$why" ] && echo 1)" "$(echo $why)"
done

for t in "${types[@]}"; do
	p="$man/man3/$t.3"
	why=$(missing "$p" SYNOPSIS "SEE ALSO")
	if [ -z "$why" ] && [ "$t" = enum_rmsg_cqe_kind ]; then
		for k in "${kinds[@]}"; do
			grep -q "$k" "$p" || why="$why $k not there"
		done
	fi
	result "man.$t" "$([ -z "$why" ] && echo 1)" "$(echo $why)"
done

# The overview names every page of section 3, and librmsg(3) is it.
p="$man/man7/rmsg.7"
why=$(missing "$p" SYNOPSIS DESCRIPTION "SEE ALSO")
if [ -z "$why" ]; then
	text=$(groff -man -Tutf8 -rLL=200n -P-cbou "$p" 2>/dev/null)
	for f in "${all3[@]}"; do
		grep -qF "$f(3)" <<<"$text" || why="$why $f(3) not named"
	done
fi
result man.rmsg.7 "$([ -z "$why" ] && echo 1)" "$(echo $why)"
p="$man/man3/librmsg.3"
ok=$([ -s "$p" ] && grep -qx '\.so man7/rmsg\.7' "$p" && echo 1)
result man.librmsg.3 "$ok" "no $p leading to rmsg(7)"

# The overview's server loop compiles as it is printed
# (tools/man-example.sh), in a function of its own; selftests/rmsg_man_test
# runs it.
c="$tmp/rmsg7-server.c"
err=$({
	printf '#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n'
	printf '#include <arpa/inet.h>\n#include <rmsg.h>\n\n'
	printf 'void server(void);\nvoid server(void)\n{\n'
	tools/man-example.sh "$man/man7/rmsg.7" "A server's loop" \
		rmsg_ep_progress || exit
	printf '}\n'
} 2>&1 >"$c")
[ -n "$err" ] || err=$($cc -std=gnu11 -fsyntax-only -Wall -Werror \
	-Iinclude/uapi -Ilib -x c "$c" 2>&1 | head -3 | tr '\n' ' ')
result rmsg.7.server_loop "$([ -z "$err" ] && echo 1)" "$err"

# Every SYNOPSIS compiles: a function's prototype must match the header's,
# a structure (renamed) must have the header's size. The sources are
# written first and compiled side by side, one cc per CPU (75 of them one
# after the other were a third of this test's time); the results follow
# in the pages' order.
cfiles=()
for p in "${pages[@]}"; do
	name=$(basename "$p")
	grep -q '^\.so ' "$p" && continue
	synopsis_text "$p"
	s=$(grep -v '^ *Link with' <<<"$syn")
	c="$tmp/${name%.*}.c"
	case "$name" in
	struct_*|enum_*)
		t=${name%.3}
		t=${t/_/ }
		# enum constants would clash with the header's: a prefix.
		if [ "${t%% *}" = enum ]; then
			s=$(sed -E 's/^( *)(RMSG_[A-Z0-9_]+)/\1page_\2/' <<<"$s")
		fi
		s=$(sed "s/\\<$t\\>/$t""_page/" <<<"$s")
		printf '%s\n_Static_assert(sizeof(%s_page) == sizeof(%s), "%s");\n' \
			"$s" "$t" "$t" "$t" >"$c"
		# and every constant the header's value
		grep -o '\<page_RMSG_[A-Z0-9_]*' <<<"$s" | sed 's/^page_//' |
		while read -r k; do
			printf '_Static_assert((int)page_%s == (int)%s, "%s");\n' "$k" "$k" "$k"
		done >>"$c" ;;
	*)
		printf '%s\n' "$s" >"$c" ;;
	esac
	grep -q '[a-z]' "$c" || echo "empty SYNOPSIS" >"$c"
	cfiles+=("$c")
done
# Each one's diagnostics into its .err (the inner shell expands $1).
# shellcheck disable=SC2016
((${#cfiles[@]})) && printf '%s\0' "${cfiles[@]}" |
	MAN_CC_CMD=$cc xargs -0 -n 1 -P "$(nproc 2>/dev/null || echo 2)" \
		sh -c '$MAN_CC_CMD -std=gnu11 -fsyntax-only -Wall -Werror \
		       -Iinclude/uapi -Ilib -x c "$1" >"$1.err" 2>&1' sh
for p in "${pages[@]}"; do
	name=$(basename "$p")
	grep -q '^\.so ' "$p" && { result "synopsis.$name" 1; continue; }
	c="$tmp/${name%.*}.c"
	err=$(head -3 "$c.err" 2>&1 | tr '\n' ' ')
	result "synopsis.$name" "$([ -z "$err" ] && echo 1)" "$err"
done

for p in man8/rmsgctl.8 man1/rmsg-perf.1; do
	why=$(missing "$man/$p" SYNOPSIS DESCRIPTION)
	result "man.$(basename "$p")" "$([ -z "$why" ] && echo 1)" "$(echo $why)"
done
exit $status
