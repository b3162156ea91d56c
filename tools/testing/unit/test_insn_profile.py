#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tools/testing/insn-profile against made-up windows of real addresses,
as a KTAP test of `make check` (run from the top of the tree).

A tiny program is built with the host's cc, once with its symbols and once
stripped, and run at fixed addresses (setarch -R): each prints where its
functions and libc's puts() are and copies its /proc/self/maps, as
insn-mark maps would have. A made-up insn-lat directory then has two tools
("rmsg", the program with symbols; "ib", the stripped one), a window of
N1 and one of N2 round trips each, whose profiles count instructions at
those addresses, at kernel addresses of a made-up kallsyms, and at a user
address no mapping holds. Checked: each function's work and loop per round
trip, the once-only counts gone, the stripped file's addresses named by
their file only, libc's by its symbols, the unattributed apart, and the
totals against the windows' counters.
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile

PROG = r"""
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int hot(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) static int cold(int x)
{
	return x ^ 5;
}

int main(int argc, char **argv)
{
	FILE *in = fopen("/proc/self/maps", "r"), *out = fopen(argv[1], "w");
	char line[512];

	if (!in || !out)
		return 1;
	while (fgets(line, sizeof(line), in))
		fputs(line, out);
	fclose(out);
	printf("%lx %lx %lx\n", (unsigned long)hot, (unsigned long)cold,
	       (unsigned long)puts);
	return hot(argc) == cold(argc);
}
"""

N1, N2 = 10, 110
KALLSYMS = """\
ffffffff81000000 T _stext
ffffffff81001000 t __entry_alias
ffffffff81001000 T entry_SYSCALL_64
ffffffff81002000 t do_syscall_64
ffffffff81003000 D not_text
ffffffff81400000 T _etext
ffffffffc0001000 t rmsg_post_send\t[rmsg]
ffffffffc0001200 T rmsg_poll\t[rmsg]
"""

results = []


def check(name, ok, why=""):
    results.append((name, ok, why))


def build(tmp):
    src = os.path.join(tmp, "prog.c")
    with open(src, "w") as f:
        f.write(PROG)
    prog = os.path.join(tmp, "prog")
    stripped = os.path.join(tmp, "prog-stripped")
    subprocess.run(["cc", "-O1", "-fPIE", "-pie", src, "-o", prog],
                   check=True)
    subprocess.run(["strip", "-o", stripped, prog], check=True)
    return prog, stripped


def run(prog, maps):
    """The addresses of hot(), cold(), puts() and the program's PLT."""
    out = subprocess.run(["setarch", "-R", prog, maps], capture_output=True,
                         text=True, check=False).stdout
    addrs = [int(x, 16) for x in out.split()]
    # The PLT: the section's address in the file, from the mapping of
    # the file's start.
    sections = subprocess.run(["readelf", "-SW", prog], capture_output=True,
                              text=True, check=True).stdout
    plt = next(int(line.split("]", 1)[1].split()[2], 16)
               for line in sections.splitlines()
               if "] .plt" in line)
    with open(maps) as f:
        base = next(int(line.split("-")[0], 16) for line in f
                    if line.split()[2] == "00000000" and
                    line.rstrip().endswith(prog))
    return addrs + [base + plt + 8]


def window(d, label, number, rows, extra_user=0):
    """Write a window's profile and its line: rows (vaddr, all, loop)."""
    sums = {"user": 0, "kernel": 0, "user_loop": 0, "kernel_loop": 0}
    for vaddr, a, lp in rows:
        m = "kernel" if vaddr >> 63 else "user"
        sums[m] += a
        sums[m + "_loop"] += lp
    header = {"profile": number, "rows": len(rows), **sums,
              "complete": True}
    with gzip.open(os.path.join(d, "profile", label + ".gz"), "wt") as f:
        f.write(json.dumps(header) + "\n")
        for vaddr, a, lp in sorted(rows):
            f.write(f"{vaddr:x} {'k' if vaddr >> 63 else 'u'} {a} {lp}\n")
    # The counters saw a block more than the profile (one in flight).
    sums["user"] += extra_user
    line = {"label": label, "window": number, "by": 0, **sums,
            "blocks": 1, "vcpus": []}
    with open(os.path.join(d, "insn-lat"), "a") as f:
        f.write(json.dumps(line) + "\n")


def rows_for(n, hot, cold, puts, plt):
    """The rows of a window of n round trips: per round trip hot() 50
    (20 of it loop passes), cold() 7, puts() 11, the PLT 9, the kernel's
    entry 30,
    the module 13 (4 loop), a kernel address of no symbol 2, a user
    address in no mapping 5; once per window main-ish 1000 at hot's
    second block and 400 in do_syscall_64."""
    return [
        (hot, 50 * n + 100, 20 * n),
        (hot + 4, 1000, 0),
        (cold, 7 * n, 0),
        (puts, 11 * n, 0),
        (plt, 9 * n, 0),
        (0xffffffff81001010, 30 * n, 0),
        (0xffffffff81002040, 400, 0),
        (0xffffffffc0001210, 13 * n, 4 * n),
        (0xffffffff90000000, 2 * n, 0),
        (0x10000, 5 * n, 0),
    ]


def find(rows, fn, obj=None):
    for r in rows:
        if r["function"] == fn and (obj is None or r["object"] == obj):
            return r
    return None


def near(a, b):
    return a is not None and abs(a - b) < 1e-6


def main():
    tmp = tempfile.mkdtemp(prefix="insn-profile-test.")
    d = os.path.join(tmp, "out")
    os.makedirs(os.path.join(d, "profile"))
    os.makedirs(os.path.join(d, "maps"))
    with open(os.path.join(d, "kallsyms"), "w") as f:
        f.write(KALLSYMS)
    prog, stripped = build(tmp)
    number = 0
    addrs = {}
    for tool, binary in (("rmsg", prog), ("ib", stripped)):
        for n in (N1, N2):
            label = f"{tool}.{n}.1"
            number += 1
            a = run(binary, os.path.join(d, "maps", label + ".server"))
            run(binary, os.path.join(d, "maps", label + ".client"))
            addrs.setdefault(tool, a)
            check(f"fixed_addresses.{label}", a == addrs[tool],
                  "setarch -R moved the program")
            window(d, label, number, rows_for(n, *a),
                   extra_user=3 if n == N2 else 0)
    out = subprocess.run([sys.executable, "tools/testing/insn-profile",
                          "--json", d], capture_output=True, text=True,
                         check=False)
    if out.returncode:
        print(out.stderr, file=sys.stderr)
    check("runs", out.returncode == 0, out.stderr.strip()[-200:])
    res = json.loads(out.stdout)["profile"] if out.returncode == 0 else {}

    r = res.get("rmsg", {}).get("modes", {})
    user, kernel = r.get("user", {}), r.get("kernel", {})
    f = find(user.get("functions", []), "hot", "prog")
    check("user.hot", f and near(f["work"], 30) and near(f["loop"], 20),
          f"hot: {f}")
    check("user.static_function",
          near((find(user.get("functions", []), "cold") or {}).get("work"),
               7))
    f = find(user.get("functions", []), "puts")
    check("user.libc", f and near(f["work"], 11) and
          f["object"].startswith("libc"), f"puts: {f}")
    f = find(user.get("unattributed", []), "[not in the maps]")
    check("user.not_in_maps", f and near(f["work"], 5), f"{f}")
    f = find(user.get("unattributed", []), "[plt]", "prog")
    check("user.plt", f and near(f["work"], 9), f"{f}")
    check("user.total", near(user.get("profile", {}).get("work"),
                             30 + 7 + 11 + 9 + 5))
    c = user.get("counters", {})
    check("user.counters", near(c.get("work"), 62 + 3 / (N2 - N1)), f"{c}")
    # Of two names of one address, the one that is not reserved.
    f = find(kernel.get("functions", []), "entry_SYSCALL_64", "vmlinux")
    check("kernel.vmlinux", f and near(f["work"], 30), f"{f}")
    f = find(kernel.get("functions", []), "rmsg_poll", "rmsg")
    check("kernel.module", f and near(f["work"], 9) and near(f["loop"], 4),
          f"{f}")
    f = find(kernel.get("functions", []), "do_syscall_64")
    check("kernel.once_only_goes_out", f and near(f["all"], 0), f"{f}")
    f = find(kernel.get("unattributed", []), "[kernel, no symbol]")
    check("kernel.no_symbol", f and near(f["work"], 2), f"{f}")
    check("kernel.total", near(kernel.get("profile", {}).get("all"),
                               30 + 13 + 2) and
          near(kernel.get("counters", {}).get("all"), 45))

    ib = res.get("ib", {}).get("modes", {}).get("user", {})
    f = find(ib.get("unattributed", []), "[no symbol]", "prog-stripped")
    # hot and cold: the stripped file names neither.
    check("stripped.no_symbol", f and near(f["work"], 37), f"{f}")
    check("stripped.libc_named",
          near((find(ib.get("functions", []), "puts") or {}).get("work"),
               11))

    # The text report runs too, with a base to compare with.
    txt = subprocess.run([sys.executable, "tools/testing/insn-profile",
                          "--top", "2", "--base", d, d],
                         capture_output=True, text=True, check=False)
    check("text_report", txt.returncode == 0 and
          "hot (prog)" in txt.stdout and "1 more functions" in txt.stdout,
          txt.stderr.strip()[-200:])

    # A copy in DIR/bin is read instead of the file the maps name (the
    # program of the run, the tree's since built again): here the
    # stripped one, which names nothing.
    os.makedirs(os.path.join(d, "bin"))
    subprocess.run(["cp", stripped, os.path.join(d, "bin", "prog")],
                   check=True)
    out = subprocess.run([sys.executable, "tools/testing/insn-profile",
                          "--json", d], capture_output=True, text=True,
                         check=False)
    res = json.loads(out.stdout)["profile"] if out.returncode == 0 else {}
    user = res.get("rmsg", {}).get("modes", {}).get("user", {})
    f = find(user.get("unattributed", []), "[no symbol]", "prog")
    check("bin_copy_first", f and near(f["work"], 37) and
          not find(user.get("functions", []), "hot"), f"{f}")

    print("TAP version 13")
    print(f"1..{len(results)}")
    failed = 0
    for i, (name, ok, why) in enumerate(results, 1):
        if ok:
            print(f"ok {i} insn_profile.{name}")
        else:
            failed += 1
            print(f"not ok {i} insn_profile.{name} # {why}")
    if not os.environ.get("KEEP"):
        subprocess.run(["rm", "-rf", tmp], check=False)
    sys.exit(1 if failed else 0)


main()
