#!/usr/bin/env bash
# NFS over RDMA on sroce: the kernel's nfsd (svcrdma, port 20049) in init_net
# on sroce1, exporting a tmpfs, and the kernel's NFS client (rpcrdma) in the
# namespace h2 on sroce2, mounting it with proto=rdma across the veth wire.
# A file of random bytes is copied there, the mount is dropped and made
# again (so nothing comes from the client's cache), and the copy read back
# is compared; then unmount, nfsd stopped, devices deleted, rmmod, a clean
# kernel log. The client registers its pages with REG_MR and the server
# answers with RDMA WRITEs and READs into them (fast_regs counted).
# NFS_RDMA_MB sets the file's size (default 256).
# vm-timeout: 900
. "$(dirname "$0")/lib.sh"

mb=${NFS_RDMA_MB:-$((vm_scale > 1 ? 32 : 256))}
ip netns add h2
ip link add veth-n1 type veth peer name veth-n2 netns h2
ip link set veth-n1 up
ip addr add 10.0.94.1/24 dev veth-n1
ip -n h2 link set lo up
ip -n h2 link set veth-n2 up
ip -n h2 addr add 10.0.94.2/24 dev veth-n2
modprobe sroce
check "sroce1 on veth-n1 (init_net)" rdma link add sroce1 type sroce netdev veth-n1
check "sroce2 on veth-n2 (h2)" ip netns exec h2 rdma link add sroce2 type sroce netdev veth-n2
check "sroce1's IPv4 GID" wait_until 10 gid_index sroce1 10.0.94.1
check "sroce2's IPv4 GID" wait_until 10 gid_index sroce2 10.0.94.2

# The server: a tmpfs export, the NFSv4 root itself (fsid=0): the guest's
# root is an overlayfs, which nfsd cannot serve as the pseudo root above it.
mkdir -p /srv/nfs94 /var/lib/nfs/v4recovery
mount -t tmpfs -o size=$((mb + 64))m tmpfs /srv/nfs94
echo "/srv/nfs94 10.0.94.0/24(rw,sync,no_root_squash,no_subtree_check,fsid=0,insecure)" >/etc/exports
check "nfsd module and its filesystem" sh -c 'modprobe nfsd && { mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd; }'
check "exportfs" exportfs -ra
check "rpc.mountd (NFSv4 only)" rpc.mountd -N 3 --no-udp
check "rpc.nfsd: 4 threads, NFSv4 only (6.1 has no v2; v3 would need rpcbind)" rpc.nfsd -N 3 -U 4
check "svcrdma listens on 20049 (portlist)" sh -c 'modprobe rpcrdma && echo "rdma 20049" >/proc/fs/nfsd/portlist && grep -q "rdma 20049" /proc/fs/nfsd/portlist'

dd if=/dev/urandom of=/tmp/nfs94.src bs=1M count="$mb" status=none
# The client's whole life in h2's mount namespace: one script, so that its
# mount is the one it unmounts (ip netns exec gives each command its own).
client() {
	set -e
	mkdir -p /mnt/nfs94
	mount -t nfs -o vers=4.2,proto=rdma,port=20049 10.0.94.1:/ /mnt/nfs94
	grep -q ' /mnt/nfs94 nfs4 .*proto=rdma' /proc/mounts
	cp /tmp/nfs94.src /mnt/nfs94/f
	sync
	umount /mnt/nfs94
	mount -t nfs -o vers=4.2,proto=rdma,port=20049 10.0.94.1:/ /mnt/nfs94
	cmp /tmp/nfs94.src /mnt/nfs94/f
	umount /mnt/nfs94
}
start=$(date +%s)
check "h2 mounts with proto=rdma, copies $mb MiB, remounts and reads it back identical" \
	ip netns exec h2 bash -c "$(declare -f client); client"
log "    copy and read back in $(($(date +%s) - start)) s"
check "the server holds the same bytes" cmp /tmp/nfs94.src /srv/nfs94/f
regs=$(rdma statistic show link sroce2/1 | grep -o " fast_regs [0-9]*" | awk '{ print $2 }')
check "the client registered its pages by work request (fast_regs ${regs:-none})" test "${regs:-0}" -gt 0

check "rpc.nfsd 0 stops the server" rpc.nfsd 0
pkill -x rpc.mountd
exportfs -ua
umount /proc/fs/nfsd 2>/dev/null
umount /srv/nfs94
rm -f /tmp/nfs94.src /etc/exports
check "nothing of NFS's left on sroce1" wait_until 30 counts_zero_but_cqs sroce1
check "nothing of NFS's left on sroce2" wait_until 30 counts_zero_but_cqs sroce2
check "rdma link delete sroce1" rdma link delete sroce1
ip netns del h2
check "sroce2 gone with h2" wait_until 20 sh -c '! rdma link show | grep -q sroce2'
check "rmmod sroce" wait_until 30 sh -c 'modprobe -r rpcrdma nfsd 2>/dev/null; rmmod sroce'
ip link del veth-n1 2>/dev/null
check "kernel log clean (no WARNING, BUG or splat)" sh -c '! dmesg | grep -Eq "WARNING:|BUG:|UBSAN|KASAN|Oops"'
finish
