#!/usr/bin/env bash
# make deb: the Debian packages from the committed tree (git archive HEAD),
# with dpkg-buildpackage and debhelper (scripts/pkg/debian/), then lintian.
# Output in build/deb/: the .debs, the .changes, lintian.txt.
#   sroce-dkms     the module's source and dkms.conf (DKMS builds it for
#                  every kernel with headers), a modprobe.d example
#   libsroce1      the provider, its .driver file, libsroce.so.1
#   libsroce-dev   srocedv.h, the libsroce.so link, the man pages
#   sroce-utils    sroce-dump and its man page
# The version is 0.1.0+git<commit date>.<hash>.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/deb
for t in dpkg-buildpackage dh dh_dkms lintian; do
	command -v $t >/dev/null || { echo "make deb: $t is missing (scripts/setup.sh installs it)" >&2; exit 2; }
done
git -C "$top" diff --quiet HEAD || echo "make deb: uncommitted changes are not packaged (git archive HEAD)" >&2
ver=0.1.0+git$(git -C "$top" log -1 --format=%cd --date=format:%Y%m%d).$(git -C "$top" rev-parse --short=7 HEAD)
rm -rf "$out"
mkdir -p "$out/sroce-$ver"
git -C "$top" archive HEAD Makefile kmod libuser abi scripts/kver scripts/pkg | tar -x -C "$out/sroce-$ver"
cp -r "$top/scripts/pkg/debian" "$out/sroce-$ver/debian"
cat >"$out/sroce-$ver/debian/changelog" <<CHANGELOG
sroce ($ver) unstable; urgency=medium

  * Built from commit $(git -C "$top" rev-parse --short=12 HEAD).

 -- sroce developers <sroce@example.org>  $(date -R)
CHANGELOG
(cd "$out/sroce-$ver" && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 || {
	tail -30 "$out/build.log" >&2
	echo "make deb: dpkg-buildpackage failed (build/deb/build.log)" >&2
	exit 1
}
ls "$out"/*.deb
# lintian's findings, each explained in Documentation/install.md.
lintian --info "$out"/sroce_"$ver"_amd64.changes >"$out/lintian.txt" 2>&1 || true
echo "lintian: $(grep -cE '^[EW]:' "$out/lintian.txt") errors and warnings (build/deb/lintian.txt)"
grep -E '^[EW]:' "$out/lintian.txt" | sed 's/^/  /' || true
