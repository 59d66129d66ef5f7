#!/usr/bin/env bash
# A hostile program speaking raw uverbs: malformed context requests, an
# unwritable response buffer, and mmap requests that must be refused. The
# device stays usable and the kernel log stays clean.
. "$(dirname "$0")/lib.sh"

make_veth veth0 veth1
modprobe sroce
rdma link add sroce0 type sroce netdev veth0
# libibverbs has ib_core load ib_uverbs on demand; a raw program does it itself.
modprobe ib_uverbs
wait_until 10 sh -c 'grep -qx sroce0 /sys/class/infiniband_verbs/uverbs*/ibdev'
check "hostile uverbs requests each get their errno" "$PROGS/sroce_hostile" sroce0
check "the device still works through libibverbs" "$PROGS/sroce_ctx" check sroce0
check "rmmod" rmmod sroce
ip link del veth0
finish
