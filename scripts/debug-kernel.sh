#!/usr/bin/env bash
# Builds (or reuses) the debug kernel that `make test-debug` runs the VM
# suites on: Debian's own 6.1 source (linux-source-6.1) with lockdep, KASAN,
# UBSAN, kmemleak, DEBUG_ATOMIC_SLEEP and DEBUG_OBJECTS. See the "Debug
# kernel" section of Documentation/testing.md.
#
#   scripts/debug-kernel.sh            build if needed; print the kernel version
#   scripts/debug-kernel.sh --kdir     build if needed; print the KDIR for `make kmod`
#   scripts/debug-kernel.sh --force    rebuild even if the stamp matches
#
# Config: x86_64_defconfig + kernel/configs/kvm_guest.config +
# scripts/debug-kernel.config (checked line by line after olddefconfig).
# Everything lives under .cache/:
#   .cache/debug-kernel/linux-source-6.1/   the extracted source
#   .cache/debug-kernel/build/              the O= object tree; it is the KDIR
#   .cache/kernel/<kver>/                   laid out as scripts/setup.sh lays
#       out a Debian image: boot/vmlinuz-<kver>, boot/config-<kver>,
#       lib/modules/<kver>/ with modules.dep (depmod -b)
# The build is skipped when .cache/debug-kernel/stamp matches (the fragment,
# this script and the source tarball).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd -P)
want=kver
force=0
for a in "$@"; do
	case $a in
	--kdir) want=kdir ;;
	--force) force=1 ;;
	*) echo "usage: $0 [--kdir] [--force]" >&2; exit 2 ;;
	esac
done
msg() { echo "debug-kernel: $*" >&2; }
die() { msg "$*"; exit 1; }

tarball=/usr/src/linux-source-6.1.tar.xz
# The physical path (.cache may be a symlink shared by worktrees): KDIR and
# the build/source links stay valid from any of them.
mkdir -p "$top/.cache"
dk=$(cd "$top/.cache" && pwd -P)/debug-kernel
src=$dk/linux-source-6.1
obj=$dk/build
frag=$top/scripts/debug-kernel.config
jobs=$(nproc)

# The tools a kernel build needs beyond build-essential, and the source.
need=()
[ -e "$tarball" ] || need+=(linux-source-6.1)
for t in flex:flex bison:bison bc:bc pahole:dwarves; do
	command -v "${t%%:*}" >/dev/null || need+=("${t#*:}")
done
[ -e /usr/include/libelf.h ] || need+=(libelf-dev)
[ -e /usr/include/openssl/ssl.h ] || need+=(libssl-dev)
if [ ${#need[@]} -gt 0 ]; then
	msg "installing ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# Contents, not paths: another clone sharing this .cache (a symlink) matches.
stamp=$({ cat "$frag" "$0"; stat -c '%s %Y' "$tarball"; } | sha256sum | cut -d' ' -f1)
if [ "$force" = 0 ] && [ -s "$dk/stamp" ] && [ "$(head -1 "$dk/stamp")" = "$stamp" ]; then
	kver=$(sed -n 2p "$dk/stamp")
	if [ -e "$top/.cache/kernel/$kver/boot/vmlinuz-$kver" ] &&
		[ -e "$top/.cache/kernel/$kver/lib/modules/$kver/modules.dep" ] &&
		[ -e "$obj/Module.symvers" ]; then
		msg "reusing $kver (stamp matches)"
		[ $want = kver ] && echo "$kver" || echo "$obj"
		exit 0
	fi
fi
rm -f "$dk/stamp"

mkdir -p "$dk"
if [ ! -e "$src/Makefile" ] || [ "$tarball" -nt "$src/Makefile" ]; then
	msg "extracting $tarball"
	rm -rf "$src"
	tar -C "$dk" -xf "$tarball"
	touch "$src/Makefile"
fi

# --- configure ---
mkdir -p "$obj"
kmake() { nice -n 19 make -C "$src" O="$obj" "$@"; }
kmake -s x86_64_defconfig >/dev/null
(cd "$obj" && "$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" \
	"$src/kernel/configs/kvm_guest.config" "$frag" >/dev/null)
kmake -s olddefconfig >/dev/null
# Every line of the fragment must hold: a silently dropped option (missing
# dependency) would make the run test less than it says.
bad=0
while IFS= read -r l; do
	case $l in
	CONFIG_*=*) sym=${l%%=*}; grep -qxF "$l" "$obj/.config" || { msg "config: want $l, got: $(grep -E "^(# )?$sym[= ]" "$obj/.config" || echo 'absent')"; bad=1; } ;;
	"# CONFIG_"*" is not set") sym=${l#\# }; sym=${sym%% *}; ! grep -q "^$sym=" "$obj/.config" || { msg "config: want $l, got: $(grep "^$sym=" "$obj/.config")"; bad=1; } ;;
	esac
done <"$frag"
[ $bad = 0 ] || die "the config does not hold the fragment (above)"

# --- build ---
msg "building with $jobs jobs (nice 19) in $obj"
t0=$SECONDS
if ! kmake -j"$jobs" bzImage modules >"$dk/build.log" 2>&1; then
	tail -n 40 "$dk/build.log" >&2
	die "kernel build failed; log in $dk/build.log"
fi
secs=$((SECONDS - t0))
kver=$(cat "$obj/include/config/kernel.release")
[[ $kver == *-sroce-debug ]] || die "unexpected kernel release '$kver'"
msg "built in $((secs / 60)) min $((secs % 60)) s"

# --- lay out like scripts/setup.sh's Debian image ---
cache=${dk%/debug-kernel}/kernel/$kver
rm -rf "$cache.new"
mkdir -p "$cache.new/boot"
kmake -s INSTALL_MOD_PATH="$cache.new" DEPMOD=/bin/true modules_install >/dev/null
cp "$obj/arch/x86/boot/bzImage" "$cache.new/boot/vmlinuz-$kver"
cp "$obj/.config" "$cache.new/boot/config-$kver"
cp "$obj/System.map" "$cache.new/boot/System.map-$kver"
# modules_install links build/source to the object and source trees.
ln -sfn "$obj" "$cache.new/lib/modules/$kver/build"
ln -sfn "$src" "$cache.new/lib/modules/$kver/source"
depmod -b "$cache.new" "$kver"
rm -rf "$cache"
mv "$cache.new" "$cache"
printf '%s\n%s\n%s\n' "$stamp" "$kver" "build $secs s, $(date -u +%FT%TZ), $jobs jobs" >"$dk/stamp"
[ $want = kver ] && echo "$kver" || echo "$obj"
