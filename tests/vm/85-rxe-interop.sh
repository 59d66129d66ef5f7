#!/usr/bin/env bash
# Wire interop with Linux's rdma_rxe: rxe in init_net on one end of a veth
# pair, sroce in namespace h2 on the other, so every packet crosses the
# veth. Each program runs both ways: rxe serving a sroce client and sroce
# serving an rxe client.
# vm-timeout: 900
. "$(dirname "$0")/lib.sh"

check "rxe0 on veth-r, sroce2 on veth-s in h2, with their IPv4 GIDs" rxe_and_sroce 7
# With packet trains (off by default): rxe must take them, below.
echo Y >/sys/module/sroce/parameters/trains
modprobe rdma_ucm

# both NAME SERVER_CMD -- CLIENT_CMD, with @DEV@/@GID@/@PEER@ filled per side:
# first rxe serves and sroce connects, then the other way round.
port=20000
both() {
	local what=$1 srv=() cli=() dir
	shift
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	for dir in rxe-serves sroce-serves; do
		local sdev sgid sns cdev cgid cns peer spid rc1 rc2 l0
		if [ $dir = rxe-serves ]; then
			sdev=rxe0 sgid=$gr sns="" cdev=sroce2 cgid=$gs cns="ip netns exec h2" peer=10.0.7.1
		else
			sdev=sroce2 sgid=$gs sns="ip netns exec h2" cdev=rxe0 cgid=$gr cns="" peer=10.0.7.2
		fi
		port=$((port + 1))
		l0=$(cm_listeners)
		$sns timeout 300 $(subst "$sdev" "$sgid" "$peer" "${srv[@]}") >/tmp/i.server 2>&1 &
		spid=$!
		# Wait for a TCP listener on the test's port, or for an rdma_cm
		# one (servers without a TCP port).
		if [[ " ${srv[*]} " == *" -p @PORT@ "* && " ${srv[*]} " != *" -R "* ]]; then
			wait_until 30 sh -c "$sns ss -Hltn 'sport = :$port' | grep -q ."
		else
			wait_until 30 cm_listening "$l0"
		fi
		$cns timeout 300 $(subst "$cdev" "$cgid" "$peer" "${cli[@]}") >/tmp/i.client 2>&1
		rc2=$?
		wait $spid
		rc1=$?
		if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ]; then
			ok "$what ($dir): $(grep -E 'iters in|^ *[0-9]+ +[0-9]+ ' /tmp/i.client | tail -1 | tr -s ' ')"
		else
			fail "$what ($dir) (server $rc1, client $rc2)"
			sed 's/^/    server: /' /tmp/i.server | tail -6
			sed 's/^/    client: /' /tmp/i.client | tail -6
			# Where packets went: both devices' non-zero counters, both
			# ends' drops.
			rdma statistic show 2>/dev/null | awk '{ printf "    %s:", $2
				for (i = 3; i < NF; i += 2) if ($(i + 1) != 0) printf " %s %s", $i, $(i + 1)
				print "" }'
			{ ip -s link show veth-r; ip netns exec h2 ip -s link show veth-s; } | sed 's/^/    /'
		fi
	done
}
subst() { # subst DEV GID PEER WORDS...: prints WORDS with the fields filled
	local dev=$1 gid=$2 peer=$3 w
	shift 3
	for w in "$@"; do
		w=${w//@DEV@/$dev}
		w=${w//@GID@/$gid}
		w=${w//@PEER@/$peer}
		w=${w//@PORT@/$port}
		printf '%s\n' "$w"
	done
}

both "rc_pingpong 4 KiB" ibv_rc_pingpong -d @DEV@ -g @GID@ -p @PORT@ -n 50 -s 4096 --chk -- \
	ibv_rc_pingpong -d @DEV@ -g @GID@ -p @PORT@ -n 50 -s 4096 --chk @PEER@
both "rc_pingpong 100 KB" ibv_rc_pingpong -d @DEV@ -g @GID@ -p @PORT@ -n 10 -s 100000 --chk -- \
	ibv_rc_pingpong -d @DEV@ -g @GID@ -p @PORT@ -n 10 -s 100000 --chk @PEER@
both "uc_pingpong" ibv_uc_pingpong -d @DEV@ -g @GID@ -p @PORT@ -n 50 -s 1000 --chk -- \
	ibv_uc_pingpong -d @DEV@ -g @GID@ -p @PORT@ -n 50 -s 1000 --chk @PEER@
both "ud_pingpong" ibv_ud_pingpong -d @DEV@ -g @GID@ -p @PORT@ -n 50 -s 1000 --chk -- \
	ibv_ud_pingpong -d @DEV@ -g @GID@ -p @PORT@ -n 50 -s 1000 --chk @PEER@
both "srq_pingpong" ibv_srq_pingpong -d @DEV@ -g @GID@ -p @PORT@ -n 50 -q 2 -s 1000 --chk -- \
	ibv_srq_pingpong -d @DEV@ -g @GID@ -p @PORT@ -n 50 -q 2 -s 1000 --chk @PEER@
for t in ib_send_bw ib_write_bw ib_read_bw; do
	both "$t" $t -d @DEV@ -x @GID@ -F -u 18 -p @PORT@ -s 65536 -n 50 -- $t -d @DEV@ -x @GID@ -F -u 18 -p @PORT@ -s 65536 -n 50 @PEER@
done
both "ib_atomic_bw" ib_atomic_bw -d @DEV@ -x @GID@ -F -u 18 -p @PORT@ -n 200 -- ib_atomic_bw -d @DEV@ -x @GID@ -F -u 18 -p @PORT@ -n 200 @PEER@
both "ib_read_bw -R" ib_read_bw -d @DEV@ -F -u 18 -R -p @PORT@ -s 16384 -n 50 -- ib_read_bw -d @DEV@ -F -u 18 -R -p @PORT@ -s 16384 -n 50 @PEER@
both "rping -v" rping -s -a @PEER@ -C 200 -v -- rping -c -a @PEER@ -C 200 -v

# The extended verbs over the wire: one process holds a QP on each device
# (both are visible from init_net), posts through sroce's ibv_wr_* builders
# to rxe and checks every completion and byte. ATOMIC WRITE goes too where
# rxe has it (Linux 6.2 on): the 6.12 target (make test-slow). FLUSH does
# not: rxe (6.2 to 6.12 at least) computes a FLUSH's ICRC over its headers
# twice and drops a spec one (Documentation/extended-verbs.md, "FLUSH and
# rdma_rxe"); sroce_wr_ex posts it to a peer only when asked to.
# The other way only for ATOMIC WRITE, one WR per batch
# (sroce_atomic_write_peer): rdma-core 44's librxe builders mangle batches
# and gather lists (Documentation/extended-verbs.md, "Against rdma_rxe"), and
# it has no FLUSH builder; rxe's ibv_post_send to sroce is covered above.
want="not posted"
[ "$(printf '%s\n' 6.2 "$(uname -r)" | sort -V | head -1)" = 6.2 ] && want=posted
for t in rc uc; do
	out=/tmp/wrex.$t
	if "$PROGS/sroce_wr_ex" sroce2 $t 3000 85 rxe0 >"$out" 2>&1; then
		ok "ibv_wr_* $t, sroce2 posts to rxe0: $(grep -m1 -- '->' "$out" | sed 's/^ *//')"
	else
		fail "ibv_wr_* $t, sroce2 posts to rxe0"
		grep -E 'FAIL|failure' "$out" | head -6 | sed 's/^/    /'
	fi
done
check "  ATOMIC WRITE $want on RC ($(uname -r))" grep -q "ATOMIC WRITE $want" /tmp/wrex.rc
[ "$want" = posted ] && check "  ... and counted" grep -qE '^  wr_atomic_write: [1-9]' /tmp/wrex.rc
[ "$want" = posted ] && check "  FLUSH offered by both devices, not posted to rxe" \
	grep -q "FLUSH not posted (SROCE_WR_EX_PEER_FLUSH unset)" /tmp/wrex.rc
[ "$want" = posted ] && check "ATOMIC WRITE from rxe0 (librxe's wr_atomic_write) to sroce2, every completion and byte" \
	timeout 300 "$PROGS/sroce_atomic_write_peer" rxe0 sroce2 1000 85

# veth carries sroce's packet trains (train.c) whole to init_net, whose UDP
# layer segments them for rxe: the transfers above took them.
trains=$(sroce_counts sroce2 | awk '$1 == "tx_trains" { print $2 }')
check "rxe received sroce's packet trains (sroce2 tx_trains $trains)" test "${trains:-0}" -gt 0
check "sroce2: nothing left alive" wait_until 20 counts_zero sroce2
ip netns del h2
rdma link delete rxe0 2>/dev/null # gone with its veth already, usually
# rxe's UDP socket holds port 4791 in init_net until it unloads: a later
# test's sroce device there could not open its own.
check "rmmod rdma_rxe" wait_until 20 modprobe -r rdma_rxe
check "rmmod sroce" wait_until 20 rmmod sroce
finish
