#!/usr/bin/env bash
# Interface families (seed 004; Documentation/srocedv.md, "Interface
# families"): sroce_families on RC, UC and UD between two QPs of one device,
# every work request through a family function (pending bursts and flush
# included), every receive through recv and recv_repost, every completion
# through poll_formatted with the CQ format changing through all 32; every
# completion, field, byte and timestamp order checked, and ibv_destroy_qp
# refused (EBUSY) while a table is held. SROCE_FAMILIES_N work requests per
# type (default 20000; make test-vm-slow: 1000000 per type). Then RC and
# UD again with B receiving through an SRQ and the SRQ family. Then the
# seed's own example program.
# vm-timeout: 1500
. "$(dirname "$0")/lib.sh"

n=${SROCE_FAMILIES_N:-20000}
make_veth veth0 veth1
modprobe sroce
rdma link add sroce0 type sroce netdev veth0
check "the IPv4 GID appears" wait_until 10 gid_index sroce0 10.0.1.1
# One QP type's run into /tmp/fam.$t$tag.out (its exit status and time in
# .rc); tag "srq": B receives through an SRQ and its family.
fam() {
	local t=$1 tag=${2:-} start=$(date +%s)
	# At least 200 WRs a second, N per function up to ten times N.
	SROCE_FAMILIES_SRQ=$([ "$tag" = srq ] && echo 1) \
		timeout $((n * ${per_function_x:-1} / 200 + 300)) "$PROGS/sroce_families" sroce0 $t "$n" $((RANDOM + 1)) \
		>/tmp/fam.$t$tag.out 2>&1
	echo "$? $(($(date +%s) - start))" >/tmp/fam.$t$tag.rc
}
[ "${SROCE_FAMILIES_PER_FUNCTION:-}" = 1 ] && per_function_x=10
# SROCE_FAMILIES_PARALLEL=1 (slow/96-families-long): the three types at
# once, so the VM's two CPUs both work.
if [ "${SROCE_FAMILIES_PARALLEL:-}" = 1 ]; then
	for t in rc uc ud; do fam $t & done
	wait
fi
for t in rc uc ud; do
	[ "${SROCE_FAMILIES_PARALLEL:-}" = 1 ] || fam $t
	read -r rc secs </tmp/fam.$t.rc
	check "sroce_families $t: $n work requests${per_function_x:+ per function} through the families, all checked ($secs s)" \
		test "$rc" -eq 0
	sed 's/^/  /' /tmp/fam.$t.out | head -24
done
# The SRQ family: RC and UD receiving through an SRQ, recv and recv_repost
# on it, ibv_destroy_srq refused (EBUSY) while its table is held. At most
# 20000 WRs each, also in the slow suite's long run.
srq_n=$((n < 20000 ? n : 20000))
for t in rc ud; do
	n=$srq_n SROCE_FAMILIES_PER_FUNCTION= per_function_x= fam $t srq
	read -r rc secs </tmp/fam.${t}srq.rc
	check "sroce_families $t, receiving through an SRQ and its family: $srq_n work requests, all checked ($secs s)" \
		sh -c "test $rc -eq 0 && grep -q '(SRQ family)' /tmp/fam.${t}srq.out"
	sed 's/^/  /' /tmp/fam.${t}srq.out | head -24
done
check "the seed's example program" "$PROGS/sroce_intf_example" sroce0
check "nothing left alive" wait_until 10 counts_zero sroce0
rdma link delete sroce0
ip link del veth0
check "rmmod" rmmod sroce
finish
