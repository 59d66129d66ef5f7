# shellcheck shell=bash
# `scripts/vm-run --pair`: two guests joined by one virtual Ethernet wire.
# Sourced by scripts/vm-run after its caches are ready; uses its functions
# (prepare_out, qemu_cmd, result, timings, msg) and variables, and sets rc.
# See Documentation/vm-runner.md, "Two guests on one wire".
#
# Layout of $out: a/ and b/ are the guests' output shares (the one-VM logs),
# shared/ is a read-write share both guests mount at the same path.
#
# The wire is qemu's socket netdev: guest a listens on 127.0.0.1 port 0 (the
# kernel picks a free port, so concurrent runs cannot clash), vm-run reads the
# port from ss, and guest b connects to it.
#
# VM_BOOT_WAIT=S (make test-debug sets it): a guest whose command has not
# started S seconds after the pair was booted hung in early boot (testing.md,
# "Early-boot hangs"). Both guests are stopped and the pair is booted again,
# once; a second hang ends the run with 124, as a timeout.

command -v ss >/dev/null || die "ss missing (iproute2)"

# When one guest fails, the other may wait for it forever: it is stopped this
# many seconds later.
grace=20

# guest_conf NAME N PEER PEER_N: the conf lines that make a guest a pair member.
guest_conf() {
	printf 'VM_NAME=%s\nVM_PEER_NAME=%s\n' "$1" "$3"
	printf 'VM_HOSTNAME=vm-%s\nVM_PEER_HOSTNAME=vm-%s\n' "$1" "$3"
	printf 'VM_WIRE_MAC=52:54:00:77:00:%02x\n' "$2"
	printf 'VM_IP=10.77.0.%d\nVM_PEER_IP=10.77.0.%d\nVM_PREFIX=24\n' "$2" "$4"
	printf 'VM_MTU=%d\n' "$mtu"
	printf 'VM_SHARED=%q\n' "$out/shared"
}

# start_guest NAME NETDEV: qemu for guest NAME in the background (pid into qpid).
start_guest() {
	local d=$out/$1 n
	[ "$1" = a ] && n=1 || n=2
	qemu_cmd "$d"
	qemu+=(-virtfs "local,path=${out//,/,,}/shared,mount_tag=shared,security_model=none,multidevs=remap"
		-netdev "socket,id=wire,$2"
		-device "virtio-net-pci,netdev=wire,mac=52:54:00:77:00:0$n"
		-pidfile "$d/.vm/qemu.pid")
	timeout -k 10 "$tmo" "${qemu[@]}" </dev/null >"$d/qemu.log" 2>&1 &
	qpid=$!
}

qa="" qb="" ta="" tb="" wd=""
# Both VMs go on every way out: ^C, SIGTERM/SIGHUP, or an error in this script.
# Signalling timeout(1) forwards the signal to qemu (and SIGKILLs it 10 s later).
stop_all() {
	local p
	for p in $qa $qb; do kill "$p" 2>/dev/null; done
	for p in $qa $qb; do wait "$p" 2>/dev/null; done
	for p in $ta $tb $wd; do kill "$p" 2>/dev/null; done
	return 0
}
trap 'stop_all; msg "interrupted; both VMs stopped; logs in $out"; exit 130' INT TERM HUP
trap 'stop_all' EXIT

# failed DIR QEMU_STATUS: the guest did not end with its command's status 0.
failed() { [ "$2" -ne 0 ] || [ "$(cat "$1/status" 2>/dev/null)" != 0 ]; }

# boot_watch: VM_BOOT_WAIT seconds on (the head), a guest whose command has
# not started (no .vm/t-start, stage2) marks the boot hung ($out/boot-hang)
# and both guests are stopped. In the background; ended by TERM, sleep and
# all, when the pair ends first.
boot_watch() {
	(
		trap 'kill "$s" 2>/dev/null; exit' TERM
		sleep "$VM_BOOT_WAIT" </dev/null >/dev/null 2>&1 &
		s=$!
		wait "$s"
		for g in a b; do
			[ ! -e "$out/$g/.vm/t-start" ] || continue
			msg "guest $g (vm-$g): its command had not started after ${VM_BOOT_WAIT}s (an early-boot hang)"
			: >"$out/boot-hang"
		done
		[ ! -e "$out/boot-hang" ] || kill $qa $qb 2>/dev/null
	) &
	wd=$!
}

declare -A gqrc=()
# boot_pair: boots both guests and waits until both have ended (gqrc: each
# one's qemu status; stopped: the one stopped after the other failed).
# Returns 1, both stopped, when guest a's qemu opened no wire socket.
boot_pair() {
	rm -rf "$out/shared" "$out/boot-hang"
	mkdir -p "$out/a" "$out/b" "$out/shared/.sync"
	prepare_out "$out/a" "$(guest_conf a 1 b 2)" "${cmd_a[@]}"
	prepare_out "$out/b" "$(guest_conf b 2 a 1)" "${cmd_b[@]}"
	start_guest a "listen=127.0.0.1:0"
	qa=$qpid
	# The listening port of guest a's qemu (pidfile written by qemu at start).
	port=""
	for _ in $(seq 200); do
		kill -0 "$qa" 2>/dev/null || break
		if [ -s "$out/a/.vm/qemu.pid" ]; then
			port=$(ss -Hltnp src 127.0.0.1 | awk -v p="pid=$(cat "$out/a/.vm/qemu.pid")," \
				'index($0, p) { n = split($4, a, ":"); print a[n]; exit }')
			[ -z "$port" ] || break
		fi
		sleep 0.05
	done
	if [ -z "$port" ]; then
		msg "guest a: qemu did not open the wire's socket"
		stop_all
		tail -n 10 "$out/a/qemu.log" >&2
		return 1
	fi
	start_guest b "connect=127.0.0.1:$port"
	qb=$qpid

	# Each guest's output, streamed with its name in front of every line.
	tail -c +1 -f -s 0.1 --pid="$qa" "$out/a/output.log" | sed -u 's/^/[a] /' &
	ta=$!
	tail -c +1 -f -s 0.1 --pid="$qb" "$out/b/output.log" | sed -u 's/^/[b] /' &
	tb=$!
	[ -z "${VM_BOOT_WAIT:-}" ] || boot_watch

	set +e
	gqrc=()
	stopped=""
	wait -n -p done_pid "$qa" "$qb"
	r=$?
	if [ "$done_pid" = "$qa" ]; then first=a other=b opid=$qb; else first=b other=a opid=$qa; fi
	gqrc[$first]=$r
	if failed "$out/$first" "$r"; then
		for _ in $(seq $((grace * 10))); do
			kill -0 "$opid" 2>/dev/null || break
			sleep 0.1
		done
		if kill "$opid" 2>/dev/null; then
			stopped=$other
			msg "guest $other (vm-$other): stopped ${grace}s after guest $first failed"
		fi
	fi
	wait "$opid"
	gqrc[$other]=$?
	wait "$ta"
	wait "$tb"
	if [ -n "$wd" ]; then
		kill "$wd" 2>/dev/null
		wait "$wd"
		wd=""
	fi
	set -e
}

t0=$(date +%s.%N)
for try in 1 2; do
	boot_pair || { rc=126; return; }
	[ -e "$out/boot-hang" ] || break
	[ "$try" = 2 ] || msg "both guests stopped; booting the pair again"
done
t1=$(date +%s.%N)

prc=0 timed_out=0
if [ -e "$out/boot-hang" ]; then
	msg "the pair hung in early boot twice"
	timed_out=1
else
	for g in a b; do
		[ "$g" != "$stopped" ] || continue
		result "$out/$g" "${gqrc[$g]}" "guest $g (vm-$g): "
		[ "$verbose" = 0 ] || msg "guest $g (vm-$g): uptime at command start" \
			"$(awk '{ print $1 }' "$out/$g/.vm/t-start" 2>/dev/null || echo '?') s, exit $rc"
		[ "$rc" -ne 124 ] || timed_out=1
		if [ "$rc" -ne 0 ]; then
			msg "guest $g (vm-$g) failed: exit $rc"
			[ "$prc" -ne 0 ] || prc=$rc
		fi
	done
fi
[ "$timed_out" = 0 ] || prc=124
rc=$prc
[ "$verbose" = 0 ] || msg "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "wall %.1f s", b - a }'), exit $rc"

trap - INT TERM HUP EXIT
if [ "$rc" -ne 0 ] || [ "$keep" = 1 ]; then
	[ "$rc" -eq 0 ] || msg "exit $rc; logs in $out"
else
	rm -rf "$out"
fi
