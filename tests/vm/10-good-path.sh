#!/usr/bin/env bash
# Good path: load, add a device on a 9000-MTU veth, see it through rdma and
# libibverbs (port, MTU, GIDs), use a context, follow link state, delete,
# unload. Also: autoload by `rdma link add` alone.
. "$(dirname "$0")/lib.sh"

make_veth veth0 veth1
check "modprobe sroce" modprobe sroce
check "rdma link add sroce0 on veth0" rdma link add sroce0 type sroce netdev veth0
check "rdma link show lists sroce0 on veth0" sh -c 'rdma link show | grep -E "sroce0/1 .*state ACTIVE.*netdev veth0"'
check "ibv_devices lists sroce0" sh -c 'ibv_devices | grep -q sroce0'
check "sysfs parent is veth0" grep -qx veth0 /sys/class/infiniband/sroce0/parent

# ib_core fills the GID table from the netdev addresses asynchronously.
info() { ibv_devinfo -v -d sroce0 2>&1; }
has_gid() { info | grep -q "GID\[.*\]:.*$1"; }
check "GID for IPv4 10.0.1.1" wait_until 10 has_gid '::ffff:10.0.1.1'
check "GID for IPv6 fd00:1::1" wait_until 10 has_gid 'fd00:1::1'
out=$(info)
log "$out" | sed -n '1,40p'
check "port is PORT_ACTIVE" sh -c "printf '%s' \"\$1\" | grep -q 'state:.*PORT_ACTIVE'" _ "$out"
check "active_mtu 4096 on a 9000-MTU veth" sh -c "printf '%s' \"\$1\" | grep -q 'active_mtu:.*4096'" _ "$out"
check "link layer Ethernet" sh -c "printf '%s' \"\$1\" | grep -q 'link_layer:.*Ethernet'" _ "$out"
check "transport InfiniBand" sh -c "printf '%s' \"\$1\" | grep -q 'transport:.*InfiniBand'" _ "$out"
check "context, PDs and srocedv through the provider" "$PROGS/sroce_ctx" check sroce0

# Node GUID: the modified EUI-64 of the MAC (flip bit 1 of the first byte).
mac=$(cat /sys/class/net/veth0/address)
IFS=: read -r m0 m1 m2 m3 m4 m5 <<<"$mac"
guid=$(printf '%02x%s:%sff:fe%s:%s%s' $((0x$m0 ^ 2)) "$m1" "$m2" "$m3" "$m4" "$m5")
check "node_guid $guid derived from MAC $mac" sh -c "ibv_devinfo -d sroce0 | grep -q 'node_guid:.*$guid'"

# Port events reach user space when the netdev goes down and up.
rm -f /tmp/ev.ready
"$PROGS/sroce_ctx" events sroce0 /tmp/ev.ready &
evpid=$!
wait_until 20 test -e /tmp/ev.ready
ip link set veth0 down
sleep 0.5
ip link set veth0 up
wait "$evpid"
check "async PORT_ERR and PORT_ACTIVE events" test $? -eq 0
check "port ACTIVE again" wait_until 5 sh -c 'ibv_devinfo -d sroce0 | grep -q "state:.*PORT_ACTIVE"'

# Link state follows the netdev; MTU changes show in active_mtu.
ip link set veth0 mtu 1500
check "active_mtu 1024 on a 1500-MTU veth" wait_until 5 sh -c 'ibv_devinfo -d sroce0 | grep -q "active_mtu:.*1024"'
ip link set veth0 down
check "port goes DOWN with the netdev" wait_until 5 sh -c 'ibv_devinfo -d sroce0 | grep -q "state:.*PORT_DOWN"'
ip link set veth0 mtu 9000 up
check "port comes back ACTIVE" wait_until 5 sh -c 'ibv_devinfo -d sroce0 | grep -q "state:.*PORT_ACTIVE"'

check "rdma link delete sroce0" rdma link delete sroce0
check "sroce0 is gone" sh -c '! rdma link show | grep -q sroce0'
check "rmmod sroce" rmmod sroce
check "module unloaded" sh -c '! grep -q "^sroce " /proc/modules'

# Autoload: `rdma link add ... type sroce` loads the module by its alias.
check "rdma link add autoloads sroce" rdma link add sroce0 type sroce netdev veth0
check "module loaded by alias" module_loaded sroce
check "rmmod with a device attached removes it" rmmod sroce
check "no device left after rmmod" sh -c '! rdma link show | grep -q sroce0'

# Module parameter ipv6=0: only the IPv4 socket is opened.
modprobe sroce ipv6=0
rdma link add sroce0 type sroce netdev veth0
check "ipv6=0 opens 0.0.0.0:4791 only" sh -c 'ss -Huln | grep -q "0.0.0.0:4791 " && ! ss -Huln | grep -q "\[::\]:4791 "'
rmmod sroce
modprobe sroce
rdma link add sroce0 type sroce netdev veth0
check "default ipv6=Y opens [::]:4791 too" sh -c 'ss -Huln | grep -q "\[::\]:4791 "'
rmmod sroce

# Moving the netdev to another namespace unregisters it here: the device goes.
modprobe sroce
rdma link add sroce0 type sroce netdev veth0
ip netns add moved
ip link set veth0 netns moved
check "moving veth0 to another namespace removes sroce0" wait_until 10 sh -c '! rdma link show | grep -q sroce0'
check "rmmod" rmmod sroce
ip netns del moved
finish
