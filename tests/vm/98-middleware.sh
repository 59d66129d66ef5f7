#!/usr/bin/env bash
# The RDMA middleware people run, unmodified, from Debian's packages, over
# sroce between two namespaces (Documentation/install.md, "Middleware"):
# - UCX (ucx-utils): ucx_info -d lists the device's transports;
#   ucx_perftest's tag_bw and ucp_put_bw on rc_verbs and on ud_verbs; and
#   io_demo's reads and writes with its data and transaction checks (-q);
# - Open MPI (openmpi-bin), its UCX PML forced, UCX limited to rc_verbs:
#   tests/mpi/sroce_mpi_check, a ring from 8 bytes to 4 MiB and an
#   allreduce, every byte checked, one rank per namespace;
# - libfabric (libfabric-bin): fi_info -p verbs lists the device, and
#   fi_pingpong runs with its data checks (-c) on msg and rdm endpoints
#   (rdm: rxm over verbs, with FI_UNIVERSE_SIZE=128, see below).
# Each run must also move packets through the sroce devices: a program
# that fell back to TCP fails.
# vm-timeout: 1800
. "$(dirname "$0")/lib.sh"

two_hosts 8 1500
check "modprobe sroce" modprobe sroce
check "a sroce device in each namespace" sroce_on_hosts 8
ucx1=(env UCX_NET_DEVICES=sroce1:1)
ucx2=(env UCX_NET_DEVICES=sroce2:1)
port=18600

# on_sroce NAME CMD...: CMD succeeds and sroce2 sent at least 100 packets.
tx0=0
sroce_moved() { [ $(($(count_of sroce2 tx_pkts) - tx0)) -ge 100 ]; }

# tcp_pair NAME TCPPORT SERVER... -- CLIENT...: the server in h1 (listening
# on TCP TCPPORT for its control channel), then the client in h2; both exit
# 0 (a server that serves forever is stopped once the client is done:
# ONE_SHOT=0), and the devices carried the traffic.
tcp_pair() {
	local what=$1 tport=$2 srv=() cli=() spid rc1=0 rc2
	shift 2
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	tx0=$(count_of sroce2 tx_pkts)
	ip netns exec h1 timeout 300 "${srv[@]}" >/tmp/t.server 2>&1 &
	spid=$!
	wait_until 60 sh -c "ip netns exec h1 ss -Hltn 'sport = :$tport' | grep -q ." ||
		log "    (the server is not listening on $tport)"
	ip netns exec h2 timeout 300 "${cli[@]}" >/tmp/t.client 2>&1
	rc2=$?
	if [ "${ONE_SHOT:-1}" = 1 ]; then
		wait $spid
		rc1=$?
	else
		kill $spid 2>/dev/null
		wait $spid 2>/dev/null
	fi
	if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && sroce_moved; then
		ok "$what ($(($(count_of sroce2 tx_pkts) - tx0)) packets from sroce2)"
	else
		fail "$what (server $rc1, client $rc2, $(($(count_of sroce2 tx_pkts) - tx0)) packets from sroce2)"
		sed 's/^/    server: /' /tmp/t.server | tail -8
		sed 's/^/    client: /' /tmp/t.client | tail -8
	fi
}

# ---- UCX ----------------------------------------------------------------
ip netns exec h1 "${ucx1[@]}" ucx_info -d >/tmp/ucx_info 2>&1
for tl in rc_verbs ud_verbs; do
	check "ucx_info -d: $tl on sroce1:1" awk -v tl="$tl" '
		/Transport:/ { t = $NF } /Device:/ && t == tl && $NF == "sroce1:1" { f = 1 } END { exit !f }' /tmp/ucx_info
done
# rc_v is rc_verbs for the data with ud_verbs beside it for the wireup
# (rc_verbs alone has no way to connect); ud_v is ud_verbs alone.
for tl in rc_v ud_v; do
	for t in tag_bw ucp_put_bw; do
		port=$((port + 1))
		tcp_pair "ucx_perftest -t $t over $tl" $port \
			"${ucx1[@]}" UCX_TLS=$tl,self ucx_perftest -p $port -- \
			"${ucx2[@]}" UCX_TLS=$tl,self ucx_perftest 10.0.8.1 -p $port -t $t -s 65536 -n 2000 -w 100
		grep -E '^Final:|^ +[0-9]+ +' /tmp/t.client | tail -1 | sed 's/^/    /'
	done
done
port=$((port + 1))
ONE_SHOT=0 tcp_pair "io_demo: reads and writes of 1 B-64 KiB over rc_verbs, data and transactions checked (-q)" $port \
	"${ucx1[@]}" UCX_TLS=rc_v,self io_demo -p $port -q -d 1:65536 -- \
	"${ucx2[@]}" UCX_TLS=rc_v,self io_demo -p $port -q -o read,write -d 1:65536 -i 2000 10.0.8.1
# io_demo -q checks every byte and transaction; the test takes the
# client's exit status above as its verdict. That a failed check makes that
# status non-zero is read from io_demo's usage, not yet seen happen: a
# corrupting run would prove it.

# ---- Open MPI (UCX PML) -------------------------------------------------
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tx0=$(count_of sroce2 tx_pkts)
ip netns exec h1 timeout 600 mpirun --host h1,h2 -np 2 \
	--mca plm_rsh_agent "$TOP/tests/vm/netns-rsh" \
	--mca pml ucx --mca pml_base_verbose 10 --mca osc ucx --mca btl '^vader,tcp,openib,uct' \
	-x UCX_TLS=rc_v,self "$PROGS/sroce_mpi_check" 10 >/tmp/mpi.out 2>&1
rc=$?
grep -E '^(ok|FAIL):|^rank ' /tmp/mpi.out | sed 's/^/    /'
check "mpirun: 2 ranks, one in each namespace, all checks passed" sh -c \
	"[ $rc -eq 0 ] && [ \$(grep -c '^ok:' /tmp/mpi.out) -eq 6 ] && ! grep -q '^FAIL' /tmp/mpi.out"
check "mpirun: the UCX PML was selected on both ranks" \
	test "$(grep -c 'select: component ucx selected' /tmp/mpi.out)" -ge 2
check "mpirun: the job's data went through sroce2 ($(($(count_of sroce2 tx_pkts) - tx0)) packets)" sroce_moved
[ $rc -eq 0 ] || tail -20 /tmp/mpi.out | sed 's/^/    mpi: /'

# ---- libfabric (verbs provider) -----------------------------------------
ip netns exec h1 fi_info -p verbs >/tmp/fi_info 2>&1
check "fi_info -p verbs lists sroce1" grep -qE 'domain: sroce1$' /tmp/fi_info
# rxm over verbs sizes its MSG CQ (128 + 128) x FI_UNIVERSE_SIZE entries,
# 262,144 by default, and libfabric 1.17 does not clamp it to max_cqe: the
# device's 65,535 refuses it with EINVAL, as rxe's 32,767 does (mlx5 has
# 4M). FI_UNIVERSE_SIZE=128 makes it 32,768 (Documentation/install.md).
for ep in msg rdm; do
	prov=verbs fienv=()
	[ $ep = rdm ] && prov='verbs;ofi_rxm' fienv=(FI_UNIVERSE_SIZE=128)
	port=$((port + 1))
	tcp_pair "fi_pingpong -p '$prov' -e $ep, 1 B-1 MiB, data checked (-c)" $port \
		env "${fienv[@]}" fi_pingpong -p "$prov" -e $ep -d sroce1 -c -I 20 -B $port -- \
		env "${fienv[@]}" fi_pingpong -p "$prov" -e $ep -d sroce2 -c -I 20 -P $port 10.0.8.1
	grep -cE '^[0-9]+' /tmp/t.client | sed 's/^/    sizes: /'
done

end_two_hosts
finish
