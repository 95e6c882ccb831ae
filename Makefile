# LDS - one non-recursive Makefile for the daemon, the library, the tools
# and the tests.  `make V=1` shows the commands.
#
#   make            build everything into build/
#   make check      unit tests (plain, then ASan+UBSan), fuzz smoke, integration tests,
#                   wanemu's tests (make wan)
#   make demo       two clusters' ldsd on this machine and a job through them
#   make bench      performance targets of the issues, see docs/BENCHMARKS.md
#   make fuzz       longer libFuzzer run of every fuzz target (tests/fuzz)
#   make install    PREFIX=/usr/local DESTDIR= (also LIBDIR, SBINDIR, ..., below)
#   make uninstall  the same variables

# One version for every program and library.
VERSION := $(shell cat VERSION)
PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
LIBDIR     ?= $(PREFIX)/lib
LIBEXECDIR ?= $(PREFIX)/libexec
INCLUDEDIR ?= $(PREFIX)/include
DATADIR    ?= $(PREFIX)/share
MANDIR     ?= $(DATADIR)/man
DOCDIR     ?= $(DATADIR)/doc/lds
SYSCONFDIR ?= /etc
RUNDIR     ?= /run
UNITDIR    ?= $(LIBDIR)/systemd/system
BUILD   ?= build
CC      ?= cc
# Where root or TUN is missing, the WAN tests say so and are skipped.
FUZZ_SECONDS ?= 20

Q = @
ifeq ($(V),1)
Q =
endif

PKGS     := libconfig openssl
CSTD     := -std=gnu11
WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
CFLAGS   ?= -O2 -g
VERSION_DEF := -DLDS_VERSION='"$(VERSION)"'
# What every object is compiled with, the fuzz build's too: the features
# found (RDMA, ISA-L, ipsec-mb, below) and the libraries' headers.
LDS_CPPFLAGS = -D_GNU_SOURCE $(VERSION_DEF) $(RDMA_DEF) $(ISAL_DEF) $(IPSECMB_DEF) -I. $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
ALL_CFLAGS = $(CSTD) $(WARN) $(CPPFLAGS) $(CFLAGS) -fPIC $(LDS_CPPFLAGS) -MMD -MP
LDLIBS_D := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)
# liblds needs only libcrypto (the key check of TCP clients, clientauth.c),
# and ISA-L where it is (below).
CRYPTO_LIBS := $(shell pkg-config --libs libcrypto 2>/dev/null)
# CRC-32C (ldsd/crc32c.c) of blocks with Intel ISA-L's crc32_iscsi where
# Debian's libisal-dev is (tools/install-deps.sh installs it): twice the
# speed of the crc32 instruction's chains on x86-64 with AVX-512; without
# it, those chains.
HAVE_ISAL := $(shell pkg-config --exists libisal 2>/dev/null && \
	printf '\043include <isa-l/crc.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1)
ifeq ($(HAVE_ISAL),1)
ISAL_DEF   := -DLDS_HAVE_ISAL
ISAL_LIBS  := $(shell pkg-config --libs libisal)
LDLIBS_D   += $(ISAL_LIBS)
endif
# AES-256-GCM of sealed frames (ldsd/aesgcm.c) with Intel's ipsec-mb where
# Debian's libipsec-mb-dev is (x86-64 only; tools/install-deps.sh installs
# it there): four times OpenSSL 3.0's speed on CPUs with VAES and AVX-512;
# without it, OpenSSL.  The library has no pkg-config file.
HAVE_IPSECMB := $(shell printf '\043include <intel-ipsec-mb.h>\nint main(void){return imb_get_version() == 0;}\n' | \
	$(CC) -x c -o /dev/null - -lIPSec_MB >/dev/null 2>&1 && echo 1)
ifeq ($(HAVE_IPSECMB),1)
IPSECMB_DEF  := -DLDS_HAVE_IPSECMB
IPSECMB_LIBS := -lIPSec_MB
LDLIBS_D     += $(IPSECMB_LIBS)
endif

# ---- sources -------------------------------------------------------------
# Daemon modules live in a static library that ldsd, the tools and the tests
# all link; main.c files are the only things outside it.
# The analytical model (launcher/model*.c) has no main and no state: it goes
# into the same library, for mwpredict, mwlaunch and the unit tests.
MODEL_SRC  := launcher/model.c launcher/modelconf.c launcher/modelout.c
LDSD_SRC   := $(filter-out ldsd/main.c ldsd/exec_trampoline.c,$(wildcard ldsd/*.c)) $(wildcard transports/*.c) \
	$(wildcard transports/udp/*.c) libclient/clientproto.c \
	libclient/idset.c libclient/keyfile.c libclient/clientauth.c libclient/shmring.c $(MODEL_SRC)
# The RDMA transport (transports/rdma): its logic (pools, credits, chunks,
# the header, settings) needs no device and is always built and tested;
# the verbs glue is built, and the kind registered, where rdma-core's
# headers and libraries are (tools/install-deps.sh installs them).
RDMA_VERBS_SRC := transports/rdma/rdma.c transports/rdma/rdx_data.c
HAVE_RDMA := $(shell pkg-config --exists libibverbs librdmacm 2>/dev/null && \
	printf '\043include <infiniband/verbs.h>\n\043include <rdma/rdma_cma.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1)
LDSD_SRC   += $(filter-out $(RDMA_VERBS_SRC),$(wildcard transports/rdma/*.c))
ifeq ($(HAVE_RDMA),1)
LDSD_SRC   += $(RDMA_VERBS_SRC)
RDMA_DEF   := -DLDS_HAVE_RDMA
LDLIBS_D   += $(shell pkg-config --libs libibverbs librdmacm)
endif
LIBLDS_SRC := $(wildcard libclient/*.c) ldsd/wire.c ldsd/crc32c.c transports/rdma/rdx_relay.c
# liblds's RDMA client path (rdma://, libclient/rdmaclient.c) runs the rdma
# kind itself: with rdma-core, liblds carries the transport and links its
# libraries; without, rdma:// fails with -ENODEV.
ifeq ($(HAVE_RDMA),1)
LIBLDS_SRC := $(sort $(LIBLDS_SRC) $(wildcard transports/rdma/*.c))
RDMA_LIBS  := $(shell pkg-config --libs libibverbs librdmacm)
endif
UNIT_SRC   := $(wildcard tests/unit/*.c)
# The unit tests' monotonic clock is tests/unit/fakeclock.c's, which a
# test can move forward instead of waiting.
UNIT_LDFLAGS := -Wl,--wrap=clock_gettime
# The master-worker runtime: modules without MPI are also unit-tested (and
# built with the sanitizers); the others need mpicc's flags.
MW_PURE_SRC := launcher/mw_buf.c launcher/mw_config.c launcher/mw_sched.c launcher/mw_journal.c \
	launcher/mw_stats.c launcher/mw_proto.c launcher/mw_role.c launcher/mw_wan.c launcher/mw_cache.c launcher/mw_ring.c \
	launcher/mw_calib.c
MW_MPI_SRC  := $(filter-out $(MW_PURE_SRC),$(wildcard launcher/mw_*.c))
# ldsbench's message checks and status reader are unit-tested too.
BENCH_PURE_SRC := tools/ldsbench/msg.c tools/ldsbench/linkstat.c
# So are mwlaunch --benchmark's medians of its calibration runs.
MWLAUNCH_PURE_SRC := tools/mwlaunch/calstat.c
# And wanemu's link model (one direction: queue, loss, delay).
WANEMU_PURE_SRC := tools/wanemu/path.c tools/wanemu/spec.c tools/wanemu/rng.c tools/wanemu/gso.c
# Communication managers speak liblds, which libmw carries inside.
MW_SRC      := $(sort $(MW_PURE_SRC) $(MW_MPI_SRC) ldsd/json.c $(LIBLDS_SRC))
MW_EXAMPLES := $(patsubst examples/mw_%.c,$(BUILD)/examples/mw_%,$(wildcard examples/mw_*.c))
MW_BENCH    := $(BUILD)/bench/mpi_loop $(BUILD)/bench/mw_empty $(BUILD)/bench/crc_speed $(BUILD)/bench/gcm_speed
# The runtime tests' own applications (tests/mw/), apart from the examples.
MW_TESTAPPS := $(patsubst tests/mw/mw_%.c,$(BUILD)/mwtests/mw_%,$(wildcard tests/mw/mw_*.c))
LANPROBE    := $(BUILD)/bin/mw_lanprobe
MPI_CFLAGS  := $(shell mpicc --showme:compile 2>/dev/null)
MPI_LIBS    := $(shell mpicc --showme:link 2>/dev/null)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
asan_obj = $(patsubst %.c,$(BUILD)/asan/%.o,$(1))

LIBLDSD    := $(BUILD)/lib/libldsd.a
LIBLDS_A   := $(BUILD)/lib/liblds.a
LIBLDS_SO  := $(BUILD)/lib/liblds.so
LDSD       := $(BUILD)/bin/ldsd
# What mpirun runs for each rank of an exec-service job (ldsd/execspec.h).
TRAMPOLINE := $(BUILD)/bin/ldsd-exec
LDSCTL     := $(BUILD)/bin/ldsctl
UNIT       := $(BUILD)/tests/unit
UNIT_ASAN  := $(BUILD)/tests/unit-asan
TOOLS      := $(patsubst tools/%/main.c,$(BUILD)/bin/%,$(wildcard tools/*/main.c))
TESTBINS   := $(patsubst tests/integration/%.c,$(BUILD)/tests/%,$(wildcard tests/integration/*.c)) \
	$(patsubst tests/security/%.c,$(BUILD)/tests/%,$(wildcard tests/security/*.c))
LIBMW_A    := $(BUILD)/lib/libmw.a
LIBMW_SO   := $(BUILD)/lib/libmw.so

.PHONY: all check uninstall unit unit-asan integration security wan fuzz fuzz-smoke demo bench bench-quick install deps clean
all: $(LDSD) $(TRAMPOLINE) $(LDSCTL) $(LIBLDS_A) $(LIBLDS_SO) $(TOOLS) $(TESTBINS) \
	$(LIBMW_A) $(LIBMW_SO) $(MW_EXAMPLES) $(MW_BENCH) $(MW_TESTAPPS) $(LANPROBE)

deps:
	$(Q)tools/install-deps.sh

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(LIBLDSD): $(call obj,$(LDSD_SRC))
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBLDS_A): $(call obj,$(LIBLDS_SRC))
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBLDS_SO): $(call obj,$(LIBLDS_SRC)) libclient/lds.map
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,liblds.so.1 -Wl,--version-script=libclient/lds.map -o $@ $(filter %.o,$^) \
		$(CRYPTO_LIBS) $(ISAL_LIBS) $(RDMA_LIBS) -pthread

$(LDSD): $(call obj,ldsd/main.c) $(LIBLDSD)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_D)

$(TRAMPOLINE): $(call obj,ldsd/exec_trampoline.c) $(LIBLDSD)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_D)

$(LDSCTL): $(call obj,tools/ldsctl.c) $(LIBLDSD)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_D)

# A tool in tools/NAME/ (main.c and helpers) becomes build/bin/NAME.  Its
# objects are found through secondary expansion, which would make them
# intermediate files that make deletes; .SECONDARY keeps them.
.SECONDARY:
.SECONDEXPANSION:
$(BUILD)/bin/%: $$(call obj,$$(wildcard tools/%/*.c)) $(LIBLDSD) $(LIBLDS_A)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_D) -lpthread

# mwlaunch checks the job file's framework entries with the runtime's reader, and
# deals calibration tasks to the clusters as the runtime does.
$(BUILD)/bin/mwlaunch: $(call obj,launcher/mw_config.c launcher/mw_calib.c launcher/mw_proto.c launcher/mw_buf.c)

# Integration test programs (clients that send and verify checksummed data)
# and the security tests' attackers.
define link_test
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_D)
endef
$(BUILD)/tests/%: $(call obj,tests/integration/%.c) $(LIBLDS_A) $(LIBLDSD)
	$(link_test)
$(BUILD)/tests/%: $(call obj,tests/security/%.c) $(LIBLDS_A) $(LIBLDSD)
	$(link_test)

# ---- the master-worker runtime, its examples and benchmark programs -------
$(call obj,$(MW_MPI_SRC) $(wildcard examples/mw_*.c tests/mw/mw_*.c) tests/bench/mpi_loop.c tests/bench/mw_empty.c tools/lanprobe/lanprobe.c): \
	ALL_CFLAGS += $(MPI_CFLAGS) -Ilauncher

$(LIBMW_A): $(call obj,$(MW_SRC))
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBMW_SO): $(call obj,$(MW_SRC)) launcher/mw.map
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,libmw.so.0 -Wl,--version-script=launcher/mw.map -o $@ \
		$(filter %.o,$^) $(MPI_LIBS) $(LDLIBS_D)

# A program on libmw (its own static copy).
define link_mw
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(MPI_LIBS) $(LDLIBS_D)
endef
$(BUILD)/examples/mw_%: $(call obj,examples/mw_%.c) $(LIBMW_A)
	$(link_mw)

$(BUILD)/mwtests/mw_%: $(call obj,tests/mw/mw_%.c) $(LIBMW_A)
	$(link_mw)

$(BUILD)/bench/mw_empty: $(call obj,tests/bench/mw_empty.c) $(LIBMW_A)
	$(link_mw)

# mwlaunch --benchmark's LAN probe, an MPI program.
$(LANPROBE): $(call obj,tools/lanprobe/lanprobe.c)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(MPI_LIBS)

$(BUILD)/bench/crc_speed: $(call obj,tests/bench/crc_speed.c ldsd/crc32c.c)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(ISAL_LIBS)

$(BUILD)/bench/gcm_speed: $(call obj,tests/bench/gcm_speed.c ldsd/aesgcm.c)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CRYPTO_LIBS) $(IPSECMB_LIBS)

$(BUILD)/bench/mpi_loop: $(call obj,tests/bench/mpi_loop.c)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(MPI_LIBS)

# The UDT4 reference of bench-wan.sh (issue 20): C++, as UDT's API is;
# built for make bench, and only where Debian's libudt-dev is installed.
UDTBENCH := $(BUILD)/bench/udtbench
HAVE_UDT := $(wildcard /usr/include/udt/udt.h)
.PHONY: udtbench
udtbench: $(if $(HAVE_UDT),$(UDTBENCH))
$(UDTBENCH): tests/bench/udtbench.cpp
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CXX     $@")
	$(Q)$(CXX) -std=gnu++17 -Wall -Wextra -Werror -O2 -g $(LDFLAGS) -o $@ $< -ludt -lpthread

$(UNIT): $(call obj,$(UNIT_SRC) $(MW_PURE_SRC) $(BENCH_PURE_SRC) $(MWLAUNCH_PURE_SRC) $(WANEMU_PURE_SRC)) $(LIBLDSD) $(LIBLDS_A)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(UNIT_LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS_D)

# ---- sanitizers: the same unit tests built with ASan and UBSan ------------
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
$(BUILD)/asan/%.o: %.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC/SAN  $<")
	$(Q)$(CC) $(ALL_CFLAGS) -O1 $(SAN) -c -o $@ $<

$(UNIT_ASAN): $(call asan_obj,$(UNIT_SRC) $(MW_PURE_SRC) $(BENCH_PURE_SRC) $(MWLAUNCH_PURE_SRC) $(WANEMU_PURE_SRC) $(LDSD_SRC) $(filter-out $(LDSD_SRC),$(LIBLDS_SRC)))
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD/SAN  $@")
	$(Q)$(CC) $(LDFLAGS) $(UNIT_LDFLAGS) $(SAN) -o $@ $^ $(CHECK_LIBS) $(LDLIBS_D)

# ---- fuzzing (clang libFuzzer) --------------------------------------------
# Every tests/fuzz/fuzz_NAME.c is a target linked against the daemon's
# modules built once with coverage; tests/fuzz/NAME/ holds its seeds.
FUZZ_SAN  := -fsanitize=fuzzer-no-link,address,undefined
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_LIB_SRC := $(sort $(LDSD_SRC) $(LIBLDS_SRC))
$(BUILD)/fuzzobj/%.o: %.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC/FUZZ $<")
	$(Q)clang $(CSTD) -g -O1 $(LDS_CPPFLAGS) $(FUZZ_SAN) -MMD -MP -c -o $@ $<

$(BUILD)/fuzz/fuzz_%: $(BUILD)/fuzzobj/tests/fuzz/fuzz_%.o $(patsubst %.c,$(BUILD)/fuzzobj/%.o,$(FUZZ_LIB_SRC))
	@mkdir -p $(@D)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)clang -fsanitize=fuzzer,address,undefined -o $@ $^ $(LDLIBS_D)

# make fuzz runs each target FUZZ_SECONDS; fuzz-smoke FUZZ_SMOKE_SECONDS each.
FUZZ_SMOKE_SECONDS ?= 3
fuzz: $(FUZZ_BINS)
	$(Q)for f in $(FUZZ_BINS); do n=$${f##*/fuzz_}; mkdir -p $(BUILD)/fuzz/corpus-$$n; \
		echo "fuzz: $$n ($(FUZZ_SECONDS) s)"; \
		$$f -max_total_time=$(FUZZ_SECONDS) -max_len=70000 $(BUILD)/fuzz/corpus-$$n tests/fuzz/$$n || exit 1; done

# One target per job, so that make -j runs them side by side (a fuzzer
# keeps one core busy).
FUZZ_SMOKE := $(patsubst $(BUILD)/fuzz/fuzz_%,fuzz-smoke-%,$(FUZZ_BINS))
.PHONY: $(FUZZ_SMOKE)
fuzz-smoke: $(FUZZ_SMOKE)
$(FUZZ_SMOKE): fuzz-smoke-%: $(BUILD)/fuzz/fuzz_%
	$(Q)mkdir -p $(BUILD)/fuzz/corpus-$*
	$(Q)if $< -max_total_time=$(FUZZ_SMOKE_SECONDS) -max_len=70000 -print_final_stats=0 $(BUILD)/fuzz/corpus-$* tests/fuzz/$* \
		>$(BUILD)/fuzz/$*.log 2>&1; then echo "fuzz-smoke: $*: $$(tail -1 $(BUILD)/fuzz/$*.log)"; \
	else echo "fuzz-smoke: $*: FAILED"; tail -30 $(BUILD)/fuzz/$*.log; exit 1; fi

# ---- the two commands ------------------------------------------------------
unit: $(UNIT)
	$(Q)CK_DEFAULT_TIMEOUT=60 $(UNIT)

# Sanitizer reports go to files too: a test that sends its stderr elsewhere
# (check_link's daemons) would otherwise hide the report of its failure.
unit-asan: $(UNIT_ASAN)
	$(Q)rm -rf $(BUILD)/asan-logs && mkdir -p $(BUILD)/asan-logs
	$(Q)CK_DEFAULT_TIMEOUT=120 ASAN_OPTIONS=detect_leaks=1:log_path=$(BUILD)/asan-logs/asan \
		UBSAN_OPTIONS=print_stacktrace=1:log_path=$(BUILD)/asan-logs/ubsan $(UNIT_ASAN) || \
		{ for f in $(BUILD)/asan-logs/*; do [ -f "$$f" ] && { echo "--- $$f"; cat "$$f"; }; done; exit 1; }
	$(Q)for f in $(BUILD)/asan-logs/*; do [ -f "$$f" ] && { echo "--- $$f"; cat "$$f"; exit 1; }; done; true

integration: all
	$(Q)BUILD=$(BUILD) tests/integration/run-all.sh

# Attacks on the gateway, each reproduced (tests/security, docs/security.md).
security: all
	$(Q)BUILD=$(BUILD) tests/integration/run-all.sh tests/security

# The emulator's own trust tests (tests/wan, needs root and /dev/net/tun).
wan: all
	$(Q)BUILD=$(BUILD) tests/integration/run-all.sh tests/wan

# The builds in parallel; the unit tests, plain and under the sanitizers,
# side by side (they use a core each; 25 s of the 15 minutes), their output
# one after the other; the scripts after them one at a time.
NPROC := $(shell nproc 2>/dev/null || echo 2)
# Each part says how long it took, so that CI's log shows where the
# 15 minutes go.
TOOK = echo "make check: $(1) took $$(( $$(date +%s) - $$t )) s"
check: deps
	$(Q)t=$$(date +%s); $(MAKE) --no-print-directory -j$(NPROC) all $(UNIT) $(UNIT_ASAN) $(FUZZ_BINS) && \
		$(call TOOK,the build)
	$(Q)t=$$(date +%s); $(MAKE) --no-print-directory unit > $(BUILD)/unit.log 2>&1 & p=$$!; \
		$(MAKE) --no-print-directory unit-asan; a=$$?; wait $$p; u=$$?; \
		echo "--- make unit:"; cat $(BUILD)/unit.log; $(call TOOK,the unit tests); [ $$u = 0 ] && [ $$a = 0 ]
	$(Q)t=$$(date +%s); $(MAKE) --no-print-directory -j$(NPROC) fuzz-smoke && $(call TOOK,the fuzz smoke run)
	$(Q)t=$$(date +%s); $(MAKE) --no-print-directory integration && $(call TOOK,the integration tests)
	$(Q)t=$$(date +%s); $(MAKE) --no-print-directory security && $(call TOOK,the security tests)
	$(Q)t=$$(date +%s); $(MAKE) --no-print-directory wan && $(call TOOK,the WAN tests)

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)BUILD=$(BUILD) tests/demo/demo.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory all udtbench
	$(Q)BUILD=$(BUILD) tests/bench/run-bench.sh

bench-quick: deps
	$(Q)$(MAKE) --no-print-directory all udtbench
	$(Q)BUILD=$(BUILD) QUICK=1 tests/bench/run-bench.sh

# Files that name where things are installed are written here, from the
# directory variables of this very command.
SUBST = sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@ISAL_LIBS@|$(ISAL_LIBS)|g' \
	-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@BINDIR@|$(BINDIR)|g' \
	-e 's|@LIBEXECDIR@|$(LIBEXECDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' -e 's|@RUNDIR@|$(RUNDIR)|g' \
	-e 's|@DOCDIR@|$(DOCDIR)|g' -e 's|/usr/local/libexec/lds|$(LIBEXECDIR)/lds|g'
D := $(DESTDIR)
INSTALLED_BIN  := $(notdir $(LDSCTL) $(TOOLS) $(LANPROBE))
INSTALLED_DOCS := README.md $(wildcard docs/*.md)
install: all
	install -d $(D)$(BINDIR) $(D)$(SBINDIR) $(D)$(LIBDIR)/pkgconfig $(D)$(INCLUDEDIR)/lds \
		$(D)$(LIBEXECDIR)/lds $(D)$(UNITDIR) $(D)$(DOCDIR)/examples $(D)$(DOCDIR)/conf \
		$(D)$(MANDIR)/man1 $(D)$(MANDIR)/man3 $(D)$(MANDIR)/man5 $(D)$(MANDIR)/man8
	install -m 755 $(LDSD) $(D)$(SBINDIR)/ldsd
	install -m 755 $(TRAMPOLINE) $(D)$(SBINDIR)/ldsd-exec
	install -m 755 $(LDSCTL) $(TOOLS) $(LANPROBE) $(D)$(BINDIR)/
	install -m 644 $(LIBLDS_A) $(LIBMW_A) $(D)$(LIBDIR)/
	install -m 755 $(LIBLDS_SO) $(D)$(LIBDIR)/liblds.so.1
	ln -sf liblds.so.1 $(D)$(LIBDIR)/liblds.so
	install -m 755 $(LIBMW_SO) $(D)$(LIBDIR)/libmw.so.0
	ln -sf libmw.so.0 $(D)$(LIBDIR)/libmw.so
	$(SUBST) libclient/lds.pc.in > $(D)$(LIBDIR)/pkgconfig/lds.pc
	$(SUBST) launcher/mw.pc.in > $(D)$(LIBDIR)/pkgconfig/mw.pc
	install -m 644 libclient/lds.h launcher/mw.h $(D)$(INCLUDEDIR)/lds/
	for h in lds mw; do echo "#include <lds/$$h.h>  /* compat: the headers live in lds/ */" \
		> $(D)$(INCLUDEDIR)/$$h.h; done
	install -m 755 $(MW_EXAMPLES) $(D)$(LIBEXECDIR)/lds/
	$(SUBST) conf/ldsd.service.in > $(D)$(UNITDIR)/ldsd.service
	install -m 644 $(INSTALLED_DOCS) $(D)$(DOCDIR)/
	install -m 644 examples/*.c $(D)$(DOCDIR)/examples/
	for c in conf/*.conf; do $(SUBST) $$c > $(D)$(DOCDIR)/conf/$${c##*/}; done
	for m in docs/man/*.[1358]; do [ -e "$$m" ] || continue; \
		s=$${m##*.}; install -m 644 $$m $(D)$(MANDIR)/man$$s/; done

uninstall:
	rm -f $(D)$(SBINDIR)/ldsd $(D)$(SBINDIR)/ldsd-exec $(addprefix $(D)$(BINDIR)/,$(INSTALLED_BIN)) \
		$(D)$(LIBDIR)/liblds.a $(D)$(LIBDIR)/liblds.so $(D)$(LIBDIR)/liblds.so.1 \
		$(D)$(LIBDIR)/libmw.a $(D)$(LIBDIR)/libmw.so $(D)$(LIBDIR)/libmw.so.0 \
		$(D)$(LIBDIR)/pkgconfig/lds.pc $(D)$(LIBDIR)/pkgconfig/mw.pc \
		$(D)$(INCLUDEDIR)/lds.h $(D)$(INCLUDEDIR)/mw.h $(D)$(UNITDIR)/ldsd.service
	rm -rf $(D)$(INCLUDEDIR)/lds $(D)$(LIBEXECDIR)/lds $(D)$(DOCDIR)
	for m in docs/man/*.[1358]; do rm -f $(D)$(MANDIR)/man$${m##*.}/$${m##*/}; done

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
