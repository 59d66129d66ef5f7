#!/usr/bin/env bash
# The Debian packages of `make deb` installed as a user would (issue 21):
# in a guest stripped of the project's own module and provider, `dpkg -i`
# of sroce-dkms, libsroce1, libsroce-dev and sroce-utils; DKMS builds
# sroce.ko for the running kernel in the postinst (minutes under TCG);
# modprobe loads that module; `rdma link add` and ibv_rc_pingpong --chk
# between two namespaces over it and the packaged provider; sroce-dump's
# man page; the systemd unit sroce-link@.service verified and its commands
# run; then `dpkg -r` of all four leaves only their conffile
# (sroce.driver, as dpkg keeps every package's), and `dpkg --purge` exactly
# the files there were before the install. Needs build/deb (make deb).
# vm-timeout: 5400
. "$(dirname "$0")/../lib.sh"

deb=$TOP/build/deb
kver=$(uname -r)
pkgs="sroce-dkms libsroce1 libsroce-dev sroce-utils"
check "the four packages are built (make deb)" sh -c "for p in $pkgs; do ls $deb/\${p}_*.deb >/dev/null || exit 1; done"
# A user's host: no module of the project, no provider but the package's.
rm -f /lib/modules/"$kver"/updates/sroce*.ko
# (the folder only the tree's own install made; DKMS removes it when empty)
rmdir /lib/modules/"$kver"/updates 2>/dev/null
depmod "$kver"
l=/usr/lib/x86_64-linux-gnu
rm -f $l/libsroce.so $l/libsroce.so.1 $l/libibverbs/libsroce-rdmav34.so /etc/libibverbs.d/sroce.driver
# What the packages may touch, listed before and after.
snapshot() {
	find /usr/src /usr/include/infiniband /usr/share/man/man3 /usr/share/man/man8 /usr/sbin \
		$l/libibverbs /etc/libibverbs.d /etc/modprobe.d /lib/modules/"$kver" /var/lib/dkms \
		/usr/share/doc/sroce-dkms /usr/share/doc/libsroce1 /usr/share/doc/libsroce-dev \
		/usr/share/doc/sroce-utils 2>/dev/null | LC_ALL=C sort |
		grep -vxE '/var/lib/dkms/mok\.(key|pub)' # dkms's signing key, made at its first build
	find $l -maxdepth 1 -name 'libsroce*' | LC_ALL=C sort
}
snapshot >/tmp/files.before
start=$(date +%s)
files=$(for p in $pkgs; do ls "$deb/${p}"_*.deb; done | tr '\n' ' ')
check "dpkg -i $pkgs (DKMS builds the module)" sh -c "dpkg -i $files >/tmp/dpkg.out 2>&1"
tail -8 /tmp/dpkg.out | sed 's/^/  /'
# Why a package failed, when one did (2026-11-28: the three user-space
# packages did: dh_dkms had put dkms.conf in all four; fixed in
# scripts/pkg/debian/rules).
grep -E '^dpkg: |rror' /tmp/dpkg.out | head -12 | sed 's/^/  /'
log "  (install and DKMS build: $(($(date +%s) - start)) s)"
check "DKMS: sroce installed for $kver" sh -c "dkms status sroce | grep -q '$kver.*installed'"
dkms status sroce | sed 's/^/  /'
if modprobe sroce && modinfo -n sroce | grep -q /updates/dkms/; then
	ok "modprobe loads the DKMS-built module"
else
	fail "modprobe loads the DKMS-built module: $(modinfo -n sroce 2>&1)"
	finish
fi
check "the provider is the package's" sh -c "dpkg -S $l/libsroce.so.1 | grep -q libsroce1"
check "sroce-dump(8) is installed" sh -c "man -w sroce-dump | grep -q /usr/share/man/man8/"
two_hosts 8 1500
check "rdma link add in two namespaces" sroce_on_hosts 8
port=23000
host_pp "ibv_rc_pingpong --chk over the packages" ibv_rc_pingpong -n 200 -s 4096
end_two_hosts
# The systemd unit of sroce-utils (the guest's init is not systemd: the unit
# is verified offline, then its commands run as systemd would run them for
# the instance veth9; 2026-11-28 it named /sbin/rdma, which Debian 12's
# iproute2 does not have).
unit=/lib/systemd/system/sroce-link@.service
ip link add veth9 type veth peer name veth9p
ip link set veth9 up
check "sroce-link@.service is installed and verifies (systemd-analyze verify)" \
	sh -c "systemd-analyze verify ${unit%@.service}@veth9.service >/tmp/verify.out 2>&1"
sed 's/^/  /' /tmp/verify.out | head -5
unit_cmd() { sed -n "s/^$1=//p" "$unit" | sed 's/%i/veth9/g'; }
check "its ExecStart adds sroce_veth9 on veth9" sh -c "$(unit_cmd ExecStart) && rdma link show sroce_veth9/1 | grep -q 'netdev veth9'"
check "its ExecStop removes it" sh -c "$(unit_cmd ExecStop) && ! rdma link show sroce_veth9/1 2>/dev/null"
ip link del veth9
# dpkg -r keeps conffiles, as for every package (ibverbs-providers' .driver
# files too): exactly libsroce1's /etc/libibverbs.d/sroce.driver may stay,
# and dpkg --purge takes it.
check "dpkg -r $pkgs" sh -c "dpkg -r $pkgs >/tmp/dpkg-r.out 2>&1"
snapshot >/tmp/files.after
conf=$(dpkg-query -W -f='${Conffiles}\n' $pkgs 2>/dev/null | awk 'NF { print $1 }' | LC_ALL=C sort)
only_conffiles() {
	[ "$conf" = /etc/libibverbs.d/sroce.driver ] || return 1
	! diff /tmp/files.before /tmp/files.after | grep '^[<>]' | grep -qvxF "> $conf"
}
check "dpkg -r: only the conffiles stay ($(echo $conf))" only_conffiles
diff /tmp/files.before /tmp/files.after | head -10 | sed 's/^/  /'
check "dpkg --purge $pkgs" sh -c "dpkg --purge $pkgs >/tmp/dpkg-p.out 2>&1"
snapshot >/tmp/files.purged
check "after the purge: nothing left behind, nothing taken away" cmp -s /tmp/files.before /tmp/files.purged
diff /tmp/files.before /tmp/files.purged | head -10 | sed 's/^/  /'
finish
