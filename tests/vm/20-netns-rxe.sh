#!/usr/bin/env bash
# Namespaces: rdma_rxe holds UDP 4791 in init_net on one veth while a sroce
# device lives in a second network namespace. sroce opens its socket only
# there, and only while it has a device there.
. "$(dirname "$0")/lib.sh"

# rxe's ICRC needs a crc32 implementation that works under TCG.
modprobe crc32_generic 2>/dev/null
check "modprobe rdma_rxe" modprobe rdma_rxe
ip netns add h2
make_veth vethA vethB h2
check "rxe0 on vethA in init_net" rdma link add rxe0 type rxe netdev vethA
check "rxe holds UDP 4791 in init_net" sh -c 'ss -Huln | grep -q ":4791 "'
check "no 4791 socket in h2 before sroce" sh -c '! ip netns exec h2 ss -Huln | grep -q ":4791 "'

check "modprobe sroce" modprobe sroce
check "sroce1 on vethB inside h2" ip netns exec h2 rdma link add sroce1 type sroce netdev vethB
check "sroce opened UDP 4791 in h2" sh -c 'ip netns exec h2 ss -Huln | grep -q ":4791 "'
check "rdma link show in h2 lists sroce1 on vethB" sh -c 'ip netns exec h2 rdma link show | grep -qE "sroce1/1 .*netdev vethB"'
check "rxe0 still holds init_net's 4791" sh -c 'ss -Huln | grep -q ":4791 "'

info() { ip netns exec h2 ibv_devinfo -v -d sroce1 2>&1; }
check "sroce1 GID for vethB's IPv4" wait_until 10 sh -c "$(declare -f info); info | grep -q 'GID.*::ffff:10.0.1.2'"
check "sroce1 GID for vethB's IPv6" wait_until 10 sh -c "$(declare -f info); info | grep -q 'GID.*fd00:1::2'"
check "sroce1 PORT_ACTIVE, active_mtu 4096" sh -c "$(declare -f info); info | grep -q 'state:.*PORT_ACTIVE' && info | grep -q 'active_mtu:.*4096'"
check "context on sroce1 from inside h2" ip netns exec h2 "$PROGS/sroce_ctx" check sroce1
check "rxe0 works through librxe beside it" sh -c 'ibv_devinfo -d rxe0 | grep -q PORT_ACTIVE'
check "srocedv refuses an rxe context (EOPNOTSUPP)" "$PROGS/sroce_ctx" notsroce rxe0

# In init_net, 4791 is rxe's: a sroce device there must fail cleanly.
make_veth vethC vethD
check_fails "sroce on a netdev where rxe owns 4791 is refused" "in use|Address" \
	rdma link add sroce2 type sroce netdev vethC
check "nothing half-created" sh -c '! rdma link show | grep -q sroce2'
ip link del vethC

check "rdma link delete sroce1 from inside h2" ip netns exec h2 rdma link delete sroce1
check "the last device closed h2's 4791 socket" sh -c '! ip netns exec h2 ss -Huln | grep -q ":4791 "'
check "re-add sroce1 in h2" ip netns exec h2 rdma link add sroce1 type sroce netdev vethB
check "rdma link delete rxe0" rdma link delete rxe0
# Deleting the namespace destroys vethB and so sroce1, and closes the socket.
ip netns del h2
check "sroce1 removed with its namespace" wait_until 10 sh -c '! rdma link show | grep -q sroce1'
check "rmmod sroce" rmmod sroce
rmmod rdma_rxe 2>/dev/null
finish
