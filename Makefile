# cgbalance — plain Makefile with pkg-config.
#
#   make            build everything into build/
#   make run        install missing Debian packages, build, run the daemon in the foreground
#   make check      install missing packages, build, run every test (plain and sanitized build)
#   make check-vm   build, run tests/vm/cases/ as root in qemu guests with NUMA nodes and cgroup v2
#                   (VM_CASES="00 10" picks some); tests/vm/vm-run installs qemu and the kernel
#   make check-systemd  build, run the installed service under systemd as PID 1 in a qemu guest
#   make bench      build and run the benchmarks under bench/
#   make compare-placement  the placement cases three ways (kernel, numad, cgbalanced) in qemu guests
#   make fuzz       run each libFuzzer target for FUZZ_SECONDS (clang)
#   make install    PREFIX=/usr/local DESTDIR=
#   make deb        the Debian packages (debian/) from the tracked files, into build/deb/, then lintian
#   make analyze    cppcheck, fails on findings
#   make format-check  clang-format, fails on differences
#
# WERROR=1 adds -Werror (CI sets it). BUILD=dir chooses the output directory; SANITIZE=1 builds with
# AddressSanitizer and UndefinedBehaviorSanitizer.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
UNITDIR ?= $(PREFIX)/lib/systemd/system
DBUSPOLICYDIR ?= $(PREFIX)/share/dbus-1/system.d
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
SYSCONFDIR ?= /etc
DATADIR ?= $(PREFIX)/share
DESTDIR ?=

VERSION := 0.1.0
CC ?= cc
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 30
BUILD ?= build
TEST_LABEL ?= plain build

# Recursive (=) on purpose: evaluated when a recipe first needs them, i.e. after `deps` ran.
PKGS := libcgroup numa hwloc libsystemd inih json-c
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS = $(shell pkg-config --libs $(PKGS))
CRITERION_CFLAGS = $(shell pkg-config --cflags criterion)
CRITERION_LIBS = $(shell pkg-config --libs criterion)

WARNINGS := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wformat=2 -Wwrite-strings -Wconversion \
	-Wmissing-prototypes -Wno-missing-field-initializers
CFLAGS ?= -O2 -g
ifeq ($(WERROR),1)
WARNINGS += -Werror
endif
ifeq ($(SANITIZE),1)
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# -O1, as ASan's own documentation builds: reports keep their frames, and the build compiles in 70 s
# instead of 102 at -O2 here (it is built on every make check).
SAN_OPT := -O1
endif
ALL_CFLAGS = -std=gnu11 $(WARNINGS) $(CPPFLAGS) $(CFLAGS) $(SAN_OPT) $(SANFLAGS) -D_GNU_SOURCE \
	-DCGBALANCE_VERSION='"$(VERSION)"' -DSCENARIOS_DIR='"$(DATADIR)/cgbalance/scenarios"' -Ilib $(PKG_CFLAGS) -MMD -MP
ALL_LDFLAGS = $(LDFLAGS) $(SANFLAGS)

LIB_SRCS := $(wildcard lib/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
LIB_A := $(BUILD)/libcgbalance.a

# daemon/ and loadgen/: one main per program; the other files are that program's modules,
# archived so tests can link them too.
DAEMON_MAINS := $(wildcard daemon/cgbalanced.c daemon/cgbalancectl.c)
DAEMON_SRCS := $(filter-out $(DAEMON_MAINS),$(wildcard daemon/*.c))
DAEMON_A := $(BUILD)/libdaemon.a
LOADGEN_MAINS := $(wildcard loadgen/loadgen.c)
LOADGEN_SRCS := $(filter-out $(LOADGEN_MAINS),$(wildcard loadgen/*.c))
LOADGEN_A := $(BUILD)/libloadgen.a
PROGRAMS := $(DAEMON_MAINS:daemon/%.c=$(BUILD)/%) $(LOADGEN_MAINS:loadgen/%.c=$(BUILD)/%)

TEST_SUPPORT_SRCS := $(wildcard tests/support/*.c)
TEST_SRCS := $(wildcard tests/test-*.c)
TEST_BINS := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz-*.c)
FUZZ_NAMES := $(FUZZ_SRCS:tests/fuzz/fuzz-%.c=%)
REPLAY_BINS := $(FUZZ_NAMES:%=$(BUILD)/fuzz/replay-%)
BENCH_SRCS := $(wildcard bench/bench-*.c)
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)

TEST_CFLAGS = -DFIXTURES_DIR='"$(CURDIR)/tests/fixtures"' -DSOURCE_DIR='"$(CURDIR)"' -DBUILD_DIR='"$(CURDIR)/$(BUILD)"' -Itests/support -Idaemon -Iloadgen $(CRITERION_CFLAGS)

.PHONY: all deps run check check-vm check-systemd test test-plain test-sanitize check-unit bench fuzz install deb clean \
	analyze format-check format
.DEFAULT_GOAL := all

all: $(LIB_A) $(PROGRAMS)

deps:
	@scripts/install-deps

# ---- library and programs

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(LIB_A): $(LIB_OBJS)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

$(DAEMON_A): $(DAEMON_SRCS:%.c=$(BUILD)/%.o) | $(LIB_A)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

# loadgen's objects go to lgobj/: $(BUILD)/loadgen is the program itself.
$(LOADGEN_A): $(LOADGEN_SRCS:loadgen/%.c=$(BUILD)/lgobj/%.o) | $(LIB_A)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

$(BUILD)/cgbalanced $(BUILD)/cgbalancectl: $(BUILD)/%: $(BUILD)/daemon/%.o $(DAEMON_A) $(LIB_A)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

$(BUILD)/lgobj/%.o: loadgen/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/loadgen: $(BUILD)/lgobj/loadgen.o $(LOADGEN_A) $(LIB_A)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

# ---- tests

$(BUILD)/tests/%.o: tests/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(TEST_CFLAGS) -c -o $@ $<

$(BUILD)/tests/test-%: $(BUILD)/tests/test-%.o $(TEST_SUPPORT_SRCS:tests/%.c=$(BUILD)/tests/%.o) \
		$(DAEMON_A) $(LOADGEN_A) $(LIB_A)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) $(CRITERION_LIBS) -lm

# bench/support's pure functions are tested like the library's.
$(BUILD)/tests/test-bench-support: $(BUILD)/bench/support.o

# The fuzz targets' corpora are replayed by a plain driver, so `make check` needs no libFuzzer.
# Every fuzzed parser is in lib/ (the change record too: lib/record.c), none in daemon/.
$(BUILD)/fuzz/replay-%: tests/fuzz/fuzz-%.c tests/fuzz/replay.c $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $(filter %.c %.a,$^) $(PKG_LIBS) -lm

# The build uses every CPU; the tests then run as tests/run-tests orders them.
NPROC := $(shell nproc 2>/dev/null || echo 1)
.PHONY: test-build
test-build:
	@$(MAKE) --no-print-directory -j$(NPROC) all $(TEST_BINS) $(REPLAY_BINS)

test-plain: test-build
	@tests/run-tests $(BUILD) "$(TEST_LABEL)"

test-sanitize:
	@$(MAKE) --no-print-directory BUILD=$(BUILD)-sanitize SANITIZE=1 TEST_LABEL="sanitized build" test-plain

# `test` runs what is built here; `check` is the newcomer's command: dependencies first. One after
# the other even under make -j: the two builds' suites share cgroups and CPUs. (The sanitized build
# compiled as SCHED_IDLE beside the plain suite saved 19 s of 13 min and slowed the plain suite's
# compiling tests 2x here: CPU time left idle is not free on these machines.)
test:
	@$(MAKE) --no-print-directory test-plain
	@$(MAKE) --no-print-directory test-sanitize
	@$(MAKE) --no-print-directory check-unit

# systemd-analyze verify and the unit's offline security score (exposure at most 1.0).
check-unit: all
	@scripts/check-unit $(BUILD) 1.0

check: deps
	@$(MAKE) --no-print-directory test

# The multi-node cgroup v2 checks, in emulated machines (a few minutes).
check-vm: deps
	@$(MAKE) --no-print-directory check-vm-run

# The placement cases three ways (the kernel, numad, cgbalanced) in emulated NUMA guests: a run for
# the README (about 6 minutes), not part of check.
.PHONY: compare-placement
compare-placement: deps
	@$(MAKE) --no-print-directory all
	@bench/compare-placement $(CURDIR)/$(BUILD)

.PHONY: check-vm-run
check-vm-run: all $(TEST_BINS)
	@tests/vm/check-vm $(CURDIR)/$(BUILD) $(VM_CASES)

# The installed unit, bus policy and config under systemd as PID 1, in an emulated 2-node machine.
check-systemd: deps
	@$(MAKE) --no-print-directory check-systemd-run

.PHONY: check-systemd-run
check-systemd-run: all
	@tests/systemd/check-systemd $(CURDIR)/$(BUILD)

run: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/cgbalanced $(RUN_ARGS)

# ---- benchmarks and fuzzing

# bench/support.c: what every bench program repeats (tool checks, medians), linked into each.
# bench-record drives loadgen's simulator: the benches link loadgen's modules too.
$(BUILD)/bench/%: bench/%.c $(BUILD)/bench/support.o $(DAEMON_A) $(LOADGEN_A) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Idaemon -Iloadgen -Ibench -DBUILD_DIR='"$(CURDIR)/$(BUILD)"' $(ALL_LDFLAGS) -o $@ \
		$(filter %.c %.o %.a,$^) $(PKG_LIBS) -lm

bench: deps
	@$(MAKE) --no-print-directory bench-run

.PHONY: bench-run
bench-run: $(BENCH_BINS) $(PROGRAMS)
	@for b in $(BENCH_BINS); do echo "== $$b"; $$b || exit 1; done

FUZZ_FLAGS := -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer -g -O1
fuzz: deps
	@$(MAKE) --no-print-directory fuzz-run

.PHONY: fuzz-run
fuzz-run:
	@mkdir -p build/fuzz-libfuzzer
	@set -e; for n in $(FUZZ_NAMES); do \
		echo "== fuzz $$n for $(FUZZ_SECONDS) s"; \
		$(FUZZ_CC) -std=gnu11 -D_GNU_SOURCE -DCGBALANCE_VERSION='"$(VERSION)"' -Ilib \
			$(PKG_CFLAGS) $(FUZZ_FLAGS) \
			-o build/fuzz-libfuzzer/fuzz-$$n tests/fuzz/fuzz-$$n.c lib/*.c \
			$(PKG_LIBS) -lm; \
		mkdir -p build/fuzz-libfuzzer/new-$$n; \
		build/fuzz-libfuzzer/fuzz-$$n -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			build/fuzz-libfuzzer/new-$$n tests/fuzz/corpus/$$n; \
	done

# ---- install

install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR)
	@if [ -x $(BUILD)/cgbalanced ]; then install -m 0755 $(BUILD)/cgbalanced $(DESTDIR)$(SBINDIR)/; fi
	@if [ -x $(BUILD)/cgbalancectl ]; then install -m 0755 $(BUILD)/cgbalancectl $(DESTDIR)$(BINDIR)/; fi
	@if [ -x $(BUILD)/loadgen ]; then install -m 0755 $(BUILD)/loadgen $(DESTDIR)$(BINDIR)/; fi
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(DBUSPOLICYDIR)
	sed 's|^ExecStart=/usr/sbin/cgbalanced|ExecStart=$(SBINDIR)/cgbalanced|' \
		systemd/cgbalance.service >$(DESTDIR)$(UNITDIR)/cgbalance.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/cgbalance.service
	install -m 0644 systemd/cgbalance.slice $(DESTDIR)$(UNITDIR)/
	@if [ -f systemd/org.cgbalance1.conf ]; then \
		install -m 0644 systemd/org.cgbalance1.conf $(DESTDIR)$(DBUSPOLICYDIR)/; fi
	install -d $(DESTDIR)$(SYSUSERSDIR)
	install -m 0644 systemd/cgbalance.sysusers $(DESTDIR)$(SYSUSERSDIR)/cgbalance.conf
	@# The service's user, made now as a package's postinst would; a staged install (DESTDIR)
	@# leaves that to the package.
	@if [ -z "$(DESTDIR)" ] && command -v systemd-sysusers >/dev/null; then \
		echo "systemd-sysusers $(SYSUSERSDIR)/cgbalance.conf"; \
		systemd-sysusers $(SYSUSERSDIR)/cgbalance.conf; fi
	install -d $(DESTDIR)$(SYSCONFDIR)/cgbalance/cgbalance.conf.d
	@# An admin's edited config is never overwritten.
	@if [ ! -e $(DESTDIR)$(SYSCONFDIR)/cgbalance/cgbalance.conf ]; then \
		install -m 0644 conf/cgbalance.conf $(DESTDIR)$(SYSCONFDIR)/cgbalance/; fi
	install -d $(DESTDIR)$(DATADIR)/cgbalance/scenarios
	install -m 0644 conf/scenarios/*.conf $(DESTDIR)$(DATADIR)/cgbalance/scenarios/
	@# For the fleet: alerting rules with their promtool unit tests, a Grafana dashboard.
	install -d $(DESTDIR)$(DATADIR)/cgbalance/prometheus $(DESTDIR)$(DATADIR)/cgbalance/grafana
	install -m 0644 conf/prometheus/*.yml $(DESTDIR)$(DATADIR)/cgbalance/prometheus/
	install -m 0644 conf/grafana/*.json $(DESTDIR)$(DATADIR)/cgbalance/grafana/
	@for m in $(wildcard man/*.[0-9]); do \
		s=$${m##*.}; install -d $(DESTDIR)$(MANDIR)/man$$s; \
		install -m 0644 $$m $(DESTDIR)$(MANDIR)/man$$s/; done

# ---- Debian packages

# Built from a copy of the tracked files as they are in the working tree (`git ls-files`: no
# build directories, nothing untracked; a tracked file deleted here is left out), as a clone
# would have them. dpkg-buildpackage puts the packages beside the copy, in $(BUILD)/deb/.
# Variables given to this make on its command line (BUILD=, SANITIZE=...) are kept from the
# package's own build, as are MAKEFLAGS: make exports both to its recipes. The copy goes once
# the packages pass lintian: its build/ would otherwise be found by the -include of dependency
# files at the end.
DEB_DIR = $(BUILD)/deb
DEB_UNSET = $(strip $(foreach v,$(.VARIABLES),$(if $(filter command line,$(origin $(v))),-u $(v))))
deb: deps
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_DIR)/src
	git ls-files -z >$(DEB_DIR)/files
	tar --null --ignore-failed-read -T $(DEB_DIR)/files -cf - | tar -C $(DEB_DIR)/src -xf -
	cd $(DEB_DIR)/src && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL $(DEB_UNSET) dpkg-buildpackage -us -uc -b
	lintian --fail-on error,warning $(DEB_DIR)/*.changes
	rm -rf $(DEB_DIR)/src $(DEB_DIR)/files
	@ls -1 $(DEB_DIR)/*.deb

# ---- hygiene

SOURCES = $(wildcard lib/*.[ch] daemon/*.[ch] loadgen/*.[ch] tests/*.c tests/support/*.[ch] \
	tests/fuzz/*.c bench/*.[ch])

# cppcheck 2.10 does not model __attribute__((cleanup)), so every _cleanup_free_ variable looks
# leaked on an early return; leaks are caught by LeakSanitizer in the sanitized test run instead.
analyze: deps
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
		--inline-suppr --std=c11 -D_GNU_SOURCE -D__GNUC__ --suppress=missingIncludeSystem \
		--suppress=memleak \
		-Ilib lib daemon loadgen

format-check: deps
	clang-format --dry-run --Werror $(SOURCES)

format:
	clang-format -i $(SOURCES)

clean:
	rm -rf build build-sanitize

# Each build directory's own dependencies (BUILD=build-sanitize has its own objects).
-include $(shell find $(BUILD) -name '*.d' -type f 2>/dev/null)
.SECONDARY:
