#!/usr/bin/env bash
# Build-level checks: the freestanding core objects are clean, and the
# checker itself catches a constructor and a non-env symbol; ktl/lock.h
# refuses misuse at compile time; ThreadSanitizer sees the ring barriers;
# documentation names only files that exist; kmod/ files keep their shape.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
kver=${KVER:-$("$top/scripts/kver")}
check=$top/scripts/check-core-objects.sh
passed=0 failed=0
t() { # t NAME EXPECTED CMD...: EXPECTED is 0, or a regex the failure must print
	local name=$1 want=$2
	shift 2
	"$@" >/tmp/build-check.out 2>&1
	local rc=$?
	if { [ "$want" = 0 ] && [ $rc -eq 0 ]; } ||
		{ [ "$want" != 0 ] && [ $rc -ne 0 ] && grep -qE "$want" /tmp/build-check.out; }; then
		echo "PASS $name"
		passed=$((passed + 1))
	else
		echo "FAIL $name (exit $rc)"
		sed 's/^/  /' /tmp/build-check.out
		failed=$((failed + 1))
	fi
}

t "core objects have no constructors and only env.h symbols" 0 "$check" "$top/build/kmod-$kver/core"

# Objects built with the kernel's C++ flags that break each rule.
tmp=$(mktemp -d)
flags=$(sed -n '/^SROCE_CXXFLAGS :=/,/^$/p' "$top/kmod/Kbuild" | sed 's/^SROCE_CXXFLAGS :=//; s/\\$//; s/-I[^ ]*//g; s/-Werror//' | tr '\n' ' ')
cat >"$tmp/ctor.cpp" <<'CPP'
int next_id();
int global_id = next_id(); // dynamic initialisation: a global constructor
int next_id() { return 1; }
CPP
cat >"$tmp/foreign.cpp" <<'CPP'
extern "C" int printk(const char *, ...); // a kernel symbol outside env.h
void say() { printk("hi\n"); }
CPP
cat >"$tmp/env_ok.cpp" <<'CPP'
extern "C" void *sroce_env_zalloc(unsigned long, int);
void *get(unsigned long n) { return sroce_env_zalloc(n, 0); }
CPP
cat >"$tmp/sanitized.cpp" <<'CPP'
extern "C" void *sroce_env_zalloc(unsigned long, int);
int load(int *p, int i) { return p[i] << (i & 7); } // KASAN and UBSAN instrument both
CPP
for f in ctor foreign env_ok; do
	g++ $flags -c -o "$tmp/$f.o" "$tmp/$f.cpp" || echo "cannot compile $f.cpp"
done
# As kmod/Kbuild builds the core for make test-debug's KASAN/UBSAN kernel.
san="-fsanitize=kernel-address -fasan-shadow-offset=0xdffffc0000000000 --param asan-stack=1 --param asan-globals=0"
san+=" -fsanitize=bounds -fsanitize=shift"
g++ $flags $san -c -o "$tmp/sanitized.o" "$tmp/sanitized.cpp" || echo "cannot compile sanitized.cpp"
g++ $flags $san -c -o "$tmp/foreign_san.o" "$tmp/foreign.cpp" || echo "cannot compile foreign.cpp sanitized"
t "checker rejects a global constructor" "has global constructors" "$check" "$tmp/ctor.o"
t "checker rejects a symbol outside env.h" "outside env.h:|  printk" "$check" "$tmp/foreign.o"
t "checker accepts an env.h call" 0 "$check" "$tmp/env_ok.o"
t "checker rejects sanitizer calls for a plain kernel" "  __asan_" "$check" "$tmp/sanitized.o"
t "checker accepts sanitizer calls with --sanitized" 0 "$check" --sanitized "$tmp/sanitized.o"
t "checker still rejects a foreign symbol with --sanitized" "  printk" "$check" --sanitized "$tmp/foreign_san.o"
rm -rf "$tmp"

# ktl/lock.h's compile-time promises (tests/build/lock_misuse.cpp): the
# file compiles as it is (so the include path is right), and each misuse
# is refused with the kernel's flags, for its own reason.
misuse() { g++ $flags -Werror -I"$top/kmod/core" -I"$top/abi" -fsyntax-only "$@" "$top/tests/build/lock_misuse.cpp"; }
t "lock_misuse.cpp compiles without a misuse" 0 misuse
t "Protected<T>'s data is reached only through with()" "data_.* is private within this context" misuse -DMISUSE_PROTECTED_DATA
t "a Protected<T> cannot be copied" "use of deleted function .ktl::Protected<Stats>::Protected\(const" misuse -DMISUSE_PROTECTED_COPY
t "a discarded Guard temporary does not compile" "ignoring return value of .ktl::Guard::Guard\(" misuse -DMISUSE_GUARD_TEMPORARY
t "a Guard cannot be copied" "use of deleted function .ktl::Guard::Guard\(const" misuse -DMISUSE_GUARD_COPY

# Ring barriers under ThreadSanitizer (tests/build/ring_order): the core's
# Ring and the provider's ring.c/cq.c pass 20,000 WQEs and CQEs between two
# threads. TSAN is quiet on the tree, and reports a race on the entries
# when any one of the four barrier helpers is made relaxed (which x86
# itself never shows: its stores and its loads stay in order). setarch -R: TSAN's fixed layout wants no ASLR.
ro=$(mktemp -d)
t "ring_order builds: the tree and four relaxed mutants" 0 bash "$top/tests/build/ring_order/build.sh" "$ro"
tsan() { TSAN_OPTIONS=halt_on_error=1 setarch "$(uname -m)" -R "$@"; }
t "ring barriers: TSAN quiet, every WQE and CQE intact" 0 tsan "$ro/real"
for helper in load_acquire store_release sroce_load_acquire sroce_store_release; do
	t "ring barriers: TSAN reports the race with $helper relaxed" \
		"#0 (kernel_run|provider_run|sroce_cqe_to_wc) " tsan "$ro/$helper"
done
rm -rf "$ro"

# Every file the documentation names exists; a stale name is caught.
t "every file Documentation/ and README.md name exists" 0 python3 "$top/scripts/check-doc-paths.py" "$top"
doc=$(mktemp --suffix=.md)
printf 'See `kmod/core/rx.cpp` and `unsupported.c`, then `kmod/linux/gone.c`.\n' >"$doc"
stale_found() { # exit 1, both stale names reported, the real one not
	local out rc
	out=$(python3 "$top/scripts/check-doc-paths.py" "$top" "$doc")
	rc=$?
	echo "$out"
	[ $rc -eq 1 ] && grep -q ':1: unsupported.c$' <<<"$out" && grep -q ':1: kmod/linux/gone.c$' <<<"$out" &&
		! grep -q rx.cpp <<<"$out"
}
t "the doc check names a stale file and a stale path" 0 stale_found
rm -f "$doc"

# Every kmod/ source opens with a comment saying what it is for and has at
# most 500 lines (issue 13: one responsibility per file).
kmod_shape() { # kmod_shape DIR: names each offender; fails if there is one
	local f bad=0
	while IFS= read -r f; do
		if ! sed -n '1,3p' "$f" | grep -v SPDX | grep -qE '^(//|/\*| \*)'; then
			echo "no opening comment: ${f#"$1"/}"
			bad=1
		fi
		if [ "$(wc -l <"$f")" -gt 500 ]; then
			echo "over 500 lines: ${f#"$1"/}"
			bad=1
		fi
	done < <(find "$1" \( -name '*.c' -o -name '*.cpp' -o -name '*.h' \) | sort)
	return $bad
}
t "every kmod/ file opens with its purpose and has at most 500 lines" 0 kmod_shape "$top/kmod"
shape=$(mktemp -d)
printf '#include "x.h"\nint x;\n' >"$shape/bare.cpp"
seq 501 | sed 's|^|// |' >"$shape/long.h"
t "the shape check names a file without its comment and one too long" \
	"no opening comment: bare.cpp" kmod_shape "$shape"
t "... and the long one" "over 500 lines: long.h" kmod_shape "$shape"
rm -rf "$shape"

# A VM test counts its failed checks and exits with them at `finish`
# (lib.sh); one that never calls it exits with its last command's status
# and passes whatever failed before (64-trains did, until issue 17 item 7).
vm_finish() { # vm_finish DIR...: names each test that does not end with finish
	local f bad=0
	for f in $(find "$@" -maxdepth 1 -name '[0-9]*.sh' | sort); do
		grep -q 'lib\.sh' "$f" || continue
		if [ "$(grep -v '^[[:space:]]*$' "$f" | tail -1)" != finish ]; then
			echo "does not end with finish: ${f##*/}"
			bad=1
		fi
	done
	return $bad
}
t "every VM test that uses lib.sh ends with finish" 0 vm_finish "$top/tests/vm" "$top/tests/vm/slow" "$top/tests/pair"
nofin=$(mktemp -d)
printf '. lib.sh\ncheck x false\nend_two_hosts\n' >"$nofin/10-x.sh"
t "... and names one that does not" "does not end with finish: 10-x.sh" vm_finish "$nofin"
rm -rf "$nofin"

# The provider exports only the srocedv API.
exports=$(nm -D --defined-only "$top/build/user/libsroce.so.1" | awk '$2 == "T" {print $3}' | sort | tr '\n' ' ')
t "provider exports only srocedv_* symbols" 0 sh -c "echo '$exports' | grep -q 'srocedv_query_device@@SROCE_1.0' && ! echo '$exports' | tr ' ' '\n' | grep . | grep -vq '^srocedv_[a-z_]*@@SROCE_1.0\$'"

# Every exported srocedv_* function has its man page (or an alias of one).
missing_pages() { # missing_pages MANDIR SYMBOL...: fails naming those without MANDIR/SYMBOL.3
	local dir=$1 sym rc=0
	shift
	for sym in "$@"; do
		[ -f "$dir/$sym.3" ] || { echo "no page: $sym"; rc=1; }
	done
	return $rc
}
syms=$(echo "$exports" | tr ' ' '\n' | sed -n 's/@@SROCE_1.0$//p')
t "every exported srocedv_* function has a man page" 0 missing_pages "$top/libuser/man" $syms
t "... and the check names one that has none" "no page: srocedv_no_such_call" \
	missing_pages "$top/libuser/man" srocedv_query_intf srocedv_no_such_call

# libsroce1's Debian symbols file lists every exported function, so that a
# package built against a newer symbol depends on the version that has it.
missing_symbols() { # missing_symbols SYMBOLS_FILE SYMBOL...
	local file=$1 sym rc=0
	shift
	for sym in "$@"; do
		grep -q "^ $sym@SROCE_1.0 " "$file" || { echo "not in the symbols file: $sym"; rc=1; }
	done
	return $rc
}
t "the Debian symbols file lists every exported function" 0 \
	missing_symbols "$top/scripts/pkg/debian/libsroce1.symbols" $syms
t "... and the check names one it lacks" "not in the symbols file: srocedv_no_such_call" \
	missing_symbols "$top/scripts/pkg/debian/libsroce1.symbols" srocedv_query_intf srocedv_no_such_call

# The man pages render without a warning from man/groff (the .so aliases
# point at a page that is checked itself).
man_lint() { # man_lint PAGE...
	local f out
	for f in "$@"; do
		out=$(LC_ALL=C.UTF-8 man --warnings -E UTF-8 -l "$f" 2>&1 >/dev/null)
		[ -z "$out" ] || { echo "$f: $out"; return 1; }
	done
}
t "man pages render without warnings" 0 man_lint $(grep -L '^\.so ' "$top"/libuser/man/*.3) \
	"$top/libuser/man/sroce.4" "$top/libuser/dump/sroce-dump.8"
# sroce(4) names every module parameter the built module has.
params_missing() { # params_missing KO PAGE: fails naming each parameter PAGE lacks
	local p rc=0
	for p in $(modinfo -F parm "$1" | cut -d: -f1); do
		grep -q "^\.BR $p " "$2" || { echo "not in $2: $p"; rc=1; }
	done
	return $rc
}
t "sroce(4) describes every module parameter" 0 params_missing "$top/build/kmod-$kver/sroce.ko" \
	"$top/libuser/man/sroce.4"
nopage=$(mktemp --suffix=.4)
printf '.TH X 4\n.SH PARAMETERS\n.BR ipv6 " (bool)"\n' >"$nopage"
t "... and names one it lacks" "not in .*: sq_poll" params_missing "$top/build/kmod-$kver/sroce.ko" "$nopage"
rm -f "$nopage"
bad_page=$(mktemp --suffix=.3)
printf '.TH BAD 3\n.SH NAME\nbad \\- a page with an unknown macro\n.XX here\n' >"$bad_page"
t "the man page check reports a page with a warning" "macro 'XX' not defined" man_lint "$bad_page"
rm -f "$bad_page"

# make install into a staging root lays out module, provider and header the
# way libibverbs and modprobe expect them.
root=$(mktemp -d)
t "make install into DESTDIR" 0 make -C "$top" --no-print-directory install DESTDIR="$root" KVER="$kver"
lib=$root/usr/lib/x86_64-linux-gnu
t "installed module, library, provider link, driver file, header, sroce-dump and the man pages" 0 test \
	-f "$root/lib/modules/$kver/updates/sroce.ko" -a -f "$lib/libsroce.so.1" -a \
	"$(readlink "$lib/libibverbs/libsroce-rdmav34.so")" = ../libsroce.so.1 -a \
	"$(cat "$root/etc/libibverbs.d/sroce.driver" 2>/dev/null)" = "driver sroce" -a \
	-f "$root/usr/include/infiniband/srocedv.h" -a -x "$root/usr/sbin/sroce-dump" -a \
	-f "$root/usr/share/man/man8/sroce-dump.8" -a -f "$root/usr/share/man/man3/srocedv_create_qp.3" -a \
	-f "$root/usr/share/man/man3/srocedv_create_srq.3" -a -f "$root/usr/share/man/man3/srocedv_wr_flush.3"
t "the test module, built by make kmod, is not installed" 0 sh -c \
	"test -f '$top/build/kmod-selftest-$kver/sroce_selftest.ko' && ! find '$root' -name 'sroce_selftest*' | grep -q ."
t "make uninstall from DESTDIR leaves no file" 0 sh -c \
	"make -C '$top' --no-print-directory uninstall DESTDIR='$root' KVER='$kver' >/dev/null && test -z \"\$(find '$root' ! -type d)\""
rm -rf "$root"

# sroce-utils' systemd unit, as systemd reads it (offline), with sroce-dump's
# man page where man finds it: its commands must exist here (2026-11-28 it
# named /sbin/rdma, which Debian 12's iproute2 does not have).
unit_verify() { # unit_verify UNIT_FILE
	local d rc
	d=$(mktemp -d)
	mkdir -p "$d/man/man8"
	cp "$1" "$d/" && cp "$top/libuser/dump/sroce-dump.8" "$d/man/man8/"
	MANPATH=$d/man systemd-analyze verify "$d/sroce-link@eth0.service"
	rc=$?
	rm -rf "$d"
	return $rc
}
# (systemd-analyze: scripts/setup.sh installs systemd.)
t "sroce-link@.service verifies (systemd-analyze verify)" 0 unit_verify "$top/scripts/pkg/debian/sroce-link@.service"
t "... and a unit naming a missing command does not" "not executable" \
	bash -c "$(declare -f unit_verify); top='$top'; mkdir -p /tmp/unit-bad &&
		sed 's|^ExecStart=rdma|ExecStart=/sbin/no-such-rdma|' '$top/scripts/pkg/debian/sroce-link@.service' \
		>/tmp/unit-bad/sroce-link@.service && unit_verify /tmp/unit-bad/sroce-link@.service"

# Two VM suites at once would share build/vm/last-test-run: the second
# refuses before it boots anything.
mkdir -p "$top/build/vm"
# make test-debug's ledger: a test counts only for the kernel code it ran
# on and as its script is now.
ledger_check() { # ledger_check LINES...: --ledger's output over a ledger of LINES
	local l rc
	l=$(mktemp)
	printf '%s\n' "$@" >"$l"
	TEST_DEBUG_LEDGER=$l TEST_DEBUG_CODE_ID=K1 bash "$top/scripts/test-debug.sh" --ledger
	rc=$?
	rm -f "$l"
	return $rc
}
h10=$(git -C "$top" hash-object tests/vm/10-good-path.sh)
t "test-debug ledger: an empty one covers nothing" "ledger: 0 of [0-9]+ tests" ledger_check ""
t "test-debug ledger: a pass on this kernel code counts" "^  passed  tests/vm/10-good-path.sh \(2026-11-28 on abc\)$" \
	ledger_check "$(printf 'K1\tvm\ttests/vm/10-good-path.sh\t%s\t100\t2026-11-28\tabc' "$h10")"
t "test-debug ledger: not on other kernel code, nor an edited script" "ledger: 0 of [0-9]+ tests" \
	ledger_check "$(printf 'K0\tvm\ttests/vm/10-good-path.sh\t%s\t100\t2026-11-28\tabc' "$h10")" \
	"$(printf 'K1\tvm\ttests/vm/10-good-path.sh\t0000\t100\t2026-11-28\tabc')"
t "test-debug ledger: a pass shows the kernel it ran on" "^  passed  tests/vm/10-good-path.sh \(2026-11-28 on abc, 6.1.9-sroce-debug\)$" \
	ledger_check "# a comment" "$(printf 'K1\tvm\ttests/vm/10-good-path.sh\t%s\t100\t2026-11-28\tabc\t6.1.9-sroce-debug' "$h10")"
# Which tests of a run go into the ledger: all of a run that passed whole;
# of a vm boot where a test failed, the passes, if the boot came out clean.
passes_check() { # passes_check WANT LAYER RC FAILED EPILOGUE-STATUS DMESG
	local d got
	d=$(mktemp -d)
	printf 'PASS 10-good-path (100 s)\nFAIL 20-netns-rxe (exit 1)\nvm: 1 passed, %s failed\n' "$4" >"$d/log"
	[ "$5" = none ] || echo "$5" >"$d/epilogue-status"
	printf '%s\n' "$6" >"$d/dmesg.log"
	got=$(bash "$top/scripts/test-debug.sh" --ledger-passes "$2" "$3" "$4" "$d/log" "$d" | tr '\n' ' ')
	rm -rf "$d"
	echo "got: '$got'"
	[ "$got" = "$1" ]
}
boot='[    1.000000] Linux version 6.1.9-sroce-debug'
t "test-debug ledger: a run that passed whole records its passes" 0 passes_check "10-good-path 100 " vm 0 0 none "$boot"
t "test-debug ledger: a clean boot keeps its passes beside a failed test" 0 passes_check "10-good-path 100 " vm 1 1 0 "$boot"
t "test-debug ledger: not when the epilogue failed or never ran" 0 \
	bash -c "$(declare -f passes_check); top='$top'; passes_check '' vm 1 1 1 '$boot' && passes_check '' vm 125 0 none '$boot'"
t "test-debug ledger: not when the boot's kernel log has a report" 0 passes_check "" vm 1 1 0 "$boot
[   90.000000] BUG: KASAN: slab-out-of-bounds in sroce_x"
t "test-debug ledger: a pair run counts only whole" 0 passes_check "" pair 1 1 0 "$boot"
# What a resumed run takes: the layers asked for, less what the ledger
# already has whole; never a layer not asked for.
plan_check() { # plan_check WANT LAYERS LEDGER-TESTS...: --resume-plan's last line
	local l t got
	l=$(mktemp)
	for t in "${@:3}"; do
		printf 'K1\tx\t%s\t%s\t1\t2026-12-03\tabc\n' "$t" "$(git -C "$top" hash-object "$t")"
	done >"$l"
	got=$(cd "$top" && TEST_DEBUG_LEDGER=$l TEST_DEBUG_CODE_ID=K1 TEST_DEBUG_LAYERS=$2 TEST_DEBUG_RESUME=1 \
		bash scripts/test-debug.sh --resume-plan | tail -1)
	rm -f "$l"
	echo "got: '$got'"
	[ "$got" = "$1" ]
}
vm_all=$(cd "$top" && echo tests/vm/[0-9]*.sh)
pair_all=$(cd "$top" && echo tests/pair/[0-9]*.sh)
# shellcheck disable=SC2086 # the lists are words
t "test-debug resume: the pair layer asked for alone runs alone" 0 \
	plan_check "layers: pair; vm tests: " pair tests/vm/10-good-path.sh
# shellcheck disable=SC2086
t "test-debug resume: the vm layer takes only what is left, a whole layer drops out" 0 \
	plan_check "layers: vm pair; vm tests: tests/vm/10-good-path.sh" "" \
	$(echo $vm_all | tr ' ' '\n' | grep -v 10-good-path) tests/vm/slow/82-netem-full.sh
# shellcheck disable=SC2086
t "test-debug resume: nothing left runs nothing" 0 \
	plan_check "layers: none; vm tests: " "" $vm_all tests/vm/slow/82-netem-full.sh $pair_all
t "test-debug resume: an unknown layer is refused" "unknown layer bogus" \
	env TEST_DEBUG_CODE_ID=K1 TEST_DEBUG_LAYERS="vm bogus" bash "$top/scripts/test-debug.sh" --resume-plan
# The ledger outlives the session's machine only in git.
t "test-debug ledger: the default one is committed, and --ledger reads it" 0 \
	bash -c "git -C '$top' ls-files --error-unmatch tests/debug-ledger.tsv &&
		bash '$top/scripts/test-debug.sh' --ledger | grep -E 'ledger: [0-9]+ of [0-9]+ tests'"

t "run-vm-tests.sh refuses while another run holds its output" "another run is using" \
	flock "$top/build/vm/last-test-run.lock" bash "$top/scripts/run-vm-tests.sh"

echo "build: $passed passed, $failed failed"
[ $failed -eq 0 ]
