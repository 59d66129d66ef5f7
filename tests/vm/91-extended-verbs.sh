#!/usr/bin/env bash
# The extended verbs (Documentation/extended-verbs.md): the ibv_wr_*
# builders and the ibv_cq_ex readers with completion timestamps.
# - sroce_wr_ex on one device, RC, UC and UD: work requests posted only
#   through the builders (every opcode of the type; one SGE, SGE lists,
#   inline data and inline lists), completions read only through the
#   readers, every field, byte and timestamp checked. SROCE_WR_EX_N work
#   requests per QP type (default 20000; make test-vm-slow: 1000000). RC
#   includes FLUSH (srocedv_wr_flush) to ranges and whole MRs, after the
#   FLUSH caps and MR rights are checked (registered on 6.1 too).
# - the srocedv create path (sroce_dv_create): objects made by
#   srocedv_create_qp/cq/srq work (an RC SEND to a QP on an SRQ, a completion
#   event naming the CQ's context); unknown comp_mask bits are refused by the
#   provider (EOPNOTSUPP); a provider built to pass bit 63 on
#   (build/user/future-mask) gets EINVAL from the kernel.
# - CQ moderation (sroce_cq_moderation): the caps, EINVAL above them; with
#   cq_count 16 an event-driven consumer gets at most one event per 16
#   completions and every completion; a lone completion waits for the period.
# - ibv_rc_pingpong between two hosts with the new post API (-N), with
#   completion timestamps (-t) and both, --chk, at several sizes.
# vm-timeout: 1200
. "$(dirname "$0")/lib.sh"

n=${SROCE_WR_EX_N:-20000}
[ "${SROCE_WR_EX_PER_BUILDER:-}" = 1 ] && per_builder_x=10
modprobe sroce
make_veth veth0 veth1
rdma link add sroce0 type sroce netdev veth0
check "sroce0's IPv4 GID" wait_until 10 gid_index sroce0 10.0.1.1
# One QP type's run into /tmp/wr_ex.$t.out (its exit status in .rc).
wr_ex() {
	local t=$1 start=$(date +%s)
	# At least 500 WRs a second; N through each builder is up to ten times N.
	timeout $((n * ${per_builder_x:-1} / 500 + 300)) "$PROGS/sroce_wr_ex" sroce0 $t "$n" $((RANDOM + 1)) \
		>/tmp/wr_ex.$t.out 2>&1
	echo "$? $(($(date +%s) - start))" >/tmp/wr_ex.$t.rc
}
# SROCE_WR_EX_PARALLEL=1 (slow/91-extended-verbs-long): the three types at
# once, each on its own QPs of sroce0, so the VM's two CPUs both work.
if [ "${SROCE_WR_EX_PARALLEL:-}" = 1 ]; then
	for t in rc uc ud; do wr_ex $t & done
	wait
fi
for t in rc uc ud; do
	[ "${SROCE_WR_EX_PARALLEL:-}" = 1 ] || wr_ex $t
	read -r rc secs </tmp/wr_ex.$t.rc
	check "sroce_wr_ex $t: $n work requests through the builders and readers, all checked ($secs s)" \
		test "$rc" -eq 0
	grep -E '^  (wr_|srocedv_|FLUSH)|FAIL|^ok: (query|ibv_reg)' /tmp/wr_ex.$t.out | head -24 | sed 's/^/  /'
	[ $t = rc ] || continue
	# FLUSH (srocedv_wr_flush) goes among RC's opcodes, ranges and whole MRs.
	check "  FLUSH posted and checked on RC, ranges and whole MRs" \
		sh -c "grep -qE '^  srocedv_wr_flush: [1-9]' /tmp/wr_ex.rc.out && grep -qE '^  FLUSH of a whole MR: [1-9]' /tmp/wr_ex.rc.out"
done
# ATOMIC WRITE one WR per batch between two QPs of sroce0 (the program
# 85-rxe-interop runs from rxe to sroce on 6.2 and later).
check "sroce_atomic_write_peer sroce0 -> sroce0: 2000 ATOMIC WRITEs, every completion and byte" \
	timeout 300 "$PROGS/sroce_atomic_write_peer" sroce0 sroce0 2000 $((RANDOM + 1))
check "srocedv_create_qp/cq/srq: objects that work, unknown bits refused" \
	"$PROGS/sroce_dv_create" sroce0
# The future-mask provider, as 30-bad-input swaps in its mismatch provider:
# the program and libibverbs load the same copy.
drv=/etc/libibverbs.d/sroce.driver
cp "$drv" /tmp/sroce.driver.saved
echo "driver $TOP/build/user/future-mask/libsroce" >"$drv"
check "a comp_mask bit the kernel does not know reaches it and is refused (EINVAL)" \
	env LD_LIBRARY_PATH="$TOP/build/user/future-mask" "$PROGS/sroce_dv_create" sroce0 future
cp /tmp/sroce.driver.saved "$drv"
check_prog "CQ moderation: events fall with cq_count, the period bounds the wait" \
	"$PROGS/sroce_cq_moderation" sroce0 256
check "sroce0: nothing left alive" wait_until 20 counts_zero sroce0
rdma link delete sroce0
ip link del veth0

two_hosts 8 1500
modprobe rdma_ucm
check "sroce1 in h1, sroce2 in h2, with their IPv4 GIDs" sroce_on_hosts 8
port=19500
for size in 1 4096 10000; do
	host_pp "rc_pingpong -N (ibv_wr_*) $size B" ibv_rc_pingpong -n 50 -s $size -N
	host_pp "rc_pingpong -t (completion timestamps) $size B" ibv_rc_pingpong -n 50 -s $size -t
	host_pp "rc_pingpong -N -t $size B" ibv_rc_pingpong -n 50 -s $size -N -t
done
check "rc_pingpong -t read timestamps" grep -q 'Average receive completion clock cycles' /tmp/t.client
end_two_hosts
finish
