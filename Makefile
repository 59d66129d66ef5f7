# sroce: soft-RoCE device for Linux. See README.md.
#
#   make setup        install Debian packages, fetch the target kernel image
#   make              build the module, the test module, the provider, test programs, host tests
#   make test         build everything, run host + VM + VM-pair tests, print a summary
#   make demo         two namespaces with a sroce device each, in a VM
#   make test-vm-slow the slow VM tests (tests/vm/slow: all netem faults, SQ poller stress), ~15 min
#   make test-vm-doorbell  the VM suite with sq_poll=0, then sq_poll=Y with SROCE_NO_SQ_POLL=1, ~30 min
#   make test-vm-sqpoll    the VM suite with the SQ pollers forced on (sq_poll=Y), ~15 min
#   make bench        sroce against rdma_rxe in one VM -> Documentation/benchmarks.md
#   make test-slow    the VM suite on the second kernel (6.12 backports)
#   make test-debug   VM, slow VM and pair suites on a lockdep/KASAN/UBSAN/kmemleak kernel
#   make install      install sroce.ko and the provider on this host
#
# KVER selects the kernel to build for (default: Debian 12's current 6.1,
# resolved at run time by scripts/kver; `make install` defaults to uname -r).

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
ifneq ($(filter install,$(MAKECMDGOALS)),)
KVER ?= $(shell uname -r)
endif
KVER ?= $(shell $(TOP)/scripts/kver)
KDIR ?= /lib/modules/$(KVER)/build
BUILD := $(TOP)/build
KOBJ := $(BUILD)/kmod-$(KVER)
SOBJ := $(BUILD)/kmod-selftest-$(KVER)
UOBJ := $(BUILD)/user
POBJ := $(BUILD)/progs
HOBJ := $(BUILD)/host

CC ?= gcc
# EXTRA_CFLAGS, EXTRA_CXXFLAGS, EXTRA_LDFLAGS: the distribution's build
# flags (scripts/pkg/debian/rules passes dpkg-buildflags': hardening).
CFLAGS_USER := -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter -fPIC -std=gnu11 \
	-I$(TOP)/libuser/include -I$(TOP)/abi $(EXTRA_CFLAGS)
LIBDIR := /usr/lib/x86_64-linux-gnu

.PHONY: all kmod user progs host dump fuzz check-core setup test test-host test-vm test-vm-slow test-vm-doorbell test-vm-sqpoll test-pair test-slow test-debug demo bench bench-host bench-intf bench-rss install install-user uninstall deb clean

all: kmod user progs host dump

setup:
	bash $(TOP)/scripts/setup.sh

# ---- kernel module --------------------------------------------------------
# Kbuild on 6.1 writes objects next to the sources; build in a symlink copy
# of kmod/ so the source tree stays clean and each KVER has its own objects.
# Then the test module (tests/kmod, sroce_selftest.ko), in its own tree and
# against sroce.ko's exports; only the VM tests load it, `make install`
# leaves it out.
mirror = mkdir -p $(2) && find $(2) -xtype l -delete && cp -rsf $(1)/. $(2)/

kmod:
	@test -d $(KDIR) || { echo "no kernel headers for $(KVER) at $(KDIR): run 'make setup'" >&2; exit 1; }
	@$(call mirror,$(TOP)/kmod,$(KOBJ))
	$(MAKE) -C $(KDIR) M=$(KOBJ) SROCE_ABI=$(TOP)/abi modules
	bash $(TOP)/scripts/check-core-objects.sh $$(grep -qE '^CONFIG_(KASAN|UBSAN)=y' $(KDIR)/.config 2>/dev/null && echo --sanitized) $(KOBJ)/core
	@$(call mirror,$(TOP)/tests/kmod,$(SOBJ))
	@# modpost again every time: sroce.ko's exports (their CRCs) may have changed.
	@rm -f $(SOBJ)/Module.symvers
	$(MAKE) -C $(KDIR) M=$(SOBJ) SROCE_KMOD=$(TOP)/kmod SROCE_ABI=$(TOP)/abi \
		KBUILD_EXTRA_SYMBOLS=$(KOBJ)/Module.symvers modules

check-core: kmod

# ---- provider (libsroce) ---------------------------------------------------
USRC := $(wildcard $(TOP)/libuser/*.c)
UHDR := $(wildcard $(TOP)/libuser/*.h $(TOP)/libuser/include/*/*.h) $(wildcard $(TOP)/abi/*.h)

user: $(UOBJ)/libsroce.so.1 $(UOBJ)/libsroce-rdmav34.so $(UOBJ)/sroce.driver $(UOBJ)/abi-mismatch/libsroce-rdmav34.so \
	$(UOBJ)/future-mask/libsroce.so.1

# libsroce.so.1 is both the provider and the srocedv library, like libmlx5:
# the provider name is a symlink to it, so one copy is loaded.
$(UOBJ)/libsroce.so.1: $(USRC) $(UHDR) $(TOP)/libuser/libsroce.map
	@mkdir -p $(UOBJ)
	$(CC) $(CFLAGS_USER) $(EXTRA_LDFLAGS) -shared -Wl,-soname,libsroce.so.1 -Wl,--no-undefined \
		-Wl,--version-script=$(TOP)/libuser/libsroce.map -o $@ $(USRC) -libverbs
	ln -sf libsroce.so.1 $(UOBJ)/libsroce.so

$(UOBJ)/libsroce-rdmav34.so: $(UOBJ)/libsroce.so.1
	ln -sf libsroce.so.1 $@

$(UOBJ)/sroce.driver:
	@mkdir -p $(UOBJ)
	echo "driver sroce" > $@

# A provider that claims another ABI version, for the mismatch test only.
$(UOBJ)/abi-mismatch/libsroce-rdmav34.so: $(USRC) $(UHDR) $(TOP)/libuser/libsroce.map
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_USER) -DSROCE_PROVIDER_ABI_VERSION='(SROCE_ABI_VERSION + 1)' -shared \
		-Wl,--no-undefined -Wl,--version-script=$(TOP)/libuser/libsroce.map -o $@ $(USRC) -libverbs

# A provider whose srocedv_create_* pass comp_mask bit 63 on to the kernel,
# for the test that the kernel refuses bits it does not know (91-extended-verbs).
$(UOBJ)/future-mask/libsroce.so.1: $(USRC) $(UHDR) $(TOP)/libuser/libsroce.map
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_USER) -DSROCEDV_TEST_FUTURE_MASK='(1ull << 63)' -shared -Wl,-soname,libsroce.so.1 \
		-Wl,--no-undefined -Wl,--version-script=$(TOP)/libuser/libsroce.map -o $@ $(USRC) -libverbs
	ln -sf libsroce.so.1 $(dir $@)libsroce-rdmav34.so

# ---- sroce-dump (libpcap tool on the core's packet codec) -------------------
# The core's codec files are compiled for user space with env_user.cpp
# (crc32 only). C++20 because the core headers are.
DSRC := $(filter-out %/fuzz_decode.cpp,$(wildcard $(TOP)/libuser/dump/*.cpp))
DLIB := $(filter-out %/sroce-dump.cpp %/rdma_dev.cpp,$(DSRC))
CODEC := $(addprefix $(TOP)/kmod/core/,opcode.cpp packet.cpp icrc.cpp)
DHDR := $(wildcard $(TOP)/libuser/dump/*.h $(TOP)/kmod/core/*.h $(TOP)/kmod/core/ktl/*.h)
CXX_DUMP := g++
DUMP_CXXFLAGS := -std=c++20 -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter \
	-I$(TOP)/kmod/core -I$(TOP)/libuser/dump $(shell pkg-config --cflags libnl-3.0 2>/dev/null) $(EXTRA_CXXFLAGS)
DOBJ := $(BUILD)/dump
FUZZ_TIME ?= 600

dump: $(UOBJ)/sroce-dump $(DOBJ)/mkpcap $(DOBJ)/fuzz-decode

$(UOBJ)/sroce-dump: $(DSRC) $(CODEC) $(DHDR)
	@mkdir -p $(UOBJ)
	$(CXX_DUMP) $(DUMP_CXXFLAGS) $(EXTRA_LDFLAGS) -o $@ $(DSRC) $(CODEC) -lpcap -lnl-3

# The test's packet crafter: the same codec, writing a pcap.
$(DOBJ)/mkpcap: $(TOP)/tests/dump/mkpcap.cpp $(DLIB) $(CODEC) $(DHDR)
	@mkdir -p $(DOBJ)
	$(CXX_DUMP) $(DUMP_CXXFLAGS) -o $@ $< $(DLIB) $(CODEC) -lpcap

# libFuzzer target for the decoder (clang, ASan + UBSan).
$(DOBJ)/fuzz-decode: $(TOP)/libuser/dump/fuzz_decode.cpp $(DLIB) $(CODEC) $(DHDR)
	@mkdir -p $(DOBJ)
	clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-I$(TOP)/kmod/core -I$(TOP)/libuser/dump -o $@ $< $(DLIB) $(CODEC)

# Longer fuzzing than the default suite's bounded run.
fuzz: $(DOBJ)/fuzz-decode $(DOBJ)/mkpcap
	bash $(TOP)/tests/dump/fuzz.sh $(FUZZ_TIME)

# ---- test programs ---------------------------------------------------------
PSRC := $(wildcard $(TOP)/tests/progs/*.c)
progs: $(patsubst $(TOP)/tests/progs/%.c,$(POBJ)/%,$(PSRC))

# A program is tests/progs/NAME.c plus, for a larger one, the files of
# tests/progs/NAME/ (sroce_integrity).
$(POBJ)/%: $(TOP)/tests/progs/%.c $(UOBJ)/libsroce.so.1 $(wildcard $(TOP)/tests/progs/*.h $(TOP)/tests/progs/*/*.[ch])
	@mkdir -p $(POBJ)
	$(CC) -O2 -g -Wall -Wextra -Werror -std=gnu11 -I$(TOP)/libuser/include -I$(TOP)/abi -o $@ $< \
		$(wildcard $(TOP)/tests/progs/$*/*.c) -L$(UOBJ) -lsroce -libverbs $(PLIBS)

$(POBJ)/sroce_integrity: PLIBS := -lrdmacm

# The MPI job of tests/vm/98-middleware (Open MPI's mpicc, from setup.sh).
progs: $(POBJ)/sroce_mpi_check
$(POBJ)/sroce_mpi_check: $(TOP)/tests/mpi/sroce_mpi_check.c
	@mkdir -p $(POBJ)
	mpicc -O2 -g -Wall -Wextra -Werror -std=gnu11 -o $@ $<

# ---- host tests (core in user space, Catch2) --------------------------------
host:
	cmake -S $(TOP)/tests/host -B $(HOBJ) -DCMAKE_BUILD_TYPE=Debug >/dev/null
	$(MAKE) -C $(HOBJ) --no-print-directory

test-host: host
	cd $(HOBJ) && ctest --output-on-failure

# ---- VM tests ----------------------------------------------------------------
test-vm: kmod user progs dump
	bash $(TOP)/scripts/run-vm-tests.sh --kernel $(KVER)

# The slow VM tests (tests/vm/slow: every netem fault, the SQ poller stress;
# ~15 min under TCG), not in the default suite.
test-vm-slow: kmod user progs dump deb
	bash $(TOP)/scripts/run-vm-tests.sh --kernel $(KVER) $(wildcard $(TOP)/tests/vm/slow/[0-9]*.sh)

# The VM suite in doorbell-only mode, twice: the module loaded with
# sq_poll=0, then with the pollers on (sq_poll=Y) and every process
# opting out (SROCE_NO_SQ_POLL=1) (~30 min). sq_poll=auto, the default,
# starts no poller on the VM's 2 vCPUs: the default suite is doorbell mode.
test-vm-doorbell: kmod user progs dump
	SROCE_VM_MODPARAMS=sq_poll=0 bash $(TOP)/scripts/run-vm-tests.sh --kernel $(KVER)
	SROCE_VM_MODPARAMS=sq_poll=Y SROCE_NO_SQ_POLL=1 bash $(TOP)/scripts/run-vm-tests.sh --kernel $(KVER)

# The VM suite with a poller per device (sq_poll=Y), which the default
# (auto) does not start on 2 vCPUs (~15 min).
test-vm-sqpoll: kmod user progs dump
	SROCE_VM_MODPARAMS=sq_poll=Y bash $(TOP)/scripts/run-vm-tests.sh --kernel $(KVER)

# Two VMs on one virtual wire (scripts/vm-run --pair), one pair at a time.
test-pair: kmod user progs
	bash $(TOP)/scripts/run-pair-tests.sh --kernel $(KVER)

# The build runs on every core: serial, it is 5 of CI's minutes.
JOBS ?= $(shell nproc)
test:
	$(MAKE) --no-print-directory -j$(JOBS) all
	bash $(TOP)/scripts/test-all.sh --kernel $(KVER)

# Slow suite, not in CI: the VM suite again on the second kernel target
# (the newest 6.12 from bookworm-backports), fetched on first use; then the
# packages installed in a guest booted on it (DKMS builds for 6.12, the
# smoke test runs on that module).
test-slow: deb
	@k=$$($(TOP)/scripts/kver --backports); \
	test -n "$$k" || { echo "no 6.12 backports kernel known to apt" >&2; exit 1; }; \
	test -e $(TOP)/.cache/kernel/$$k/boot/vmlinuz-$$k || bash $(TOP)/scripts/setup.sh $$k; \
	$(MAKE) --no-print-directory KVER=$$k kmod user progs dump && \
	bash $(TOP)/scripts/run-vm-tests.sh --kernel $$k && \
	bash $(TOP)/scripts/run-vm-tests.sh --kernel $$k $(TOP)/tests/vm/slow/97-deb-install.sh

# Not in CI: Debian's 6.1 source built with lockdep, KASAN, UBSAN, kmemleak,
# DEBUG_ATOMIC_SLEEP and DEBUG_OBJECTS (scripts/debug-kernel.sh, cached in
# .cache/ after the first build), the module built against it, then the VM
# suite, the slow VM suite and the pair tests on it with panic_on_warn=1 and
# a kmemleak scan at the end of every boot (scripts/test-debug.sh).
test-debug:
	bash $(TOP)/scripts/test-debug.sh

demo: kmod user progs
	$(TOP)/scripts/vm-run --kernel $(KVER) -- bash $(TOP)/scripts/demo.sh

# Benchmarks, not part of `make test` (speed is measured, never asserted).
# bench-host: the core's packet path against memcpy on this machine, then
# a key look-up's cost.
# bench: that, then one VM with sroce and rdma_rxe side by side (~35 min
# under TCG); writes Documentation/benchmarks.md and benchmarks.svg.
# BENCH_ARGS passes options to scripts/bench.sh (--runs, ...; a --filter
# regex with '$' is easier to give to scripts/bench.sh directly);
# VM_LOCK=FILE makes the VM wait for that lock.
bench-host: host
	$(HOBJ)/bench_packet
	$(HOBJ)/bench_keys

# Posting and polling cost through ibv_post_send/ibv_poll_cq, ibv_wr_*/cq_ex
# and the interface families: ns and callgrind's instructions per WR.
bench-intf: host
	bash $(TOP)/scripts/bench/intf.sh $(HOBJ)/bench_intf $(HOBJ)/intf.tsv && column -t -s "$$(printf '\t')" $(HOBJ)/intf.tsv

# bench-rss: the UD receive rate into one QP against an RSS QP over 2 WQs
# (one VM, ~5 min) -> Documentation/benchmarks-rss.md; bench runs it too.
bench-rss: kmod user progs
	bash $(TOP)/scripts/bench/rss.sh --kernel $(KVER)

bench: kmod user progs host
	$(if $(BENCH_ARGS),,BENCH_COMMAND="make bench") bash $(TOP)/scripts/bench.sh --kernel $(KVER) $(BENCH_ARGS)
	bash $(TOP)/scripts/bench/rss.sh --kernel $(KVER)

# ---- install on a real host ------------------------------------------------
install: kmod install-user
	install -D -m 644 $(KOBJ)/sroce.ko $(DESTDIR)/lib/modules/$(KVER)/updates/sroce.ko
	[ -n "$(DESTDIR)" ] || depmod -a $(KVER)

# Everything but the module (the Debian packages build the module with DKMS).
install-user: $(UOBJ)/libsroce.so.1 $(UOBJ)/sroce.driver $(UOBJ)/sroce-dump
	install -D -m 755 $(UOBJ)/libsroce.so.1 $(DESTDIR)$(LIBDIR)/libsroce.so.1
	ln -sf libsroce.so.1 $(DESTDIR)$(LIBDIR)/libsroce.so
	install -d $(DESTDIR)$(LIBDIR)/libibverbs
	ln -sf ../libsroce.so.1 $(DESTDIR)$(LIBDIR)/libibverbs/libsroce-rdmav34.so
	install -D -m 644 $(UOBJ)/sroce.driver $(DESTDIR)/etc/libibverbs.d/sroce.driver
	install -D -m 644 -t $(DESTDIR)/usr/include/infiniband $(TOP)/libuser/include/infiniband/srocedv.h \
		$(TOP)/libuser/include/infiniband/srocedv_intf.h
	install -D -m 755 $(UOBJ)/sroce-dump $(DESTDIR)/usr/sbin/sroce-dump
	install -D -m 644 $(TOP)/libuser/dump/sroce-dump.8 $(DESTDIR)/usr/share/man/man8/sroce-dump.8
	install -D -m 644 -t $(DESTDIR)/usr/share/man/man3 $(wildcard $(TOP)/libuser/man/*.3)
	install -D -m 644 $(TOP)/libuser/man/sroce.4 $(DESTDIR)/usr/share/man/man4/sroce.4
	[ -n "$(DESTDIR)" ] || ldconfig

# Removes what install put there (the build checks install into a staging
# root, uninstall from it, and require it empty of files).
uninstall:
	rm -f $(DESTDIR)/lib/modules/$(KVER)/updates/sroce.ko
	[ -n "$(DESTDIR)" ] || depmod -a $(KVER)
	rm -f $(DESTDIR)$(LIBDIR)/libsroce.so.1 $(DESTDIR)$(LIBDIR)/libsroce.so \
		$(DESTDIR)$(LIBDIR)/libibverbs/libsroce-rdmav34.so $(DESTDIR)/etc/libibverbs.d/sroce.driver \
		$(DESTDIR)/usr/include/infiniband/srocedv.h $(DESTDIR)/usr/include/infiniband/srocedv_intf.h \
		$(DESTDIR)/usr/sbin/sroce-dump \
		$(DESTDIR)/usr/share/man/man8/sroce-dump.8 $(DESTDIR)/usr/share/man/man4/sroce.4 \
		$(addprefix $(DESTDIR)/usr/share/man/man3/,$(notdir $(wildcard $(TOP)/libuser/man/*.3)))
	[ -n "$(DESTDIR)" ] || ldconfig

# Debian packages (sroce-dkms, libsroce1, libsroce-dev, sroce-utils) from
# the committed tree, then lintian: build/deb/ (scripts/pkg/make-deb.sh).
deb:
	bash $(TOP)/scripts/pkg/make-deb.sh

clean:
	rm -rf $(BUILD)
