# LDS - one non-recursive Makefile for the daemon, the library, the tools
# and the tests.  `make V=1` shows the commands.
#
#   make            build everything into build/
#   make check      unit tests (plain, then ASan+UBSan), fuzz smoke, integration tests,
#                   wanemu's tests (make wan)
#   make demo       two clusters' ldsd on this machine and a job through them
#   make bench      performance targets of the issues, see docs/BENCHMARKS.md
#   make fuzz       longer libFuzzer run of every fuzz target (tests/fuzz)
#   make install    PREFIX=/usr/local DESTDIR=

PREFIX  ?= /usr/local
DESTDIR ?=
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
ALL_CFLAGS = $(CSTD) $(WARN) $(CFLAGS) -fPIC -D_GNU_SOURCE -I. $(shell pkg-config --cflags $(PKGS) 2>/dev/null) -MMD -MP
LDLIBS_D := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)

# ---- sources -------------------------------------------------------------
# Daemon modules live in a static library that ldsd, the tools and the tests
# all link; main.c files are the only things outside it.
# The analytical model (launcher/model*.c) has no main and no state: it goes
# into the same library, for mwpredict, mwlaunch and the unit tests.
MODEL_SRC  := launcher/model.c launcher/modelconf.c launcher/modelout.c
LDSD_SRC   := $(filter-out ldsd/main.c,$(wildcard ldsd/*.c)) $(wildcard transports/*.c) libclient/clientproto.c \
	libclient/idset.c $(MODEL_SRC)
LIBLDS_SRC := $(wildcard libclient/*.c) ldsd/wire.c ldsd/crc32c.c
UNIT_SRC   := $(wildcard tests/unit/*.c)
# The master-worker runtime: modules without MPI are also unit-tested (and
# built with the sanitizers); the others need mpicc's flags.
MW_PURE_SRC := launcher/mw_buf.c launcher/mw_config.c launcher/mw_sched.c launcher/mw_journal.c \
	launcher/mw_stats.c launcher/mw_proto.c launcher/mw_role.c launcher/mw_wan.c launcher/mw_cache.c launcher/mw_ring.c
MW_MPI_SRC  := $(filter-out $(MW_PURE_SRC),$(wildcard launcher/mw_*.c))
# ldsbench's message checks and status reader are unit-tested too.
BENCH_PURE_SRC := tools/ldsbench/msg.c tools/ldsbench/linkstat.c
# So are mwlaunch --benchmark's medians of its calibration runs.
MWLAUNCH_PURE_SRC := tools/mwlaunch/calstat.c
# Communication managers speak liblds, which libmw carries inside.
MW_SRC      := $(sort $(MW_PURE_SRC) $(MW_MPI_SRC) ldsd/json.c $(LIBLDS_SRC))
MW_EXAMPLES := $(patsubst examples/mw_%.c,$(BUILD)/examples/mw_%,$(wildcard examples/mw_*.c))
MW_BENCH    := $(BUILD)/bench/mpi_loop $(BUILD)/bench/mw_empty
LANPROBE    := $(BUILD)/bin/mw_lanprobe
MPI_CFLAGS  := $(shell mpicc --showme:compile 2>/dev/null)
MPI_LIBS    := $(shell mpicc --showme:link 2>/dev/null)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
asan_obj = $(patsubst %.c,$(BUILD)/asan/%.o,$(1))

LIBLDSD    := $(BUILD)/lib/libldsd.a
LIBLDS_A   := $(BUILD)/lib/liblds.a
LIBLDS_SO  := $(BUILD)/lib/liblds.so
LDS_PC     := $(BUILD)/lib/pkgconfig/lds.pc
LDSD       := $(BUILD)/bin/ldsd
LDSCTL     := $(BUILD)/bin/ldsctl
UNIT       := $(BUILD)/tests/unit
UNIT_ASAN  := $(BUILD)/tests/unit-asan
TOOLS      := $(patsubst tools/%/main.c,$(BUILD)/bin/%,$(wildcard tools/*/main.c))
TESTBINS   := $(patsubst tests/integration/%.c,$(BUILD)/tests/%,$(wildcard tests/integration/*.c)) \
	$(patsubst tests/security/%.c,$(BUILD)/tests/%,$(wildcard tests/security/*.c))
LIBMW_A    := $(BUILD)/lib/libmw.a
LIBMW_SO   := $(BUILD)/lib/libmw.so
MW_PC      := $(BUILD)/lib/pkgconfig/mw.pc

.PHONY: all check unit unit-asan integration security wan fuzz fuzz-smoke demo bench bench-quick install deps clean
all: $(LDSD) $(LDSCTL) $(LIBLDS_A) $(LIBLDS_SO) $(LDS_PC) $(TOOLS) $(TESTBINS) \
	$(LIBMW_A) $(LIBMW_SO) $(MW_PC) $(MW_EXAMPLES) $(MW_BENCH) $(LANPROBE)

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
	$(Q)$(CC) -shared -Wl,-soname,liblds.so.1 -Wl,--version-script=libclient/lds.map -o $@ $(filter %.o,$^)

$(LDS_PC): libclient/lds.pc.in
	@mkdir -p $(@D)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|g' $< > $@

$(LDSD): $(call obj,ldsd/main.c) $(LIBLDSD)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $^ $(LDLIBS_D)

$(LDSCTL): $(call obj,tools/ldsctl.c) $(LIBLDSD)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $^ $(LDLIBS_D)

# A tool in tools/NAME/ (main.c and helpers) becomes build/bin/NAME.  Its
# objects are found through secondary expansion, which would make them
# intermediate files that make deletes; .SECONDARY keeps them.
.SECONDARY:
.SECONDEXPANSION:
$(BUILD)/bin/%: $$(call obj,$$(wildcard tools/%/*.c)) $(LIBLDSD) $(LIBLDS_A)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $^ $(LDLIBS_D) -lpthread

# mwlaunch checks the job file's framework entries with the runtime's reader.
$(BUILD)/bin/mwlaunch: $(call obj,launcher/mw_config.c)

# Integration test programs (clients that send and verify checksummed data)
# and the attackers of tests/security.
$(BUILD)/tests/%: $(call obj,tests/integration/%.c) $(LIBLDS_A) $(LIBLDSD)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $^ $(LDLIBS_D)
$(BUILD)/tests/%: $(call obj,tests/security/%.c) $(LIBLDS_A) $(LIBLDSD)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $^ $(LDLIBS_D)

# ---- the master-worker runtime, its examples and benchmark programs -------
$(call obj,$(MW_MPI_SRC) $(wildcard examples/mw_*.c) tests/bench/mpi_loop.c tests/bench/mw_empty.c tools/lanprobe/lanprobe.c): \
	ALL_CFLAGS += $(MPI_CFLAGS) -Ilauncher

$(LIBMW_A): $(call obj,$(MW_SRC))
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBMW_SO): $(call obj,$(MW_SRC)) launcher/mw.map
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libmw.so.0 -Wl,--version-script=launcher/mw.map -o $@ \
		$(filter %.o,$^) $(MPI_LIBS) $(LDLIBS_D)

$(MW_PC): launcher/mw.pc.in
	@mkdir -p $(@D)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|g' $< > $@

$(BUILD)/examples/mw_%: $(call obj,examples/mw_%.c) $(LIBMW_A)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $^ $(MPI_LIBS) $(LDLIBS_D)

$(BUILD)/bench/mw_empty: $(call obj,tests/bench/mw_empty.c) $(LIBMW_A)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $^ $(MPI_LIBS) $(LDLIBS_D)

# mwlaunch --benchmark's LAN probe, an MPI program.
$(LANPROBE): $(call obj,tools/lanprobe/lanprobe.c)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $^ $(MPI_LIBS)

$(BUILD)/bench/mpi_loop: $(call obj,tests/bench/mpi_loop.c)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $^ $(MPI_LIBS)

$(UNIT): $(call obj,$(UNIT_SRC) $(MW_PURE_SRC) $(BENCH_PURE_SRC) $(MWLAUNCH_PURE_SRC)) $(LIBLDSD) $(LIBLDS_A)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $^ $(CHECK_LIBS) $(LDLIBS_D)

# ---- sanitizers: the same unit tests built with ASan and UBSan ------------
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
$(BUILD)/asan/%.o: %.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC/SAN  $<")
	$(Q)$(CC) $(ALL_CFLAGS) -O1 $(SAN) -c -o $@ $<

$(UNIT_ASAN): $(call asan_obj,$(UNIT_SRC) $(MW_PURE_SRC) $(BENCH_PURE_SRC) $(MWLAUNCH_PURE_SRC) $(LDSD_SRC) $(filter-out $(LDSD_SRC),$(LIBLDS_SRC)))
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD/SAN  $@")
	$(Q)$(CC) $(SAN) -o $@ $^ $(CHECK_LIBS) $(LDLIBS_D)

# ---- fuzzing (clang libFuzzer) --------------------------------------------
# Every tests/fuzz/fuzz_NAME.c is a target linked against the daemon's
# modules built once with coverage; tests/fuzz/NAME/ holds its seeds.
FUZZ_SAN  := -fsanitize=fuzzer-no-link,address,undefined
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_LIB_SRC := $(sort $(LDSD_SRC) $(LIBLDS_SRC))
$(BUILD)/fuzzobj/%.o: %.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC/FUZZ $<")
	$(Q)clang $(CSTD) -g -O1 -D_GNU_SOURCE -I. $(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(FUZZ_SAN) -MMD -MP -c -o $@ $<

$(BUILD)/fuzz/fuzz_%: $(BUILD)/fuzzobj/tests/fuzz/fuzz_%.o $(patsubst %.c,$(BUILD)/fuzzobj/%.o,$(FUZZ_LIB_SRC))
	@mkdir -p $(@D)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)clang -fsanitize=fuzzer,address,undefined -o $@ $^ $(LDLIBS_D)

# make fuzz runs each target FUZZ_SECONDS; fuzz-smoke 10 s each.
fuzz: $(FUZZ_BINS)
	$(Q)for f in $(FUZZ_BINS); do n=$${f##*/fuzz_}; mkdir -p $(BUILD)/fuzz/corpus-$$n; \
		echo "fuzz: $$n ($(FUZZ_SECONDS) s)"; \
		$$f -max_total_time=$(FUZZ_SECONDS) -max_len=70000 $(BUILD)/fuzz/corpus-$$n tests/fuzz/$$n || exit 1; done

fuzz-smoke: $(FUZZ_BINS)
	$(Q)for f in $(FUZZ_BINS); do n=$${f##*/fuzz_}; mkdir -p $(BUILD)/fuzz/corpus-$$n; \
		echo "fuzz-smoke: $$n"; \
		if $$f -max_total_time=10 -max_len=70000 -print_final_stats=0 $(BUILD)/fuzz/corpus-$$n tests/fuzz/$$n \
			>$(BUILD)/fuzz/$$n.log 2>&1; then tail -1 $(BUILD)/fuzz/$$n.log; \
		else tail -30 $(BUILD)/fuzz/$$n.log; exit 1; fi; done

# ---- the two commands ------------------------------------------------------
unit: $(UNIT)
	$(Q)CK_DEFAULT_TIMEOUT=60 $(UNIT)

unit-asan: $(UNIT_ASAN)
	$(Q)CK_DEFAULT_TIMEOUT=120 ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(UNIT_ASAN)

integration: all
	$(Q)BUILD=$(BUILD) tests/integration/run-all.sh

# Attacks on the gateway, each reproduced (tests/security, docs/security.md).
security: all
	$(Q)BUILD=$(BUILD) tests/integration/run-all.sh tests/security

# The emulator's own trust tests (tests/wan, needs root and /dev/net/tun).
wan: all
	$(Q)BUILD=$(BUILD) tests/integration/run-all.sh tests/wan

check: deps
	$(Q)$(MAKE) --no-print-directory all $(UNIT) $(UNIT_ASAN)
	$(Q)$(MAKE) --no-print-directory unit
	$(Q)$(MAKE) --no-print-directory unit-asan
	$(Q)$(MAKE) --no-print-directory fuzz-smoke
	$(Q)$(MAKE) --no-print-directory integration
	$(Q)$(MAKE) --no-print-directory security
	$(Q)$(MAKE) --no-print-directory wan

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)BUILD=$(BUILD) tests/demo/demo.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)BUILD=$(BUILD) tests/bench/run-bench.sh

bench-quick: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)BUILD=$(BUILD) QUICK=1 tests/bench/run-bench.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
		$(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man3 \
		$(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/man/man8
	install -m 755 $(LDSD) $(DESTDIR)$(PREFIX)/sbin/ldsd
	install -m 755 $(LDSCTL) $(TOOLS) $(LANPROBE) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(LIBLDS_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIBLDS_SO) $(DESTDIR)$(PREFIX)/lib/liblds.so.1
	ln -sf liblds.so.1 $(DESTDIR)$(PREFIX)/lib/liblds.so
	install -m 644 $(LDS_PC) $(DESTDIR)$(PREFIX)/lib/pkgconfig/
	install -m 644 libclient/lds.h launcher/mw.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(LIBMW_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIBMW_SO) $(DESTDIR)$(PREFIX)/lib/libmw.so.0
	ln -sf libmw.so.0 $(DESTDIR)$(PREFIX)/lib/libmw.so
	install -m 644 $(MW_PC) $(DESTDIR)$(PREFIX)/lib/pkgconfig/
	for m in docs/man/*.[1358]; do [ -e "$$m" ] || continue; \
		s=$${m##*.}; install -m 644 $$m $(DESTDIR)$(PREFIX)/share/man/man$$s/; done

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
