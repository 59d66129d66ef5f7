#!/usr/bin/env bash
# Checks the freestanding core objects (default: the given directory's *.o):
#  - no global constructors (.init_array/.ctors): they only run on kernels
#    with CONFIG_CONSTRUCTORS, so the core must not have any;
#  - no undefined symbol outside env.h, except what the compiler itself emits:
#    memcpy/memset/memmove and the retpoline/return thunks that the kernel
#    flags -mindirect-branch=thunk-extern and -mfunction-return=thunk-extern
#    make it call.
#  - built for a sanitizing kernel (--sanitized: make test-debug's KASAN and
#    UBSAN kernel), the sanitizers' __asan_*/__ubsan_* calls too.
# Usage: check-core-objects.sh [--sanitized] DIR | FILE.o...
set -u
sanitizer=
if [ "${1:-}" = --sanitized ]; then
	sanitizer='|__asan_[a-z0-9_]+|__ubsan_handle_[a-z0-9_]+'
	shift
fi
if [ $# -eq 1 ] && [ -d "$1" ]; then
	set -- "$1"/*.o
fi
[ -e "$1" ] || { echo "check-core-objects: no objects given" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for o in "$@"; do
	if objdump -h "$o" | grep -qE '\.init_array|\.ctors'; then
		echo "check-core-objects: $o has global constructors" >&2
		fail=1
	fi
done
# Link the objects together so references between core files resolve.
ld -r -o "$tmp/core.o" "$@" || exit 2
allowed='^(sroce_env_[a-z0-9_]+|memcpy|memset|memmove|__x86_return_thunk|__x86_indirect_thunk_[a-z0-9]+'"$sanitizer"')$'
bad=$(nm -u "$tmp/core.o" | awk '{print $2}' | grep -vE "$allowed")
if [ -n "$bad" ]; then
	echo "check-core-objects: symbols outside env.h:" >&2
	echo "$bad" | sed 's/^/  /' >&2
	fail=1
fi
[ $fail -eq 0 ] && echo "check-core-objects: $# objects clean (no constructors, only env.h symbols${sanitizer:+ and sanitizer calls})"
exit $fail
