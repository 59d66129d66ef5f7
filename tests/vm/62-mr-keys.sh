#!/usr/bin/env bash
# MR keys are neither disclosed nor predictable (Documentation/security.md):
# `rdma res show mr -dd` shows keys and iova only to CAP_NET_ADMIN, as
# ib_core's own attributes are (in a dump and for one MR), and two loads of
# the module give different keys for the same registrations.
. "$(dirname "$0")/lib.sh"

nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# load_and_hold: a fresh module and device, then sroce_mr keys (four MRs)
# holding them; prints their keys.
load_and_hold() {
	modprobe sroce && rdma link add sroce0 type sroce netdev veth0 || return 1
	rm -f /tmp/keys.ready
	"$PROGS/sroce_mr" keys sroce0 /tmp/keys.ready >/tmp/keys.out 2>&1 &
	holder=$!
	wait_until 20 test -e /tmp/keys.ready
}
release() {
	kill -USR1 "$holder"
	wait "$holder"
}

make_veth veth0 veth1
check "first load: four MRs registered and held" load_and_hold
keys1=$(grep '^keys' /tmp/keys.out)
log "  load 1: $keys1"
mrn=$(rdma res show mr dev sroce0 | awk '/comm sroce_mr/ { for (i = 1; i < NF; i++) if ($i == "mrn") print $(i + 1) }' | head -1)

rdma res show mr dev sroce0 -dd >/tmp/res.root 2>&1
nobody rdma res show mr dev sroce0 -dd >/tmp/res.user 2>&1
sed 's/^/    root: /' /tmp/res.root | grep sroce_mr | head -2
sed 's/^/    nobody: /' /tmp/res.user | grep sroce_mr | head -2
check "root sees ib_core's keys" grep -qE 'rkey 0x[0-9a-f]+ lkey 0x[0-9a-f]+ .*comm sroce_mr' /tmp/res.root
check "root sees the driver's keys and iova" grep -qE 'comm sroce_mr.*drv_lkey 0x[0-9a-f]+ drv_rkey 0x[0-9a-f]+ .*drv_iova 0x' /tmp/res.root
check "nobody sees the MRs (mrlen, driver details)" grep -qE 'mrlen 4096 .*comm sroce_mr .*drv_access' /tmp/res.user
check "nobody sees no key and no iova" sh -c "! grep -E 'rkey|lkey|iova' /tmp/res.user"
# One MR by number: ib_core's doit path, whose reply has no socket yet.
if [ -n "$mrn" ]; then
	rdma res show mr dev sroce0 mrn "$mrn" -dd >/tmp/res1.root 2>&1
	nobody rdma res show mr dev sroce0 mrn "$mrn" -dd >/tmp/res1.user 2>&1
	check "one MR: root sees drv_rkey and drv_iova" grep -qE 'drv_rkey 0x.*drv_iova 0x' /tmp/res1.root
	check "one MR: nobody sees it without keys" sh -c "grep -q 'drv_access' /tmp/res1.user && ! grep -qE 'rkey|lkey|iova' /tmp/res1.user"
else
	fail "no mrn for sroce_mr's MRs"
fi
release
check "the holder deregistered its MRs" test $? -eq 0
check "rmmod sroce" rmmod sroce

check "second load: the same four registrations" load_and_hold
keys2=$(grep '^keys' /tmp/keys.out)
log "  load 2: $keys2"
release
# Same indices (same order, next-fit from ib_mad's DMA MR), so only the
# key bytes can differ: four equal by chance has odds 2^-32.
idx() { for k in $1; do [ "$k" = keys ] || printf '%d ' $((k >> 8)); done; }
check "both loads gave four keys" test "$(echo "$keys1" | wc -w)" -eq 5 -a "$(echo "$keys2" | wc -w)" -eq 5
check "the same indices" test "$(idx "$keys1")" = "$(idx "$keys2")"
check "different keys" test "$keys1" != "$keys2"
check "rmmod sroce" rmmod sroce
ip link del veth0
finish
