#!/usr/bin/env bash
# The provider's posting and polling cost through its three interfaces
# (tests/host/provider/bench_intf.c): ns per WR or completion from a timed
# run, and instructions per WR or completion counted by callgrind in each
# case's phase_* function alone (the fake kernel's side between rounds is
# not counted). Writes a TSV: name, per_round, ns, instructions, what.
#
#   scripts/bench/intf.sh BENCH_INTF_BINARY OUT.tsv
set -u
bin=$1 out=$2
command -v valgrind >/dev/null || { echo "bench-intf: valgrind is missing (scripts/setup.sh installs it)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" >"$tmp/ns.tsv" </dev/null || exit 1
printf 'name\tper_round\tns\tinstructions\twhat\n' >"$out"
tail -n +2 "$tmp/ns.tsv" | while IFS=$'\t' read -r name per_round ns what; do
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" --collect-atstart=no \
		--toggle-collect="phase_$name" "$bin" --case "$name" >"$tmp/case" 2>/dev/null </dev/null || exit 1
	read -r _ _ rounds <"$tmp/case"
	ir=$(sed -n 's/^totals: *//p; s/^summary: *//p' "$tmp/cg" | head -1)
	[ -n "$ir" ] && [ -n "$rounds" ] || { echo "bench-intf: no count for $name" >&2; exit 1; }
	printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$per_round" "$ns" \
		"$(awk -v ir="$ir" -v r="$rounds" -v p="$per_round" 'BEGIN { printf "%.1f", ir / (r * p) }')" "$what" >>"$out"
done
