# Helpers for the VM tests (sourced). Tests run as root inside a test VM
# (scripts/vm-run), one after another in the same boot; each leaves the
# system as it found it.
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PROGS=$TOP/build/progs
fails=0

log() { printf '%s\n' "$*"; }
ok() { log "  ok: $*"; }
fail() {
	log "  FAIL: $*"
	fails=$((fails + 1))
}

# check DESCRIPTION CMD...: the command must succeed.
check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else fail "$what (exit $?)"; fi
}

# check_prog DESCRIPTION CMD...: a test program that prints its own checks:
# its output, indented, then the program must have succeeded.
check_prog() {
	local what=$1 rc
	shift
	"$@" >/tmp/check_prog.out 2>&1
	rc=$?
	sed 's/^/    /' /tmp/check_prog.out
	check "$what" test $rc -eq 0
}

# check_fails DESCRIPTION PATTERN CMD...: the command must fail and print
# PATTERN (extended regex) on stdout or stderr.
check_fails() {
	local what=$1 pattern=$2 out rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && printf '%s' "$out" | grep -qE -- "$pattern"; then
		ok "$what (exit $rc: $(printf '%s' "$out" | head -1))"
	else
		fail "$what (exit $rc, output: $out)"
	fi
}

# A slower kernel (make test-debug, 5-15x slower) sets SROCE_VM_TIMEOUT_SCALE.
# timeout(1) and wait_until scale by themselves; other limits use these.
vm_scale=${SROCE_VM_TIMEOUT_SCALE:-1}
# scaled_secs N: N seconds, times the scale.
scaled_secs() { echo $(($1 * vm_scale)); }
# ack_timeout EXP: an IB ACK timeout exponent (4.096 us x 2^EXP), 8x longer
# (EXP + 3) on a slower kernel.
ack_timeout() { echo $((vm_scale > 1 ? $1 + 3 : $1)); }

# wait_until SECONDS CMD...: poll CMD every 0.2 s until it succeeds.
wait_until() {
	local limit=$1 i=0
	shift
	while ! "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -ge $((limit * 5 * vm_scale)) ] && return 1
		sleep 0.2
	done
}

# make_veth A B [NETNS_FOR_B]: a veth pair, MTU 9000, up, with IPv4 and
# IPv6 addresses on both ends (10.0.N.1/2, fd00:N::1/2).
veth_net=0
make_veth() {
	local a=$1 b=$2 ns=${3:-}
	veth_net=$((veth_net + 1))
	ip link add "$a" type veth peer name "$b" || return 1
	ip link set "$a" mtu 9000 up
	ip addr add "10.0.$veth_net.1/24" dev "$a"
	ip -6 addr add "fd00:$veth_net::1/64" dev "$a" nodad
	local inb=""
	if [ -n "$ns" ]; then
		ip link set "$b" netns "$ns"
		inb="ip netns exec $ns"
	fi
	$inb ip link set "$b" mtu 9000 up
	$inb ip addr add "10.0.$veth_net.2/24" dev "$b"
	$inb ip -6 addr add "fd00:$veth_net::2/64" dev "$b" nodad
}

rdma_has() { rdma link show 2>/dev/null | grep -q "$1"; }
module_loaded() { grep -q "^$1 " /proc/modules; }

# Removes every sroce device and the module (and the test module, which
# holds it), whatever a test left behind.
cleanup_sroce() {
	module_loaded sroce_selftest && rmmod sroce_selftest 2>/dev/null
	module_loaded sroce && rmmod sroce 2>/dev/null
	return 0
}

finish() {
	if [ "$fails" -eq 0 ]; then
		log "  all checks passed"
		exit 0
	fi
	log "  $fails check(s) failed"
	exit 1
}

# The core's live object counts of an ib device (debugfs), one "name N"
# per line.
sroce_counts() {
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	cat "/sys/kernel/debug/sroce/$1/counts"
}

# counts_zero IBDEV: nothing but the kernel's own objects is alive: ib_mad's
# QP1 (a GSI QP), its CQ and its PD's DMA MR; no SRQ, memory window, AH,
# pinned page or packet in flight.
counts_zero() {
	sroce_counts "$1" | awk '
		{ print }
		($1 == "qps" || $1 == "cqs" || $1 == "mrs") && $2 != 1 { bad = 1 }
		($1 == "srqs" || $1 == "mws" || $1 == "ahs" || $1 == "pinned_pages" || $1 ~ /pkts_in_flight$/ ||
		 $1 == "paths") && $2 != 0 { bad = 1 }
		END { exit bad }'
}

# counts_zero_but_cqs IBDEV: counts_zero, except that CQs may remain: the
# ones ib_core's shared CQ pool (ib_cq_pool_get: nvmet-rdma, the kernel's
# rtrs and srp targets) keeps until the device goes.
counts_zero_but_cqs() {
	sroce_counts "$1" | awk '
		($1 == "qps" || $1 == "mrs") && $2 != 1 { bad = 1 }
		($1 == "srqs" || $1 == "mws" || $1 == "ahs" || $1 == "pinned_pages" || $1 ~ /pkts_in_flight$/ ||
		 $1 == "paths") && $2 != 0 { bad = 1 }
		END { exit bad }'
}

# count_of IBDEV NAME: one count.
count_of() {
	sroce_counts "$1" | awk -v n="$2" '$1 == n { print $2 }'
}

# gid_index IBDEV IPV4: the GID table index of ::ffff:IPV4 on port 1.
gid_index() {
	local want f
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' $(echo "$2" | tr . ' '))
	for f in /sys/class/infiniband/"$1"/ports/1/gids/*; do
		if [ "$(cat "$f" 2>/dev/null)" = "$want" ]; then
			basename "$f"
			return 0
		fi
	done
	return 1
}

# netem_dev NS DEV [SPEC...]: a netem qdisc with SPEC on DEV's egress in
# namespace NS ("" for init_net), or none without SPEC. It spares QP1 (the
# connection manager's MADs, BTH dest QP 1 at IP offset 32): a client that
# disconnects and destroys its rdma_cm ID at once makes ib_cm cancel its
# DREQ's retransmissions, so one lost DREQ leaves the server waiting for
# DISCONNECTED forever, whatever the driver (an rping server hung so at
# loss 10%). The faults are for the RC data path.
netem_dev() {
	local ns=$1 dev=$2 tcn=()
	shift 2
	[ -n "$ns" ] && tcn=(-n "$ns")
	ip "${tcn[@]}" link set "$dev" up
	tc "${tcn[@]}" qdisc del dev "$dev" root 2>/dev/null
	[ $# -eq 0 ] && return 0
	tc "${tcn[@]}" qdisc add dev "$dev" root handle 1: prio bands 2 priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 &&
		tc "${tcn[@]}" qdisc add dev "$dev" parent 1:2 handle 20: netem "$@" &&
		tc "${tcn[@]}" filter add dev "$dev" parent 1: protocol ip prio 1 u32 \
			match ip protocol 17 0xff match ip dport 4791 0xffff \
			match u32 0x00000001 0x00ffffff at 32 flowid 1:1
}

# cm_listeners: how many rdma_cm IDs listen, in every namespace.
cm_listeners() { rdma res show cm_id 2>/dev/null | grep -c 'state LISTEN'; }
# cm_listening N: more than N do (a server started after cm_listeners said N).
cm_listening() { [ "$(cm_listeners)" -gt "$1" ]; }

# rxe_and_sroce NET: rdma_rxe's rxe0 on veth-r (init_net, 10.0.NET.1) and
# sroce2 on veth-s (namespace h2, 10.0.NET.2), the two ends of one veth
# pair with MTU 1500; sets gr and gs to each one's IPv4 GID index.
rxe_and_sroce() {
	local net=$1
	ip netns add h2 && ip link add veth-r type veth peer name veth-s netns h2 || return 1
	ip link set lo up
	ip link set veth-r mtu 1500 up
	ip addr add "10.0.$net.1/24" dev veth-r
	ip -n h2 link set lo up
	ip -n h2 link set veth-s mtu 1500 up
	ip -n h2 addr add "10.0.$net.2/24" dev veth-s
	modprobe crc32_generic 2>/dev/null # rxe's ICRC under TCG (FACTS.md)
	modprobe rdma_rxe && modprobe sroce || return 1
	rdma link add rxe0 type rxe netdev veth-r &&
		ip netns exec h2 rdma link add sroce2 type sroce netdev veth-s || return 1
	wait_until 10 gid_index rxe0 "10.0.$net.1" && wait_until 10 gid_index sroce2 "10.0.$net.2" || return 1
	gr=$(gid_index rxe0 "10.0.$net.1")
	gs=$(gid_index sroce2 "10.0.$net.2")
}

# sroce_on_hosts NET: a sroce device on each veth of two_hosts NET (sroce1
# in h1, sroce2 in h2); sets g1 and g2 to the GID index of each one's IPv4
# address.
sroce_on_hosts() {
	local net=$1
	ip netns exec h1 rdma link add sroce1 type sroce netdev veth-h1 &&
		ip netns exec h2 rdma link add sroce2 type sroce netdev veth-h2 || return 1
	wait_until 10 gid_index sroce1 "10.0.$net.1" && wait_until 10 gid_index sroce2 "10.0.$net.2" || return 1
	g1=$(gid_index sroce1 "10.0.$net.1")
	g2=$(gid_index sroce2 "10.0.$net.2")
}

# bridge_hosts BRIDGE NET [-6] NS...: namespaces NS... (the i-th at
# 10.0.NET.i/24, with -6 also fd00:NET::i/64), each with an eth0 whose peer
# v-NS is a port of a new bridge BRIDGE: hosts of one link that can also
# see (and forge) each other's traffic.
bridge_hosts() {
	local br=$1 net=$2 v6=0 i=0 n
	shift 2
	[ "${1:-}" = -6 ] && { v6=1; shift; }
	ip link add "$br" type bridge && ip link set "$br" up || return 1
	for n in "$@"; do
		i=$((i + 1))
		ip netns add "$n" || return 1
		ip link add "v-$n" type veth peer name eth0 netns "$n" || return 1
		ip link set "v-$n" master "$br" up
		ip -n "$n" link set lo up
		ip -n "$n" link set eth0 up
		ip -n "$n" addr add "10.0.$net.$i/24" dev eth0
		[ $v6 = 0 ] || ip -n "$n" -6 addr add "fd00:$net::$i/64" dev eth0 nodad
	done
}

# two_hosts NET MTU: namespaces h1 and h2 on a veth pair (veth-h1, veth-h2),
# 10.0.NET.1 and 10.0.NET.2, loopback up: the two-host topology of the
# transport tests.
two_hosts() {
	local net=$1 mtu=$2 h
	ip netns add h1 && ip netns add h2 || return 1
	ip link add veth-h1 netns h1 type veth peer name veth-h2 netns h2 || return 1
	for h in 1 2; do
		ip -n h$h link set lo up
		ip -n h$h link set veth-h$h mtu "$mtu" up
		ip -n h$h addr add "10.0.$net.$h/24" dev veth-h$h
	done
}

# end_two_hosts: the end of a two_hosts test with sroce1 and sroce2
# (sroce_on_hosts): nothing left alive on either, the namespaces gone and
# the devices with them, the module unloaded.
end_two_hosts() {
	check "h1: nothing left alive" wait_until 20 counts_zero sroce1
	check "h2: nothing left alive" wait_until 20 counts_zero sroce2
	ip netns del h1
	ip netns del h2
	check "devices gone with their namespaces" wait_until 20 sh -c '! rdma link show | grep -q sroce'
	check "rmmod sroce" wait_until 20 rmmod sroce
}

# host_pair NAME SERVER_CMD -- CLIENT_CMD: server in h1, client in h2 (of
# two_hosts); both exit 0 within 300 s. Output in /tmp/t.server, /tmp/t.client.
# Uses $port (a server's TCP port, or none for rdma_cm servers).
host_pair() {
	local what=$1 spid rc1 rc2 srv=() cli=() l0
	shift
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	l0=$(cm_listeners)
	ip netns exec h1 timeout 300 "${srv[@]}" >/tmp/t.server 2>&1 &
	spid=$!
	# Servers that take their port from -p listen on TCP there first; the
	# rest listen with rdma_cm.
	if [[ " ${srv[*]} " == *" -p $port "* && " ${srv[*]} " != *" -R "* ]]; then
		wait_until 30 sh -c "ip netns exec h1 ss -Hltn 'sport = :$port' | grep -q ."
	else
		wait_until 30 cm_listening "$l0"
	fi
	ip netns exec h2 timeout 300 "${cli[@]}" >/tmp/t.client 2>&1
	rc2=$?
	wait $spid
	rc1=$?
	if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ]; then
		ok "$what: $(grep -E 'iters in|^ *[0-9]+ +[0-9]+ ' /tmp/t.client | tail -1 | tr -s ' ')"
	else
		fail "$what (server $rc1, client $rc2)"
		sed 's/^/    server: /' /tmp/t.server | tail -6
		sed 's/^/    client: /' /tmp/t.client | tail -6
	fi
}

# host_perftest NET NAME TOOL ARGS: a perftest TOOL between sroce1 (the
# server, h1 at 10.0.NET.1) and sroce2 (of two_hosts and sroce_on_hosts), on
# the next $port, with an ACK timeout of 18 (ack_timeout: longer on the
# debug kernel).
host_perftest() {
	local net=$1 what=$2 tool=$3 u
	u=$(ack_timeout 18)
	shift 3
	port=$((port + 1))
	host_pair "$what" "$tool" -d sroce1 -x "$g1" -F -u "$u" -p $port "$@" -- \
		"$tool" -d sroce2 -x "$g2" -F -u "$u" -p $port "$@" "10.0.$net.1"
}

# link_stat IBDEV NAME: one of the device's counters (rdma statistic).
link_stat() { rdma statistic show link "$1"/1 | grep -o "$2 [0-9]*" | cut -d' ' -f2; }

# capture_start NS IFACE FILE: sroce-dump writes what IFACE in NS carries
# to FILE (its messages to FILE.err), as $capture_pid; fails unless it runs.
capture_start() {
	ip netns exec "$1" "$TOP/build/user/sroce-dump" -i "$2" -w "$3" 2>"$3.err" &
	capture_pid=$!
	sleep 1
	kill -0 $capture_pid
}
# capture_stop: ends it (the file complete once this returns).
capture_stop() {
	kill -INT $capture_pid
	wait $capture_pid
}

# reload_sroce NET PARAMS...: sroce1 and sroce2 (sroce_on_hosts NET)
# deleted, the module unloaded, loaded again with PARAMS, the devices made
# again.
reload_sroce() {
	local net=$1
	shift
	check "rdma link delete, rmmod" sh -c 'ip netns exec h1 rdma link delete sroce1 &&
		ip netns exec h2 rdma link delete sroce2 && rmmod sroce'
	check "modprobe sroce $*" modprobe -C /dev/null sroce "$@"
	check "sroce1 in h1, sroce2 in h2" sroce_on_hosts "$net"
}

# host_integrity NET NAME ARGS: the integrity program (every byte checked)
# with its server in h1 (10.0.NET.1, rdma_cm port 19699) and its client in
# h2, ARGS the client's (-n, -m, -S); both must pass.
host_integrity() {
	local net=$1 what=$2 l0 ipid
	shift 2
	l0=$(cm_listeners)
	ip netns exec h1 timeout 300 "$PROGS/sroce_integrity" -s -a "10.0.$net.1" -p 19699 >/tmp/i.srv 2>&1 &
	ipid=$!
	check "integrity server listens" wait_until 20 cm_listening "$l0"
	check "$what" ip netns exec h2 timeout 300 "$PROGS/sroce_integrity" -c -a "10.0.$net.1" -p 19699 "$@"
	wait $ipid
	check "integrity server exit 0" test $? -eq 0
}

# host_pp NAME PROG ARGS: an rdma-core ping-pong with data checks between
# sroce1 and sroce2 (two_hosts 8 and sroce_on_hosts 8: $g1, $g2), on the
# next $port.
host_pp() {
	local what=$1 prog=$2
	shift 2
	port=$((port + 1))
	host_pair "$what" "$prog" -d sroce1 -g "$g1" -p $port --chk "$@" -- \
		"$prog" -d sroce2 -g "$g2" -p $port --chk "$@" 10.0.8.1
}

# ---- NVMe over Fabrics (93-nvmeof, pair 20-nvmeof-wire) ----------------------
# nvmet_up NQN ADDR MB: the kernel's nvmet-rdma target in init_net (its
# rdma_cm users live there), configured through configfs: subsystem NQN open
# to any host, one namespace on a memory-backed null_blk of MB MiB, an RDMA
# port on ADDR:4420. nvmetcli is not packaged (FACTS.md).
nvmet_cfg=/sys/kernel/config/nvmet
nvmet_up() {
	local nqn=$1 addr=$2 mb=$3 s=$nvmet_cfg/subsystems/$1 p=$nvmet_cfg/ports/1
	modprobe null_blk nr_devices=1 gb=$(((mb + 1023) / 1024)) memory_backed=1 bs=512 &&
		modprobe nvmet-rdma || return 1
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	mkdir "$s" && echo 1 >"$s/attr_allow_any_host" &&
		mkdir "$s/namespaces/1" && echo -n /dev/nullb0 >"$s/namespaces/1/device_path" &&
		echo 1 >"$s/namespaces/1/enable" &&
		mkdir "$p" && echo rdma >"$p/addr_trtype" && echo ipv4 >"$p/addr_adrfam" &&
		echo "$addr" >"$p/addr_traddr" && echo 4420 >"$p/addr_trsvcid" &&
		ln -s "$s" "$p/subsystems/$nqn"
}
# nvmet_down NQN: the configfs objects in reverse, then the modules.
nvmet_down() {
	local nqn=$1 s=$nvmet_cfg/subsystems/$1 p=$nvmet_cfg/ports/1
	rm "$p/subsystems/$nqn" && rmdir "$p" && echo 0 >"$s/namespaces/1/enable" &&
		rmdir "$s/namespaces/1" && rmdir "$s" && modprobe -r nvmet-rdma nvmet && modprobe -r null_blk
}
# nvme_ctrl NQN: the name of the RDMA controller connected to subsystem NQN.
nvme_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$1" ] && [ "$(cat "$c/transport")" = rdma ] &&
			{ echo "${c##*/}"; return 0; }
	done
	return 1
}
nvme_no_ctrl() { ! nvme_ctrl "$1"; }
# nvme_ns_dev NQN: the block device of the connected subsystem NQN's
# namespace. Its device link is the controller, or with native multipath
# the subsystem; both name the NQN. (nvmeXcYnZ, a multipath head's hidden
# path, has no node in /dev.)
nvme_ns_dev() {
	local b
	for b in /sys/block/nvme*; do
		[ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$1" ] && [ -b "/dev/${b##*/}" ] &&
			{ echo "/dev/${b##*/}"; return 0; }
	done
	return 1
}
# nvme_fio NAME DEV MB RW BS DEPTH: fio writes MB MiB with a crc32c in every
# block, then reads it all back and verifies it (output in /tmp/fio.NAME).
nvme_fio() {
	fio --name="$1" --filename="$2" --direct=1 --ioengine=libaio --rw="$4" --bs="$5" --iodepth="$6" \
		--size="$3M" --verify=crc32c --do_verify=1 --verify_fatal=1 --output="/tmp/fio.$1" >/dev/null 2>&1 &&
		! grep -q 'verify: bad' "/tmp/fio.$1"
}
# nvme_fio_rates NAME: fio's READ and WRITE summary lines, indented.
nvme_fio_rates() { grep -E '^ +(WRITE|READ):' "/tmp/fio.$1" | sed 's/^ */    /'; }
