#!/usr/bin/env bash
# Builds kernel.cpp + provider.c with ThreadSanitizer into OUT: OUT/real from
# the tree, and one mutant per barrier helper with that helper made relaxed,
# named after it:
#   OUT/load_acquire, OUT/store_release               kmod/core/ktl/atomic.h
#   OUT/sroce_load_acquire, OUT/sroce_store_release   libuser/sroce.h
# Usage: build.sh OUT
set -eu
top=$(cd "$(dirname "$0")/../../.." && pwd)
here=$top/tests/build/ring_order
out=$1
tsan="-O1 -g -fsanitize=thread -Wall -Wextra -Werror -Wno-unused-parameter"
relaxed_load_acquire='s/__atomic_load_n(p, __ATOMIC_ACQUIRE)/__atomic_load_n(p, __ATOMIC_RELAXED)/'
relaxed_store_release='s/__atomic_store_n(p, v, __ATOMIC_RELEASE)/__atomic_store_n(p, v, __ATOMIC_RELAXED)/'

# mutant DIR FILE SED NAME: prints a copy of DIR with SED applied to FILE.
# Exactly one line must change, or the mutant would test nothing.
mutant() {
	local copy=$out/$4-src changed
	rm -rf "$copy"
	cp -r "$1" "$copy"
	sed -i "$3" "$copy/$2"
	changed=$(diff "$1/$2" "$copy/$2" | grep -c '^>' || true)
	[ "$changed" = 1 ] || { echo "mutant $4: '$3' changed $changed lines of $2, not 1" >&2; exit 1; }
	echo "$copy"
}
kernel() { # kernel CORE_DIR OBJ
	g++ -std=c++20 $tsan -I"$1" -I"$top/abi" -c -o "$2" "$here/kernel.cpp"
}
provider() { # provider LIBUSER_DIR OBJ_DIR
	local f
	mkdir -p "$2"
	# cq.c's destroy asks intf.c whether a family table is held: the
	# families come along, with the host tests' stand-in for sroce.c.
	for f in "$here/provider.c" "$1/ring.c" "$1/cq.c" "$1/sq.c" "$1/intf.c" "$1/intf_qp.c" \
		"$1/intf_cq.c" "$top/tests/host/provider/fake_context.c"; do
		gcc -std=gnu11 $tsan -I"$1" -I"$top/libuser/include" -I"$top/abi" -c \
			-o "$2/$(basename "$f" .c).o" "$f"
	done
}
link() { # link NAME KERNEL_OBJ PROVIDER_OBJ_DIR
	g++ -fsanitize=thread -o "$out/$1" "$2" "$3"/*.o -libverbs -lpthread
}

mkdir -p "$out"
kernel "$top/kmod/core" "$out/kernel.o"
provider "$top/libuser" "$out/provider-objs"
link real "$out/kernel.o" "$out/provider-objs"
for helper in load_acquire store_release; do
	sed=relaxed_$helper
	src=$(mutant "$top/kmod/core" ktl/atomic.h "${!sed}" "$helper")
	kernel "$src" "$out/kernel-$helper.o"
	link "$helper" "$out/kernel-$helper.o" "$out/provider-objs"
	src=$(mutant "$top/libuser" sroce.h "${!sed}" "sroce_$helper")
	provider "$src" "$out/provider-objs-$helper"
	link "sroce_$helper" "$out/kernel.o" "$out/provider-objs-$helper"
done
