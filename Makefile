# SPDX-License-Identifier: GPL-2.0
#
# rmsg top-level build.
#
#   make            module, library, tools, examples and man pages
#   make examples   the example programs of examples/ (make builds them)
#   make tests      selftests and host unit tests (needs `make deps` first)
#   make run        install what is missing, build, boot the guest, demo
#   make check      install what is missing, build, run every test
#   make check-debug the same tests on a lockdep/KASAN guest kernel
#   make check-mpi   the libfabric programs over the provider, HPCC too, and
#                   an MPI job across two guests under a device removal
#   make bench      rmsg-perf beside perftest in the guest; bench/results.json
#   make soak       1000 injected faults of each class under checked streams
#   make fuzz       libFuzzer on the protocol core, FUZZ_SECONDS per target
#   make abifuzz    the ioctl/mmap/ring fuzzer in the guest, ABIFUZZ_SECS
#   make install    module (depmod), library, headers, pkg-config, tools
#   make lib tools  no kernel headers needed (then install-lib install-tools)
#
# KDIR selects the kernel headers (default: the running kernel's, from
# /lib/modules/$(uname -r)/build or Debian's /usr/src/linux-headers-*; else
# those Debian's linux-headers-amd64 stands for, 6.1 on Debian 12; else the
# newest Debian headers installed; make module says which, and when it is
# not the running kernel). RMSG_KVER=6.12 selects the newest headers of a
# Debian kernel line, and the test bed's guest kernel with them
# (make check RMSG_KVER=6.12; Documentation/testbed.rst). PREFIX, DESTDIR
# as usual.

# One version for all: dkms.conf's (DKMS reads only that file).
VERSION		:= $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' dkms.conf)
PREFIX		?= /usr/local
LIBDIR		?= $(PREFIX)/lib
INCLUDEDIR	?= $(PREFIX)/include
BINDIR		?= $(PREFIX)/bin
PKGCONFIGDIR	?= $(LIBDIR)/pkgconfig
MANDIR		?= $(PREFIX)/share/man

# RMSG_KVER (a Debian kernel line: 6.1, 6.12) picks that line's headers, and
# the test bed its guest kernel (tools/lib.sh, rmsg_kdir); make's $(shell)
# does not see a variable given on the command line unless passed.
RMSG_KVER	?=
KDIR		?= $(shell RMSG_KVER=$(RMSG_KVER) \
			   bash -c '. tools/lib.sh; rmsg_kdir' 2>/dev/null)
# Kernel headers carry the kernel's kernel-doc (Debian: linux-kbuild); the
# debug guest's headers do not, Debian's packages do.
KERNEL_DOC	?= $(firstword $(wildcard $(KDIR)/scripts/kernel-doc \
			       /usr/lib/linux-kbuild-*/scripts/kernel-doc) \
			       $(KDIR)/scripts/kernel-doc)
RMSG_CACHE	?= /var/cache/rmsg
KSELFTEST_DIR	:= $(RMSG_CACHE)/linux-source/tools/testing/selftests
CHECKPATCH	:= $(RMSG_CACHE)/linux-source/scripts/checkpatch.pl

CC		?= cc
CFLAGS		?= -O2 -g
WARN_CFLAGS	:= -Wall -Wextra -Wshadow -Wstrict-prototypes \
		   -Wmissing-prototypes -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN_CFLAGS	+= -Werror
KBUILD_WERROR	:= KCFLAGS=-Werror
endif
USER_CFLAGS	:= $(CFLAGS) $(WARN_CFLAGS) -D_GNU_SOURCE -Iinclude/uapi -Ilib
TEST_CFLAGS	:= $(USER_CFLAGS) -I$(KSELFTEST_DIR) -Itools/common \
		   -Wno-missing-prototypes \
		   -Wno-sign-compare \
		   -Wno-shadow
# The test programs' own code is built at -O1, in half the time -O2 took
# (make check builds about 40 of them, most of its build); what they test,
# the library and the core's objects, keeps CFLAGS.
TEST_OPT	?= -O1
TEST_PROG_CFLAGS := $(TEST_CFLAGS) $(TEST_OPT)
SAN_CFLAGS	:= -fsanitize=address,undefined -fno-sanitize-recover=all \
		   -ftrivial-auto-var-init=pattern \
		   -fno-omit-frame-pointer

UAPI		:= include/uapi/rdma/rmsg.h
LIB_SRCS	:= $(wildcard lib/*.c)
LIB_HDRS	:= $(wildcard lib/*.h)
CORE_SRCS	:= $(wildcard kernel/core/*.c)
CORE_HDRS	:= $(wildcard kernel/core/*.h)
# The library polls receive blocks with the protocol core itself.
LIB_CORE_SRCS	:= kernel/core/rmsg_vb.c
LIB_OBJS	:= $(patsubst lib/%.c,build/lib/%.o,$(LIB_SRCS)) \
		   $(patsubst kernel/core/%.c,build/lib/core/%.o,$(LIB_CORE_SRCS))
# Library code that is plain C and unit-tested on the host.
UNIT_LIB_SRCS	:= lib/rmsg_area.c
# And the test programs' checked messages (tools/common/rmsg_check.h).
UNIT_TOOL_SRCS	:= tools/common/rmsg_check.c
UNIT_SRCS	:= $(wildcard tools/testing/unit/test_*.c)
UNIT_BINS	:= $(patsubst tools/testing/unit/%.c,build/unit/%,$(UNIT_SRCS))
# Fuzz targets of the protocol core (Documentation/fuzzing.rst): libFuzzer
# programs for `make fuzz`, and seed-corpus replays among the unit tests.
FUZZ_SRCS	:= $(wildcard tools/testing/fuzz/fuzz_*.c)
FUZZ_NAMES	:= $(patsubst tools/testing/fuzz/fuzz_%.c,%,$(FUZZ_SRCS))
FUZZ_BINS	:= $(patsubst %,build/fuzz/fuzz_%,$(FUZZ_NAMES))
FUZZ_REPLAYS	:= $(patsubst %,build/unit/test_fuzz_%,$(FUZZ_NAMES))
FUZZ_HDRS	:= tools/testing/fuzz/fuzz.h
# The core and the code beside it, compiled once with the sanitizers for
# every unit test (and once more with the replays' flags), not once per
# program: 18 programs compiled the same files each, 47 of the unit
# build's 128 CPU seconds (about 24 s of make check's build on 2 CPUs).
UNIT_OBJS	:= $(patsubst %.c,build/unit-obj/%.o,$(notdir $(CORE_SRCS) \
		   $(UNIT_LIB_SRCS) $(UNIT_TOOL_SRCS)))
REPLAY_OBJS	:= $(patsubst %.c,build/replay-obj/%.o,$(notdir $(CORE_SRCS)))
# Kept, not removed as intermediate files after the programs are linked.
.SECONDARY: $(UNIT_OBJS) $(REPLAY_OBJS)
SELFTEST_SRCS	:= $(wildcard selftests/*_test.c)
SELFTEST_BINS	:= $(SELFTEST_SRCS:.c=)
PERF_SRCS	:= $(wildcard tools/rmsg-perf/*.c)
# Programs for people learning librmsg, one file each (examples/*.c);
# selftests/examples_test.sh runs them in the guest.
EXAMPLE_SRCS	:= $(wildcard examples/*.c)
EXAMPLE_BINS	:= $(EXAMPLE_SRCS:.c=)
# Checked messages (tools/common/rmsg_check.h): the patterns and the
# rendezvous mix that rmsg-perf and the selftests' streams share. Test code,
# so not in librmsg: built once and linked into both.
CHECK_OBJ	:= build/common/rmsg_check.o
CHECK_HDRS	:= tools/common/rmsg_check.h
# rmsg-perf counts system calls with a tracepoint, or failing that with
# wrappers of the calls a data path makes (tools/rmsg-perf/rmsg-perf.h).
PERF_WRAP	:= -Wl,--wrap=ioctl,--wrap=poll,--wrap=ppoll,--wrap=epoll_wait

.PHONY: all tests module lib tools examples selftests unit deps check run \
	bench bench-ab soak fuzz abifuzz install install-module install-lib \
	install-man install-tools install-prov prov insn mpi \
	clean checkpatch check-debug check-mpi soak-mpi man

all: module lib tools examples prov insn man

# The tests need the kselftest harness from the cache `make deps` fills; a
# node that only builds and installs rmsg does not.
tests: selftests unit

# Man pages: section 3 from the kernel-doc of lib/rmsg.h and of the
# UAPI's structures a program meets, by the kernel's own scripts/kernel-doc
# (in the headers the module builds against); rmsg(7), librmsg(3) and the
# tools' pages from Documentation/man.
MAN_SRCS	:= lib/rmsg.h $(UAPI) tools/mkman.sh tools/mkman.pl dkms.conf \
		   $(wildcard Documentation/man/*.[1378])

man: build/man/.done

build/man/.done: $(MAN_SRCS) | $(KERNEL_DOC)
	tools/mkman.sh $(KERNEL_DOC) build/man $(VERSION)
	touch $@

$(KERNEL_DOC):
	@echo "no kernel-doc at $(KERNEL_DOC): install the kernel headers (KDIR=)"
	@exit 1

deps:
	@tools/deps.sh

module:
	@test -n "$(KDIR)" || { echo "no kernel headers: set KDIR"; exit 1; }
	@rel=$$(cat $(KDIR)/include/config/kernel.release 2>/dev/null); \
	abi=$$(bash -c '. tools/lib.sh; rmsg_abi $(KDIR)'); \
	case "$$(uname -r)" in "$$rel"|"$$abi") ;; *) \
	echo "rmsg.ko: built for $$abi ($(KDIR)), not for the running kernel $$(uname -r); it loads only on $$abi. KDIR or RMSG_KVER chooses." ;; esac
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 $(KBUILD_WERROR) modules

# --- library ---------------------------------------------------------------

lib: lib/librmsg.so lib/librmsg.a lib/rmsg.pc

build/lib/%.o: lib/%.c $(LIB_HDRS) $(CORE_HDRS) $(UAPI)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Ikernel/core -fPIC -c $< -o $@

# The core's symbols are the library's own business: hidden, and local to
# the shared object by lib/librmsg.map as well.
build/lib/core/%.o: kernel/core/%.c $(CORE_HDRS) $(UAPI)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Ikernel/core -fvisibility=hidden -fPIC -c $< -o $@

lib/librmsg.so.1: $(LIB_OBJS) lib/librmsg.map
	$(CC) $(CFLAGS) -shared -Wl,-soname,librmsg.so.1 \
		-Wl,--version-script,lib/librmsg.map $(LIB_OBJS) -o $@

lib/librmsg.so: lib/librmsg.so.1
	ln -sf librmsg.so.1 $@

lib/librmsg.a: $(LIB_OBJS)
	$(AR) rcs $@ $^

lib/rmsg.pc: lib/rmsg.pc.in Makefile
	sed -e 's|@PREFIX@|$(PREFIX)|' \
	    -e 's|@LIBDIR@|$(patsubst $(PREFIX)%,$${prefix}%,$(LIBDIR))|' \
	    -e 's|@INCLUDEDIR@|$(patsubst $(PREFIX)%,$${prefix}%,$(INCLUDEDIR))|' \
	    -e 's|@VERSION@|$(VERSION)|' $< >$@

# --- the libfabric provider (Documentation/libfabric.rst) -----------------

# librmsg-fi.so for Debian's libfabric, with librmsg linked in and kept
# local. Built when libfabric-dev is there (make deps installs it); a node
# without it builds everything else.
PROV_SRCS	:= $(wildcard prov/*.c)
PROV_HDRS	:= $(wildcard prov/*.h)
HAVE_FABRIC	:= $(shell pkg-config --exists libfabric 2>/dev/null && echo 1)
FI_PROVDIR	?= $(shell pkg-config --variable=libdir libfabric 2>/dev/null)/libfabric

# The MPI programs of the selftests, where Open MPI's headers are there
# (libopenmpi-dev: make deps).
HAVE_MPI	:= $(shell echo '\#include <mpi.h>' | \
		     mpicc -E -x c - >/dev/null 2>&1 && echo 1)

ifeq ($(HAVE_FABRIC),1)
prov: build/prov/librmsg-fi.so build/prov/fi_wait build/prov/fi_unexp \
      build/prov/fi_cross build/prov/fi_av build/prov/fi_conform \
      build/prov/fi_calls build/prov/fi_msg_ep $(if $(HAVE_MPI),build/prov/mpi_intercomm)
else
prov:
	@echo "librmsg-fi.so not built: no libfabric-dev (pkg-config libfabric)"
endif

build/prov/librmsg-fi.so: $(PROV_SRCS) $(PROV_HDRS) lib/librmsg.a \
			  $(LIB_HDRS) $(UAPI)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $$(pkg-config --cflags libfabric) -fPIC \
		$(if $(filter 1,$(PROV_DEBUG)),-DENABLE_DEBUG=1) \
		-fvisibility=hidden -shared $(PROV_SRCS) lib/librmsg.a \
		-Wl,--exclude-libs,ALL -Wl,--no-undefined \
		$$(pkg-config --libs libfabric) -lpthread -o $@

# The libfabric programs of the selftests (selftests/libfabric_test.sh).
build/prov/fi_%: selftests/fi_%.c selftests/fi_test.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN_CFLAGS) $$(pkg-config --cflags libfabric) $< \
		$$(pkg-config --libs libfabric) -lpthread -o $@

build/prov/mpi_%: selftests/mpi_%.c
	@mkdir -p $(@D)
	mpicc $(CFLAGS) $(WARN_CFLAGS) $< -o $@

# The MPI job of selftests/pair_mpi.sh (make check-mpi), built with Open
# MPI's mpicc (libopenmpi-dev) where it is; make check does not need it.
HAVE_MPICC	:= $(shell command -v mpicc 2>/dev/null)

ifneq ($(HAVE_MPICC),)
mpi: build/mpi/mpi_pair
else
mpi:
	@echo "build/mpi/mpi_pair not built: no mpicc (libopenmpi-dev)"
endif

build/mpi/mpi_pair: selftests/mpi_pair.c
	@mkdir -p $(@D)
	mpicc $(CFLAGS) $(WARN_CFLAGS) $< -o $@

# --- tools and tests -------------------------------------------------------

tools: tools/rmsgctl/rmsgctl tools/rmsg-perf/rmsg-perf

# The instruction counter of the test bed (rmsg-vm -I,
# Documentation/bench.rst): a QEMU TCG plugin, for the host's QEMU, and the
# guest's marker program; neither needs librmsg.
insn: build/qemu/libinsncount.so build/qemu/insn-mark

build/qemu/libinsncount.so: tools/testing/insn/insncount.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN_CFLAGS) -fPIC -shared -fvisibility=hidden $< \
		-lpthread -o $@

build/qemu/insn-mark: tools/testing/insn/insn-mark.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN_CFLAGS) $< -o $@

# Tools and selftests link the static library: they run from the source
# tree, inside the guest too, with no install step.
TOOL_CFLAGS	:= $(USER_CFLAGS) -DRMSG_VERSION='"$(VERSION)"'

$(CHECK_OBJ): tools/common/rmsg_check.c $(CHECK_HDRS)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -c $< -o $@

tools/rmsgctl/rmsgctl: tools/rmsgctl/rmsgctl.c lib/librmsg.a lib/rmsg.h $(UAPI)
	$(CC) $(TOOL_CFLAGS) $< lib/librmsg.a -o $@

# One file per subcommand or family of them, over shared ones
# (tools/rmsg-perf/rmsg-perf.h says which calls which).
tools/rmsg-perf/rmsg-perf: $(PERF_SRCS) tools/rmsg-perf/rmsg-perf.h \
			   $(CHECK_OBJ) $(CHECK_HDRS) lib/librmsg.a lib/rmsg.h \
			   lib/rmsg_util.h $(UAPI)
	$(CC) $(TOOL_CFLAGS) -Itools/common $(PERF_SRCS) $(CHECK_OBJ) \
		lib/librmsg.a $(PERF_WRAP) -lpthread -lm -o $@

# Built as a program outside the tree would be, from lib/rmsg.h and the
# library alone (the static one, to run from the source tree).
examples: $(EXAMPLE_BINS)

$(EXAMPLE_BINS): examples/%: examples/%.c lib/librmsg.a lib/rmsg.h $(UAPI)
	$(CC) $(USER_CFLAGS) $< lib/librmsg.a -o $@

# The selftests run rmsgctl (the channel and link listings they check).
selftests: $(SELFTEST_BINS) tools/rmsgctl/rmsgctl

selftests/%_test: selftests/%_test.c selftests/rmsg_test.h lib/librmsg.a \
		  $(CHECK_OBJ) $(CHECK_HDRS) $(UAPI) \
		  | $(KSELFTEST_DIR)/kselftest_harness.h
	$(CC) $(TEST_PROG_CFLAGS) $< $(CHECK_OBJ) lib/librmsg.a -lpthread -o $@

# Read receive blocks with the protocol core's own receiver.
CORE_READERS	:= selftests/rmsg_eager_test selftests/rmsg_rndv_test \
		   selftests/rmsg_rndv_stress_test
$(CORE_READERS): selftests/%: selftests/%.c selftests/rmsg_test.h \
			   lib/librmsg.a $(CHECK_OBJ) $(CHECK_HDRS) \
			   $(CORE_SRCS) $(CORE_HDRS) $(UAPI) \
			   | $(KSELFTEST_DIR)/kselftest_harness.h
	$(CC) $(TEST_PROG_CFLAGS) -Ikernel/core $< kernel/core/rmsg_vb.c \
		$(CHECK_OBJ) lib/librmsg.a -lpthread -o $@

# rmsg(7)'s server loop as the page prints it.
build/man/rmsg7_server.inc: Documentation/man/rmsg.7 tools/man-example.sh
	@mkdir -p $(@D)
	tools/man-example.sh $< "A server's loop" rmsg_ep_progress \
		> $@.tmp && mv $@.tmp $@

selftests/rmsg_man_test: selftests/rmsg_man_test.c selftests/rmsg_test.h \
			 build/man/rmsg7_server.inc lib/librmsg.a $(CHECK_OBJ) \
			 $(CHECK_HDRS) $(UAPI) \
			 | $(KSELFTEST_DIR)/kselftest_harness.h
	$(CC) $(TEST_PROG_CFLAGS) -Ibuild/man $< $(CHECK_OBJ) lib/librmsg.a \
		-lpthread -o $@

# A raw verbs peer (rdma-core's libraries) that speaks the hello itself.
selftests/rmsg_isolation_test: selftests/rmsg_isolation_test.c \
			       selftests/rmsg_test.h lib/librmsg.a $(CHECK_OBJ) \
			       $(CHECK_HDRS) $(CORE_SRCS) $(CORE_HDRS) $(UAPI) \
			       | $(KSELFTEST_DIR)/kselftest_harness.h
	$(CC) $(TEST_PROG_CFLAGS) -Ikernel/core $< kernel/core/rmsg_wire.c \
		kernel/core/rmsg_vb.c $(CHECK_OBJ) lib/librmsg.a -lrdmacm \
		-libverbs -lpthread -o $@

unit: $(UNIT_BINS) $(FUZZ_REPLAYS) build/unit/test_man build/unit/test_layers \
      build/unit/test_insn_profile

# The module's files form layers with no circle, and each says which files
# it calls (Documentation/design.rst, "Layers"); read from the objects of
# the last `make module`, which `make check` builds first.
build/unit/test_layers: tools/testing/layers
	@mkdir -p $(@D)
	install -m 755 $< $@

# The instruction profile's report names made-up counts at the real
# addresses of a program it builds (tools/testing/insn-profile).
build/unit/test_insn_profile: tools/testing/unit/test_insn_profile.py \
			      tools/testing/insn-profile
	@mkdir -p $(@D)
	install -m 755 $< $@

# Every exported function has its page (a unit test of make check).
build/unit/test_man: tools/testing/unit/test_man.sh build/man/.done
	@mkdir -p $(@D)
	install -m 755 $< $@

# The same flags as the programs they go into: each source file was its
# own translation unit in the one cc command before, as it is now.
UNIT_OBJ_DEPS	:= $(CORE_HDRS) $(UAPI) $(LIB_HDRS) $(CHECK_HDRS)

build/unit-obj/%.o: kernel/core/%.c $(UNIT_OBJ_DEPS) \
		    | $(KSELFTEST_DIR)/kselftest_harness.h
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $(SAN_CFLAGS) -Ikernel/core -c $< -o $@

build/unit-obj/%.o: lib/%.c $(UNIT_OBJ_DEPS) \
		    | $(KSELFTEST_DIR)/kselftest_harness.h
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $(SAN_CFLAGS) -Ikernel/core -c $< -o $@

build/unit-obj/%.o: tools/common/%.c $(UNIT_OBJ_DEPS) \
		    | $(KSELFTEST_DIR)/kselftest_harness.h
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $(SAN_CFLAGS) -Ikernel/core -c $< -o $@

build/unit/%: tools/testing/unit/%.c $(UNIT_OBJS) $(CORE_HDRS) $(UAPI) \
	      $(LIB_HDRS) $(CHECK_HDRS) tools/testing/unit/unit_rng.h \
	      | $(KSELFTEST_DIR)/kselftest_harness.h
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) $(SAN_CFLAGS) -Ikernel/core $< $(UNIT_OBJS) \
		-o $@

# The core for the replays: their flags but FUZZ_NAME and FUZZ_CORPUS,
# which only the fuzz target and replay.c read.
build/replay-obj/%.o: kernel/core/%.c $(CORE_HDRS) $(UAPI)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(SAN_CFLAGS) -Wno-missing-prototypes \
		-Ikernel/core -Itools/testing/fuzz -c $< -o $@

# Each fuzz target once more, with the ordinary compiler and no libFuzzer:
# it replays the committed seed corpus, so every input that ever broke the
# core stays checked by `make check`.
build/unit/test_fuzz_%: tools/testing/fuzz/fuzz_%.c tools/testing/fuzz/replay.c \
			$(FUZZ_HDRS) $(REPLAY_OBJS) $(CORE_HDRS) $(UAPI)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(SAN_CFLAGS) -Wno-missing-prototypes \
		-Ikernel/core -Itools/testing/fuzz -DFUZZ_NAME='"$*"' \
		-DFUZZ_CORPUS='"tools/testing/fuzz/corpus/$*"' \
		$< tools/testing/fuzz/replay.c $(REPLAY_OBJS) -o $@

$(KSELFTEST_DIR)/kselftest_harness.h:
	@echo "kselftest harness missing: run 'make deps' (tools/deps.sh)"
	@exit 1

# --- the two commands of the README ---------------------------------------

# The build uses every CPU: make check must stay under 20 minutes.
NPROC		:= $(shell nproc 2>/dev/null || echo 1)

check: deps
	$(MAKE) -j$(NPROC) WERROR=1 all tests
	tools/testing/run-checks

# The libfabric programs over the provider with HPCC too, which make
# check leaves out for its two minutes (Documentation/libfabric.rst).
# Then an Open MPI job across the pair's two guests, 8 ranks a node, every
# byte checked, alone and while node 1's rxe0 is deleted and made again
# under it (selftests/pair_mpi.sh; testbed.rst, "make check-mpi: an MPI job across the pair").
# MPI_PAIR_SLOW scales its limits as RMSG_TEST_SLOW does.
MPI_PAIR_SLOW	?= 1
check-mpi: deps
	$(MAKE) -j$(NPROC) WERROR=1 all tests mpi
	tools/testing/rmsg-vm -T 1800 env LIBFABRIC_HPCC=1 LIBFABRIC_READDS=10 \
		selftests/run.sh libfabric_test.sh
	tools/testing/rmsg-vm -t pair -T $$((2400 * $(MPI_PAIR_SLOW))) \
		env RMSG_TEST_SLOW=$(MPI_PAIR_SLOW) selftests/pair_mpi.sh

run: deps
	$(MAKE) -j$(NPROC) all
	tools/testing/rmsg-vm -T 600 tools/testing/demo.sh

# make check's stages on a debug guest kernel built from Debian's
# linux-source (lockdep, KASAN, KFENCE, DEBUG_ATOMIC_SLEEP): the kernel is
# built once into the cache by tools/debug-kernel.sh (about an hour on two
# CPUs), rmsg against it, and every limit of run-checks is tripled for a
# guest that runs several times slower. Documentation/testbed.rst.
check-debug: deps
	kdir=$$(tools/debug-kernel.sh | sed -n 's/^KDIR=//p') && \
	test -n "$$kdir" && \
	$(MAKE) -j$(NPROC) WERROR=1 KDIR=$$kdir all tests && \
	KDIR=$$kdir RMSG_CHECK_SLOW=3 tools/testing/run-checks

# Benchmarks in the loopback guest beside perftest (Documentation/bench.rst):
# raw results in build/bench, the report in bench/results.json and
# bench/latency.png. Never part of `make check`: it measures, it does not
# judge.
BENCH_ROUNDS	?= 3
# eager, rndv (rendezvous against ib_read_bw/ib_read_lat/ib_write_bw), resil
# (repair times, retention's cost), ofi (fi_pingpong over the rmsg provider
# against libfabric's verbs;ofi_rxm), mpi (NetPIPE under Open MPI over the
# provider against UCX and verbs;ofi_rxm), insn (guest instructions per
# round trip; it boots with the counting plugin, rmsg-vm -I, which slows
# the timed parts: run it alone, BENCH_PARTS=insn), or any of them joined
# with commas
BENCH_PARTS	?= eager,rndv,resil,ofi,mpi
comma		:= ,

# The guest's memory (MiB): the link runs open 16,384 channels, both ends
# in the one guest (bench.sh's link_channels).
BENCH_VM_MEM	?= 4096

# The host's load goes into the report: other guests running at the same
# time on a 2-core machine make the figures worthless.
bench:
	@tools/deps.sh --bench
	$(MAKE) all
	rm -rf build/bench && mkdir -p build/bench
	{ uptime; echo "guests $$(pgrep -c -x qemu-system-x86)"; } \
		>build/bench/host.start
	RMSG_VM_MEM=$(BENCH_VM_MEM) \
	tools/testing/rmsg-vm -b $(if $(filter insn,$(subst $(comma), ,$(BENCH_PARTS))),-I) \
		-T 3000 tools/testing/bench.sh build/bench \
		$(BENCH_ROUNDS) $(BENCH_PARTS); status=$$?; \
	{ uptime; echo "guests $$(pgrep -c -x qemu-system-x86)"; } \
		>build/bench/host.end; \
	tools/testing/bench-report build/bench bench || status=1; \
	exit $$status

# This tree (B) against revision BENCH_BASE (A), one boot, the module
# swapped before every run, BENCH_AB_ROUNDS rounds taking turns at going
# first (Documentation/bench.rst, "Is a change worse?"). Results in
# build/bench-ab/ab.json.
BENCH_BASE	?=
BENCH_AB_ROUNDS	?= 5
BENCH_AB_PARTS	?= eager,rndv,resil

bench-ab:
	@test -n "$(BENCH_BASE)" || \
		{ echo "bench-ab: name the revision to compare with: BENCH_BASE=<rev>"; exit 1; }
	@tools/deps.sh --bench
	$(MAKE) all
	rm -rf build/ab build/bench-ab && mkdir -p build/bench-ab
	git clone -q --no-checkout . build/ab/a
	git -C build/ab/a checkout -q $(BENCH_BASE)
	git -C build/ab/a describe --always >build/ab/a/.bench-ab-rev
	$(MAKE) -C build/ab/a module tools
	tools/testing/rmsg-vm -b -T 3600 tools/testing/bench-ab.sh \
		build/bench-ab build/ab/a $(BENCH_AB_ROUNDS) $(BENCH_AB_PARTS); \
		status=$$?; \
	tools/testing/bench-ab-report build/bench-ab build/bench-ab || \
		status=1; \
	exit $$status

# Faults injected into channels under byte-checked streams, SOAK_FAULTS of
# each class (Documentation/resilience.rst, "Soak"). Never part of `make
# check`: it takes a long time.
SOAK_FAULTS	?= 1000
# SOAK_LINK=PORT: the channels on a link (soak.sh), where only qp-error
# applies; SOAK_CHANNELS: how many (soak.sh's default 4); SOAK_LEASE=1:
# their receive blocks leased (lease_blocks).
SOAK_LINK	?=
SOAK_CHANNELS	?=
SOAK_LEASE	?=
SOAK_ALL_KINDS	:= qp-error,disconnect,device-fatal,hca-readd
SOAK_KINDS	?= $(if $(SOAK_LINK),qp-error,$(SOAK_ALL_KINDS))
# Empty: soak.sh's default (every 7th message by rendezvous, in every
# class); 0: none at all.
SOAK_RNDV_EVERY	?=

soak: deps
	$(MAKE) WERROR=1 all
	tools/testing/rmsg-vm -T 7200 env SOAK_KINDS=$(SOAK_KINDS) \
		$(if $(SOAK_RNDV_EVERY),SOAK_RNDV_EVERY=$(SOAK_RNDV_EVERY)) \
		$(if $(SOAK_LINK),SOAK_LINK=$(SOAK_LINK)) \
		$(if $(SOAK_CHANNELS),SOAK_CHANNELS=$(SOAK_CHANNELS)) \
		$(if $(SOAK_LEASE),SOAK_LEASE=$(SOAK_LEASE)) \
		tools/testing/soak.sh $(SOAK_FAULTS)

# Unmodified MPI programs (NetPIPE, HPCC) under faults over rmsg's
# provider, UCX and verbs;ofi_rxm (tools/testing/mpi-faults.sh,
# Documentation/bench.rst): MPI_FAULT_RUNS runs of each. Never part of
# `make check`: about a minute a run.
MPI_FAULT_RUNS	?= 10
MPI_FAULT_TRANSPORTS ?= rmsg,ucx,rxm
MPI_FAULTS	?= readd,flap,qp-error
soak-mpi: deps
	$(MAKE) WERROR=1 all
	tools/testing/rmsg-vm -T 7200 tools/testing/mpi-faults.sh \
		$(MPI_FAULT_RUNS) $(MPI_FAULT_TRANSPORTS) $(MPI_FAULTS)

# libFuzzer needs clang (Debian's clang and libclang-rt-dev); deps.sh
# --fuzz installs them. Never part of `make check`: it searches, for as
# long as it is given. FUZZ_TARGETS picks some of them.
FUZZ_CC		?= clang
FUZZ_SECONDS	?= 60
FUZZ_TARGETS	?= $(FUZZ_NAMES)
FUZZ_CFLAGS	:= -g -O1 -std=gnu11 $(WARN_CFLAGS) -Wno-c2x-extensions \
		   -D_GNU_SOURCE -Iinclude/uapi -Ikernel/core \
		   -Itools/testing/fuzz \
		   -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

build/fuzz/fuzz_%: tools/testing/fuzz/fuzz_%.c $(FUZZ_HDRS) $(CORE_SRCS) \
		   $(CORE_HDRS) $(UAPI)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $< $(CORE_SRCS) -o $@

fuzz:
	@tools/deps.sh --fuzz
	$(MAKE) $(patsubst %,build/fuzz/fuzz_%,$(FUZZ_TARGETS))
	tools/testing/fuzz/run-fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# The ABI fuzzer (selftests/rmsg_abi_fuzz_test, Documentation/hardening.rst)
# for longer than the 6 s per pass `make check` gives it: ABIFUZZ_SECS per
# pass (one as root, one as nobody); ABIFUZZ_SEED repeats a run's calls.
# ABIFUZZ_RUNS runs it that many times in one guest, each with a new seed
# (unless ABIFUZZ_SEED), each followed by the leak check.
ABIFUZZ_SECS	?= 300
ABIFUZZ_SEED	?=
ABIFUZZ_RUNS	?= 1

abifuzz: deps
	$(MAKE) WERROR=1 all tests
	tools/testing/rmsg-vm \
		-T $$(($(ABIFUZZ_RUNS) * (2 * $(ABIFUZZ_SECS) + 120) + 180)) \
		env ABIFUZZ_SECS=$(ABIFUZZ_SECS) \
		$(if $(ABIFUZZ_SEED),ABIFUZZ_SEED=$(ABIFUZZ_SEED)) \
		selftests/run.sh $(foreach i,$(shell seq $(ABIFUZZ_RUNS)),rmsg_abi_fuzz_test)

# kernel/rmsg_compat.h holds the module's one test of LINUX_VERSION_CODE,
# which checkpatch rightly refuses in code meant for the tree; it alone
# is let through that check.
CHECKPATCH_FLAGS := --no-tree --quiet --show-types \
		    --ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG,NEW_TYPEDEFS

checkpatch:
	$(CHECKPATCH) $(CHECKPATCH_FLAGS) --ignore LINUX_VERSION_CODE \
		-f kernel/rmsg_compat.h
	$(CHECKPATCH) $(CHECKPATCH_FLAGS) \
		-f $(filter-out %.mod.c kernel/rmsg_compat.h,$(wildcard kernel/*.c kernel/*.h kernel/core/*.[ch] \
			lib/*.[ch] tools/rmsgctl/*.c tools/rmsg-perf/*.[ch] \
			tools/common/*.[ch] \
			selftests/*.[ch] examples/*.c \
			tools/testing/unit/*.c tools/testing/warn-module/*.c \
			tools/testing/fuzz/*.[ch] prov/*.[ch])) \
		$(UAPI)

# --- install ---------------------------------------------------------------

install: install-module install-lib install-tools install-man \
	 $(if $(HAVE_FABRIC),install-prov)

# Where Debian's libfabric looks for providers by default.
install-prov: prov
	install -D -m 755 build/prov/librmsg-fi.so \
		$(DESTDIR)$(FI_PROVDIR)/librmsg-fi.so

# A node without kernel headers (its module comes from DKMS or a package)
# builds and installs the rest: make lib tools && make install-lib
# install-tools.
install-tools: tools
	install -D -m 755 tools/rmsgctl/rmsgctl $(DESTDIR)$(BINDIR)/rmsgctl
	install -D -m 755 tools/rmsg-perf/rmsg-perf \
		$(DESTDIR)$(BINDIR)/rmsg-perf

# Signed only with the key the kernel's build names, if it is there:
# Debian's headers have none, and sign-file would only print SSL errors
# and leave the module unsigned (DKMS signs with its own key).
install-module: module
	key=$$(sed -n 's/^CONFIG_MODULE_SIG_KEY="\{0,1\}\([^"]*\)"\{0,1\}$$/\1/p' \
		$(KDIR)/include/config/auto.conf 2>/dev/null); \
	case $$key in /*) ;; *) key=$(KDIR)/$$key ;; esac; \
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=extra \
		$(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR)) \
		$$([ -f "$$key" ] || echo CONFIG_MODULE_SIG_ALL=) modules_install
	depmod $(if $(DESTDIR),-b $(DESTDIR)) \
		$$(bash -c '. tools/lib.sh; rmsg_abi $(KDIR)')

install-lib: lib
	install -D -m 644 $(UAPI) $(DESTDIR)$(INCLUDEDIR)/rdma/rmsg.h
	install -D -m 644 lib/rmsg.h $(DESTDIR)$(INCLUDEDIR)/rmsg.h
	install -D -m 755 lib/librmsg.so.1 $(DESTDIR)$(LIBDIR)/librmsg.so.1
	ln -sf librmsg.so.1 $(DESTDIR)$(LIBDIR)/librmsg.so
	install -D -m 644 lib/librmsg.a $(DESTDIR)$(LIBDIR)/librmsg.a
	install -D -m 644 lib/rmsg.pc $(DESTDIR)$(PKGCONFIGDIR)/rmsg.pc
	-[ -n "$(DESTDIR)" ] || ldconfig

install-man: man
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 \
		$(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(MANDIR)/man8
	install -m 644 build/man/man1/*.1 $(DESTDIR)$(MANDIR)/man1
	install -m 644 build/man/man3/*.3 $(DESTDIR)$(MANDIR)/man3
	install -m 644 build/man/man7/*.7 $(DESTDIR)$(MANDIR)/man7
	install -m 644 build/man/man8/*.8 $(DESTDIR)$(MANDIR)/man8

clean:
	-[ -z "$(KDIR)" ] || $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -rf build lib/librmsg.so* lib/librmsg.a lib/rmsg.pc \
		tools/rmsgctl/rmsgctl tools/rmsg-perf/rmsg-perf $(SELFTEST_BINS) \
		$(EXAMPLE_BINS)
