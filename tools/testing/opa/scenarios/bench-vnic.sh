# SPDX-License-Identifier: GPL-2.0
# Benchmark (make bench, not make check): packets per second through the
# VNIC drivers on opasim, driven by the kernel's packet generator (pktgen)
# straight into the netdev's ndo_start_xmit, without sockets, qdiscs or a
# user-space sender. The C opa_vnic and opa_vnic_rs take turns in the same
# boot, C first, each round from a fresh load of the stack (opasim, ib_umad,
# the driver) and a fresh vnic-em apply. Per round and driver, for frames
# of 60 and 1514 bytes (pktgen's pkt_size: the frame without its FCS):
#   tx   pktgen on the vport of LID 1 (A) to the vport of LID 2 (B): the
#        frames B's netdev received
#   rx   the same from B to A: the frames A's netdev received
#   tx2  two pktgen threads (kpktgend_0 and kpktgend_1, one per CPU) on A,
#        each on its own transmit queue (A@0 on queue 0, A@1 on queue 1):
#        the frames B's netdev received
#   sock UDP frames of 64 flows from user space through a packet socket on A
#        (vnic-send --secs), the stack's own path: the qdisc, the driver's
#        ndo_select_queue, then its ndo_start_xmit; the frames B received
#        (make profile only, by default: its rate is the sender's)
# and, of the EM's control path, with no frame size ("-" in its place):
#   em-vport  VESW port info Sets to the vport of LID 2 that change what
#             transmit reads (the unknown multicast DLID, alternating), one
#             at a time from vema-sets on LID 1: Sets per second
#   em-mac    MAC table Sets to the same vport (two entries, alternating):
#             Sets per second
#   em-apply  vnic-em apply, on a fresh load, of a fabric of 64 vports (32 on
#             each LID, one vesw) whose MAC tables hold all 64 MACs: vports
#             per second
# Each run lasts SECS seconds (pktgen count 0, stopped through pgctrl);
# packets per second are the frames received over pktgen's own run time.
# clone_skb is 0: both drivers push their header and metadata into the
# skb, so a reused pktgen skb must not be sent twice. The receiving netdev
# has no address (and IPv6 off), so the stack drops the frames after one
# route lookup. Prints a line per run:
#   ROUND <n> <driver> <test> <bytes>B <pps> (sent S, delivered D, U us, errors E)
# (sent: pktgen's count of frames the driver accepted; delivered: the
# receiving netdev's rx_packets; for sock, the frames the socket took).
# scripts/opa/bench-vnic makes the ratios.
#
# The kernel command line may change the run:
#   opa.bench_rounds=N  rounds (default 5: 5 runs of each driver)
#   opa.bench_secs=S    seconds per run (default 3)
#   opa.bench_tests=T   the tests, comma-separated (default
#                       tx,rx,tx2,em-vport,em-mac,em-apply)
#   opa.bench_sizes=B   the frame sizes, comma-separated (default 60,1514)
#   opa.bench_profile=1 for make profile: after each load, the text symbols
#                       of the modules (between KALLSYMS-BEGIN and
#                       KALLSYMS-END); in each run, after a second of
#                       traffic, SECS seconds between two sync(2) calls,
#                       which the host's instruction counter takes as the
#                       start and the end of a window (PROFILE-WINDOW
#                       <driver> <test> <bytes>B names it)
. /opa/guest-lib.sh

ROUNDS=5
SECS=3
TESTS="tx rx tx2 em-vport em-mac em-apply"
SIZES="60 1514"
PROFILE=0
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	opa.bench_rounds=*) ROUNDS=${arg#*=} ;;
	opa.bench_secs=*) SECS=${arg#*=} ;;
	opa.bench_tests=*) TESTS=$(echo "${arg#*=}" | tr , ' ') ;;
	opa.bench_sizes=*) SIZES=$(echo "${arg#*=}" | tr , ' ') ;;
	opa.bench_profile=1) PROFILE=1 ;;
	esac
done

[ -x /opa/vnic-em ] || fail "/opa/vnic-em is missing"
MAC_A=02:00:00:00:01:00
MAC_B=02:00:00:00:02:00
PG=/proc/net/pktgen
two_vport_fabric
must modprobe pktgen
# The module symbols' addresses, for the profile.
[ "$PROFILE" = 1 ] && echo 0 >/proc/sys/kernel/kptr_restrict
for t in 0 1; do
	[ -w $PG/kpktgend_$t ] || fail "no pktgen thread kpktgend_$t (2 CPUs needed)"
done

# pg FILE COMMAND: one pktgen command; fails with pktgen's answer if refused.
pg() {
	if ! echo "$2" >"$PG/$1" || ! grep -q '^Result: OK' "$PG/$1"; then
		fail "pktgen: '$2' to $1: $(grep '^Result:' "$PG/$1")"
	fi
}

# Removes every device from both pktgen threads and waits until they are gone.
pg_clear() {
	local i=0
	for t in 0 1; do
		echo rem_device_all >"$PG/kpktgend_$t"
	done
	while ls "$PG" | grep -qv -e '^kpktgend_' -e '^pgctrl$'; do
		i=$((i + 1))
		[ $i -le 100 ] || fail "pktgen kept its devices: $(ls "$PG")"
		sleep 0.1
	done
}

stat_of() { cat "/sys/class/net/$1/statistics/$2"; }

# run ROUND DRIVER TEST BYTES FROM TO DST_MAC THREADS: one timed run, and
# its ROUND line.
run() {
	local round=$1 drv=$2 test=$3 bytes=$4 from=$5 to=$6 dmac=$7 threads=$8
	local t dev rx0 rx1 sent=0 usec=0 errs=0 res u s e pps
	pg_clear
	t=0
	while [ $t -lt "$threads" ]; do
		dev=$from@$t
		pg kpktgend_$t "add_device $dev"
		pg "$dev" "count 0"
		pg "$dev" "clone_skb 0"
		pg "$dev" "pkt_size $bytes"
		pg "$dev" "delay 0"
		pg "$dev" "dst_mac $dmac"
		pg "$dev" "dst 10.11.0.2"
		pg "$dev" "queue_map_min $t"
		pg "$dev" "queue_map_max $t"
		t=$((t + 1))
	done
	rx0=$(stat_of "$to" rx_packets)
	echo start >"$PG/pgctrl" &
	if [ "$PROFILE" = 1 ]; then
		sleep 1
		echo "PROFILE-WINDOW $drv $test ${bytes}B"
		sync
		sleep "$SECS"
		sync
	else
		sleep "$SECS"
	fi
	echo stop >"$PG/pgctrl"
	wait
	rx1=$(stat_of "$to" rx_packets)
	t=0
	while [ $t -lt "$threads" ]; do
		# "Result: OK: 3000123(c2999000+d1123) usec, 123456 (60byte,0frags)",
		# then "  41152pps 19Mb/sec (19752960bps) errors: 0".
		res=$(grep -A1 '^Result: OK' "$PG/$from@$t") || fail "pktgen: no result for $from@$t: $(cat "$PG/$from@$t")"
		u=$(echo "$res" | sed -n 's/^Result: OK: \([0-9]*\)(.*/\1/p')
		s=$(echo "$res" | sed -n 's/.* usec, \([0-9]*\) (.*/\1/p')
		e=$(echo "$res" | sed -n 's/.*errors: \([0-9]*\).*/\1/p')
		[ -n "$u" ] && [ -n "$s" ] && [ -n "$e" ] || fail "pktgen: cannot read the result of $from@$t: $res"
		[ "$u" -gt "$usec" ] && usec=$u
		sent=$((sent + s))
		errs=$((errs + e))
		t=$((t + 1))
	done
	[ "$usec" -gt 0 ] || fail "$drv $test ${bytes}B: pktgen did not run"
	pps=$(((rx1 - rx0) * 1000000 / usec))
	echo "ROUND $round $drv $test ${bytes}B $pps (sent $sent, delivered $((rx1 - rx0)), $usec us, errors $errs)"
	[ $((rx1 - rx0)) -gt 0 ] || fail "$drv $test ${bytes}B: nothing delivered"
}

# run_sock ROUND DRIVER BYTES FROM TO DST_MAC: frames from a packet socket on
# FROM for SECS seconds (the profile's window after a second), and their ROUND
# line.
run_sock() {
	local round=$1 drv=$2 bytes=$3 from=$4 to=$5 dmac=$6 rx0 rx1 t0 t1 usec secs out pid
	pg_clear
	secs=$SECS
	[ "$PROFILE" = 1 ] && secs=$((SECS + 2))
	rx0=$(stat_of "$to" rx_packets)
	t0=$(date +%s)
	out=/tmp/vnic-send.out
	/opa/vnic-send --dev "$from" --kind ipv4-udp --flows 64 --len "$bytes" \
		--dmac "$dmac" --secs "$secs" >$out 2>&1 &
	pid=$!
	if [ "$PROFILE" = 1 ]; then
		sleep 1
		echo "PROFILE-WINDOW $drv sock ${bytes}B"
		sync
		sleep "$SECS"
		sync
	fi
	wait_limit $pid $((secs + 30)) "vnic-send on $from" || fail "$drv sock: vnic-send: $(cat $out)"
	t1=$(date +%s)
	# Let what the queues hold arrive.
	sleep 1
	rx1=$(stat_of "$to" rx_packets)
	usec=$(((t1 - t0) * 1000000))
	[ "$usec" -gt 0 ] || usec=1000000
	echo "ROUND $round $drv sock ${bytes}B $(((rx1 - rx0) * 1000000 / usec))" \
		"(delivered $((rx1 - rx0)), $usec us, $(grep -o 'queue full [0-9]* time(s)' $out))"
	[ $((rx1 - rx0)) -gt 0 ] || fail "$drv sock ${bytes}B: nothing delivered"
}

# now_us: the time since boot, in microseconds (10 ms steps).
now_us() { awk '{ printf "%d", $1 * 1000000 }' /proc/uptime; }

# vpi_mdlid DLID: the VESW port info two_vport_fabric gives the vport on LID 2
# (vesw 1, fabric 1, P_Key 0x8001, MTU 1500, port 2, forwarding, encap SLID 2,
# MAC 02:00:00:00:02:00), with unknown multicast DLID DLID, in hex.
vpi_mdlid() {
	printf '00010001%020d8001%08d%08x%0248d05dc0000' 0 0 "$1" 0
	printf '0000000200000000020000000200030000000000000000000000000000000002%0192d' 0
}

# mac_entries INDEX MAC1 MAC2: a MAC table Set of two entries at INDEX (both to
# LID 2), in hex.
mac_entries() {
	printf '%04x0002%08d%s000000000000%08x%s000000000000%08x' "$1" 0 "$2" 512 "$3" 512
}

# run_em ROUND DRIVER TEST ATTR DATA_A DATA_B: Sets of ATTR to vport 0 of LID 2,
# alternating the two, and their ROUND line.
run_em() {
	local round=$1 drv=$2 test=$3 n=$((SECS * 200)) out us pid
	if [ "$PROFILE" = 1 ]; then
		# Sets for a second before the window and one after: a count
		# would not say how long they last (the C driver answers
		# em-vport's thousands a second under TCG, em-mac's tens).
		/opa/vema-sets -d umad0 --dlid 2 --attr "$4" --mod 0 --secs $((SECS + 2)) "$5" "$6" \
			>/tmp/vema-sets.out 2>&1 &
		pid=$!
		sleep 1
		echo "PROFILE-WINDOW $drv $test -"
		sync
		sleep "$SECS"
		sync
		wait $pid || fail "$drv $test: $(cat /tmp/vema-sets.out)"
		out=$(cat /tmp/vema-sets.out)
		n=$(echo "$out" | sed -n 's/^vema-sets: \([0-9]*\) Sets:.*/\1/p')
		[ -n "$n" ] || fail "$drv $test: no count in '$out'"
	else
		out=$(/opa/vema-sets -d umad0 --dlid 2 --attr "$4" --mod 0 --count $n "$5" "$6") ||
			fail "$drv $test: $out"
	fi
	us=$(echo "$out" | sed -n 's/.* in \([0-9]*\) us$/\1/p')
	[ -n "$us" ] && [ "$us" -gt 0 ] || fail "$drv $test: no time in '$out'"
	echo "ROUND $round $drv $test - $((n * 1000000 / us)) ($n Sets in $us us)"
}

# big_fabric: /tmp/big.toml, 64 vports of vesw 1, vports 0-31 on each LID.
big_fabric() {
	local lid v
	printf '[em]\nfabric_id = 1\n\n[[vesw]]\nid = 1\nname = "big"\npkey = 0x8001\n'
	printf 'eth_mtu = 1500\nunknown_mcast_dlid = 0xf00001\n'
	for lid in 1 2; do
		v=0
		while [ $v -lt 32 ]; do
			printf '\n[[vport]]\nlid = %d\nvport = %d\nvesw = 1\nport_num = %d\n' \
				$lid $v $(((lid - 1) * 32 + v + 1))
			printf 'mac = "02:00:00:03:%02x:%02x"\n' $lid $v
			v=$((v + 1))
		done
	done
}

# run_apply ROUND DRIVER: vnic-em apply of the big fabric on a fresh load of
# the stack, timed, and its ROUND line; leaves the stack loaded.
run_apply() {
	local round=$1 drv=$2 t0 t1 n
	pg_clear
	unload_vnic_stack "$drv"
	load_vnic_stack "$drv"
	big_fabric >/tmp/big.toml
	t0=$(now_us)
	must /opa/vnic-em -d umad0 apply /tmp/big.toml >/dev/null
	t1=$(now_us)
	n=$(ip -o link | grep -c 'link/ether 02:00:00:03:')
	[ "$n" = 64 ] || fail "$drv em-apply: $n netdevs for 64 vports"
	[ $((t1 - t0)) -gt 0 ] || t1=$((t0 + 10000))
	echo "ROUND $round $drv em-apply - $((64 * 1000000 / (t1 - t0))) (64 vports in $((t1 - t0)) us)"
}

# rounds_of ROUND DRIVER: a fresh stack with DRIVER, every test, unloaded.
rounds_of() {
	local round=$1 drv=$2 a b i bytes
	load_vnic_stack "$drv"
	must /opa/vnic-em -d umad0 apply /tmp/fabric.toml >/dev/null
	a=$(netdev_by_mac $MAC_A)
	b=$(netdev_by_mac $MAC_B)
	[ -n "$a" ] && [ -n "$b" ] || fail "$drv: the VNIC netdevs are missing"
	if [ "$PROFILE" = 1 ]; then
		echo "KALLSYMS-BEGIN $drv"
		grep -E ' [tT] .*\[(opa_vnic|opa_vnic_rs|opasim|pktgen|ib_umad)\]$' /proc/kallsyms
		echo "KALLSYMS-END"
	fi
	for dev in "$a" "$b"; do
		# No IPv6 either: its autoconfiguration would send frames of its own.
		echo 1 >"/proc/sys/net/ipv6/conf/$dev/disable_ipv6"
		must ip link set "$dev" up
	done
	i=0
	until [ "$(cat "/sys/class/net/$a/operstate")" = up ] &&
	      [ "$(cat "/sys/class/net/$b/operstate")" = up ]; do
		i=$((i + 1))
		[ $i -le 50 ] || fail "$drv: $a or $b is not up"
		sleep 0.1
	done
	for test in $TESTS; do
		case $test in
		em-vport)
			run_em "$round" "$drv" em-vport 0x0011 "$(vpi_mdlid 0xf00001)" "$(vpi_mdlid 0xf00002)"
			continue
			;;
		em-mac)
			run_em "$round" "$drv" em-mac 0x0012 \
				"$(mac_entries 0 020000000200 020000000900)" \
				"$(mac_entries 0 020000000900 020000000200)"
			continue
			;;
		em-apply)
			run_apply "$round" "$drv"
			continue
			;;
		esac
		for bytes in $SIZES; do
			case $test in
			tx) run "$round" "$drv" tx "$bytes" "$a" "$b" $MAC_B 1 ;;
			rx) run "$round" "$drv" rx "$bytes" "$b" "$a" $MAC_A 1 ;;
			tx2) run "$round" "$drv" tx2 "$bytes" "$a" "$b" $MAC_B 2 ;;
			sock) run_sock "$round" "$drv" "$bytes" "$a" "$b" $MAC_B ;;
			*) fail "unknown test $test" ;;
			esac
		done
	done
	pg_clear
	unload_vnic_stack "$drv"
}

echo "bench-vnic: $ROUNDS rounds, $SECS s per run, $(nproc) CPUs"
t0=$(date +%s)
round=1
while [ $round -le "$ROUNDS" ]; do
	rounds_of $round opa_vnic
	rounds_of $round opa_vnic_rs
	round=$((round + 1))
done
check_dmesg_clean
echo "bench-vnic: done in $(($(date +%s) - t0)) s"
