#!/bin/bash
# The end of every test-VM boot of `make test-debug` (scripts/test-debug.sh
# sets VM_EPILOGUE, scripts/vm/stage2 runs it after the command). It states
# the debug options this boot ran with, unloads sroce and has kmemleak scan.
# Exits 1 if an option is missing, sroce cannot be unloaded, or kmemleak
# reports any unreferenced object; vm-run then fails the run.
set -u
fails=0
fail() { echo "debug-epilogue: FAIL: $*"; fails=$((fails + 1)); }

echo "=== debug epilogue: $(uname -r)"
echo "cmdline: $(cat /proc/cmdline)"
echo "panic_on_warn=$(cat /proc/sys/kernel/panic_on_warn)"
[ -r /sys/kernel/debug/sched/preempt ] && echo "preempt: $(cat /sys/kernel/debug/sched/preempt)"
# The config of the running kernel (IKCONFIG_PROC), not of a file beside it.
cfg=$(zcat /proc/config.gz 2>/dev/null) || { fail "no /proc/config.gz"; cfg=""; }
grep -E '^CONFIG_(PROVE_LOCKING|DEBUG_LOCKDEP|DEBUG_ATOMIC_SLEEP|DEBUG_PREEMPT|KASAN(_[A-Z]+)?|UBSAN(_[A-Z_]+)?|DEBUG_KMEMLEAK(_[A-Z_]+)?|DEBUG_OBJECTS(_[A-Z_]+)?|DEBUG_LIST|DEBUG_VM|PREEMPT(_[A-Z]+)?)=' <<<"$cfg" |
	tr '\n' ' ' | fold -s -w 100 | sed 's/^/config: /'
echo
for o in PROVE_LOCKING KASAN UBSAN DEBUG_KMEMLEAK DEBUG_ATOMIC_SLEEP DEBUG_OBJECTS; do
	grep -qx "CONFIG_$o=y" <<<"$cfg" || fail "CONFIG_$o is not set in this kernel"
done
# lockdep turns itself off after its first report (or on overflow).
if [ -r /proc/lockdep_stats ]; then
	dl=$(awk '/debug_locks:/ { print $2 }' /proc/lockdep_stats)
	echo "lockdep: debug_locks=$dl$([ "$dl" = 1 ] || echo ' (lockdep was turned off by a report above)')"
else
	fail "no /proc/lockdep_stats"
fi

# sroce's addresses before it goes: kmemleak prints the stacks of objects a
# module left behind as bare addresses once the module is unloaded.
text="" size="" base=""
if [ -d /sys/module/sroce ]; then
	text=$(cat /sys/module/sroce/sections/.text 2>/dev/null)
	read -r _ size _ _ _ base _ < <(grep '^sroce ' /proc/modules)
	echo "sroce: module at $base, size $size, .text at $text"
	modprobe -r sroce 2>&1 || rmmod sroce || fail "cannot unload sroce"
fi

k=/sys/kernel/debug/kmemleak
if [ ! -w $k ]; then
	fail "no $k (kmemleak off?)"
else
	# Twice, as the kernel's documentation advises: objects freed through RCU
	# or still in flight at the first scan are not reported by the second.
	sleep 2
	echo scan >$k
	sleep 5
	echo scan >$k
	leaks=$(cat $k)
	n=$(grep -c '^unreferenced object' <<<"$leaks")
	if [ "$n" -gt 0 ]; then
		fail "kmemleak: $n unreferenced object(s):"
		# Annotate bare addresses inside sroce's old range as sroce+offset.
		while IFS= read -r l; do
			# (Kernel addresses are negative as bash integers; order holds.)
			a=$(grep -oE ' 0x[0-9a-f]{16}$' <<<"$l")
			if [ -n "$a" ] && [ -n "$base" ] && [ -n "$text" ] &&
				[ $((a)) -ge $((base)) ] && [ $((a)) -lt $((base + size)) ]; then
				l="$l  (sroce+0x$(printf '%x' $((a - base))), .text+0x$(printf '%x' $((a - text))))"
			fi
			echo "  $l"
		done <<<"$leaks"
	else
		echo "kmemleak: no unreferenced objects"
	fi
fi
[ $fails -eq 0 ] && echo "debug epilogue: clean" || echo "debug epilogue: $fails problem(s)"
[ $fails -eq 0 ]
