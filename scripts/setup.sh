#!/usr/bin/env bash
# Installs every Debian package the build and tests need, and extracts the
# target kernel image (never installed on the build machine) into .cache/.
# Usage: scripts/setup.sh [KVER]   (default: Debian 12's current 6.1 flavour;
# an explicit KVER, e.g. 6.12.107+deb12-amd64 from backports, is added
# beside it without changing the default)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
kver=${1:-${KVER:-}}
default=0
if [ -z "$kver" ]; then
	default=1
	kver=$(apt-cache depends linux-headers-amd64 | sed -n 's/.*Depends: linux-headers-\(.*\)$/\1/p' | head -1)
fi
[ -n "$kver" ] || { echo "setup: cannot resolve the target kernel version" >&2; exit 1; }
echo "setup: target kernel $kver"
apt-get install -y -qq --no-install-recommends \
	build-essential g++ libtsan2 make cmake pkg-config "linux-headers-$kver" \
	qemu-system-x86 busybox-static cpio kmod \
	rdma-core libibverbs-dev librdmacm-dev ibverbs-utils ibverbs-providers perftest rdmacm-utils \
	python3-pyverbs \
	libnl-3-dev libnl-route-3-dev libnl-genl-3-dev libpcap-dev catch2 tshark iproute2 \
	clang libclang-rt-14-dev python3 strace gnuplot-nox zlib1g-dev man-db groff-base \
	binutils nvme-cli fio nfs-kernel-server valgrind debhelper dh-dkms dkms lintian \
	ucx-utils openmpi-bin libopenmpi-dev libfabric-bin systemd >/dev/null
cache="$top/.cache/kernel/$kver"
if [ ! -e "$cache/boot/vmlinuz-$kver" ]; then
	mkdir -p "$cache" "$top/.cache/deb"
	(cd "$top/.cache/deb" && apt-get download -qq "linux-image-$kver")
	dpkg-deb -x "$top"/.cache/deb/linux-image-"$kver"_*.deb "$cache"
	depmod -b "$cache" "$kver"
fi
# Only the default target becomes the default for make and vm-run.
[ $default -eq 1 ] && echo "$kver" > "$top/.cache/kver"
echo "setup: done ($kver, image in $cache)"
