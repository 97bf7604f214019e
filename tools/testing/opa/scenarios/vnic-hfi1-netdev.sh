# SPDX-License-Identifier: GPL-2.0
# The VNIC drivers on an opasim whose netdev is hfi1's as the ULP and the
# stack see it (Documentation/infiniband/opasim.rst, "opasim as hfi1"):
# scatter-gather offered (hfi1_vnic_alloc_rn()), so frames reach the ULP
# with only part of them in the linear area; a small SDMA ring per queue
# (vnic_sdma_descs=64), completed after ndo_start_xmit returns, that pushes
# back with NETDEV_TX_BUSY (hfi1_netdev_start_xmit()); receive through NAPI
# and GRO. The C opa_vnic and opa_vnic_rs run the same steps in one boot:
#
#   layouts     UDP datagrams written in two parts (MSG_MORE), AF_PACKET
#               frames of 4-9 KiB (their payload in page fragments), each
#               delivered, with the same 16B headers and ethtool -S deltas
#               under both drivers; raw AF_PACKET jumbo frames (only the
#               Ethernet header linear) for opa_vnic_rs, which the C driver
#               cannot take (skb_under_panic, see vnic-traffic.sh)
#   vl-mtu      a VL whose MTU the fabric manager lowered: frames over it
#               dropped by the HFI (too_long), the others sent
#   vlan        a VLAN device whose PCP maps to another VL than untagged
#               frames: the queue the stack picked must be the one of the
#               VL the frame is sent on (opasim counts queue_vl_mismatch)
#   rx-errors   packets the receiving chip flagged (opasim's rx_errors, as
#               hfi1's RHF error bits): dropped, counted in rx_crc_errors
#               and rx_frame_errors, which each driver passes on
#   tcp         4 MiB of TCP with timestamps off, then on: every byte at
#               the receiver, tx_dropped 0; the small ring's pushbacks
#               (tx_busy) each followed by a wake (queue_wakes)
#   burst       600 frames from a packet socket, the SDMA completions held
#               (opasim's vnic_tx_hold) until all are posted: the rings
#               push back (NETDEV_TX_BUSY), whatever the kernel's speed;
#               each frame transmitted and received exactly once
#   forwarded   frames bridged from a veth, whose linear part is only the
#               Ethernet header: sent by opa_vnic_rs with the headers of the
#               same frames sent directly (the C driver panics on the
#               bridge's own frames: see below)
#   rmmod       the ULP, then opasim, removed while TCP runs
. /opa/guest-lib.sh

for b in vnic-em opasim-capture vnic-send; do [ -x /opa/$b ] || fail "/opa/$b is missing"; done

cat >/tmp/sg.toml <<'TOML'
[em]
fabric_id = 1

[[vesw]]
id = 1
name = "sg"
pkey = 0x8001
eth_mtu = 9000
unknown_mcast_dlid = 0xf00001
mac_table_from_vports = true
TOML
for lid in 1 2; do
	cat >>/tmp/sg.toml <<TOML

[[vport]]
lid = $lid
vport = 0
vesw = 1
port_num = $lid
mac = "02:00:00:00:0$lid:00"
non_vlan_sc_uc = 2
non_vlan_vl_uc = 2
pcp_sc_uc = [4, 5, 6, 7, 4, 5, 6, 7]
pcp_vl_uc = [4, 5, 6, 7, 4, 5, 6, 7]
TOML
done
B=02:00:00:00:02:00
PORT=/sys/kernel/debug/opasim/opasim0/port1

# The VNIC packets from LID 1 to LID 2 in opasim's capture (opasim-capture
# checks only packets it holds whole, 256 bytes).
captured() {
	awk '$2 == "vnic" && $8 == "0x1" && $10 == "0x2"' /sys/kernel/debug/opasim/capture | wc -l
}
# sdma COUNTER: the value of a counter of port 1's SDMA rings.
sdma() { awk -v k="$1" '$1 == k { print $2 }' $PORT/vnic_sdma; }
# netstat_of NS DEV NAME: a statistic of a netdev.
netstat_of() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/$3"; }
# The receive counters of $b: packets, errors, CRC errors, frame errors.
rx_counts() {
	for c in rx_packets rx_errors rx_crc_errors rx_frame_errors; do
		netstat_of nb "$b" $c
	done
}
# The ethtool -S counters of $a, one "name value" a line.
ethtool_s() { ip netns exec na ethtool -S "$a" | awk -F': *' 'NR > 1 { gsub(/ /, "", $1); print $1, $2 }'; }
# step_delta NAME: the ethtool -S counters of $a that changed since the last
# call, into /tmp/$drv.$NAME.ethtool.
step_delta() {
	ethtool_s >/tmp/es.now
	awk 'NR == FNR { b[$1] = $2; next } $2 != b[$1] { print $1, $2 - b[$1] }' \
		/tmp/es.before /tmp/es.now >"/tmp/$drv.$1.ethtool"
	cp /tmp/es.now /tmp/es.before
	echo "$drv $1: ethtool -S deltas: $(tr '\n' ' ' <"/tmp/$drv.$1.ethtool")"
}

# tcp_bulk NAME: 4 MiB over TCP from na to nb; every byte must arrive.
# busybox nc exits when its socket reads end of file, and closes its sending
# half when its input does: the receiver's input stays open, so it closes
# only after the sender's end of file, and the sender only then (timeouts
# bound a stalled transfer).
tcp_bulk() {
	: >/tmp/tcp-recv
	t0=$(date +%s)
	sleep 75 | ip netns exec nb timeout 70 nc -l -p 7001 >/tmp/tcp-recv &
	sleep 1
	ip netns exec na timeout 60 nc 10.21.0.2 7001 </tmp/tcp-send >/dev/null
	rc=$?
	t=$(($(date +%s) - t0))
	kill $(jobs -p) 2>/dev/null
	wait
	got=$(stat -c %s /tmp/tcp-recv)
	echo "$drv $1: nc exit $rc, sent 4194304 bytes, received $got in $t s;" \
		"receiving port: $(cat /sys/class/infiniband/opasim1/ports/1/hw_counters/rcv_dropped) dropped"
	cmp -s /tmp/tcp-send /tmp/tcp-recv || fail "$drv $1: received $got of 4194304 bytes, or other bytes"
}

run_with() {
	drv=$1
	echo "=== $drv"
	load_vnic_stack "$drv" vnic_sdma_descs=64
	must /opa/vnic-em -d umad0 apply /tmp/sg.toml >/dev/null
	a=$(netdev_by_mac 02:00:00:00:01:00)
	b=$(netdev_by_mac 02:00:00:00:02:00)
	[ -n "$a" ] && [ -n "$b" ] || fail "$drv: the VNIC netdevs are missing"
	quiet_netns na nb
	n=1
	for pair in "na $a" "nb $b"; do
		set -- $pair
		must ip link set "$2" netns "$1"
		must ip -n "$1" link set "$2" mtu 9000
		must ip -n "$1" addr add 10.21.0.$n/24 dev "$2"
		must ip -n "$1" link set "$2" up
		must ip -n "$1" link set lo up
		vlan10 "$1" "$2" 10.22.0.$n/24
		n=2
	done
	for peer in "na $a 2 02:00:00:00:02:00" "nb $b 1 02:00:00:00:01:00"; do
		set -- $peer
		permanent_neigh "$1" "$2" "$4" 10.21.0.$3
		permanent_neigh "$1" vl10 "$4" 10.22.0.$3
	done
	sleep 3

	echo "== $drv: features"
	ip netns exec na ethtool -k "$a" | grep -E '^(scatter-gather|highdma):'
	ip netns exec na ethtool -k "$a" | grep -q '^scatter-gather: on' ||
		fail "$drv: scatter-gather is not on, as hfi1 has it"

	echo "== $drv: layouts"
	ethtool_s >/tmp/es.before
	rx0=$(netstat_of nb "$b" rx_packets)
	echo clear >/sys/kernel/debug/opasim/capture
	must ip netns exec na /opa/vnic-send --udp-more 10.21.0.2:9 --count 8 --len 3000
	sleep 1
	[ "$(captured)" -ge 8 ] || fail "$drv: fewer than 8 packets from LID 1 to LID 2 on the wire"
	capture_ipv4_headers >"/tmp/$drv.more.hdr"
	step_delta udp-more
	echo clear >/sys/kernel/debug/opasim/capture
	for len in 4200 6000 9014; do
		must ip netns exec na /opa/vnic-send --dev "$a" --kind ipv4-udp --dmac $B --len $len --count 2 --flows 2
	done
	sleep 1
	[ "$(captured)" -ge 6 ] || fail "$drv: fewer than 6 packets from LID 1 to LID 2 on the wire"
	capture_ipv4_headers >"/tmp/$drv.packet.hdr"
	step_delta packet
	rx=$(($(netstat_of nb "$b" rx_packets) - rx0))
	echo "$drv: $b received $rx frames of the 14 sent"
	[ "$rx" -ge 14 ] || fail "$drv: $b received $rx of the 14 frames"
	if [ "$drv" = opa_vnic_rs ]; then
		echo clear >/sys/kernel/debug/opasim/capture
		must ip netns exec na /opa/vnic-send --raw --dev "$a" --kind ipv4-udp --dmac $B --len 9014 --count 2 --flows 2
		sleep 1
		[ "$(captured)" -ge 2 ] || fail "$drv: fewer than 2 packets from LID 1 to LID 2 on the wire"
		capture_ipv4_headers >/tmp/raw.hdr
		grep -q -F -f /tmp/raw.hdr "/tmp/$drv.packet.hdr" ||
			fail "$drv: raw jumbo frames got other headers than the same frames from a datagram socket"
		step_delta raw
	fi

	echo "== $drv: VL 2's MTU lowered by the fabric manager to 4096"
	echo 2:5000 >$PORT/vl_mtu 2>/dev/null && fail "vl_mtu took an MTU OPA does not have"
	must sh -c "echo 2:4096 >$PORT/vl_mtu"
	grep -q '^10240 10240 4096 10240 10240 10240 10240 10240$' $PORT/vl_mtu || fail "vl_mtu reads $(cat $PORT/vl_mtu)"
	long0=$(awk '$1 == "too_long" { print $2 }' $PORT/vnic_drops)
	must ip netns exec na /opa/vnic-send --dev "$a" --kind ipv4-udp --dmac $B --len 9014 --count 2 --flows 2
	must ip netns exec na /opa/vnic-send --dev "$a" --kind ipv4-udp --dmac $B --len 4000 --count 2 --flows 2
	sleep 1
	long=$(($(awk '$1 == "too_long" { print $2 }' $PORT/vnic_drops) - long0))
	echo "$drv: 2 frames of 9014 bytes and 2 of 4000 on VL 2 (MTU 4096): $long dropped as too long"
	[ "$long" = 2 ] || fail "$drv: $long frames dropped as too long, not the 2 over the VL's MTU"
	must sh -c "echo default >$PORT/vl_mtu"
	step_delta vl-mtu >/dev/null

	echo "== $drv: a VLAN whose PCP maps to another VL"
	mm0=$(sdma queue_vl_mismatch)
	for i in 1 2 3 4; do
		echo_once "$drv" na 10.22.0.2 || fail "$drv: no ping over the VLAN"
	done
	mm=$(($(sdma queue_vl_mismatch) - mm0))
	echo "$drv vlan: frames sent on another queue than their VL's: $mm"
	echo "$mm" >"/tmp/$drv.vlan-mismatch"

	echo "== $drv: packets the receiving chip flagged"
	# hfi1 drops what its receive header flags mark bad and counts it on
	# the vport (rx_crc_errors for an ICRC error, rx_frame_errors for the
	# rest); opasim flags the next packets of a port on request.
	RX=/sys/kernel/debug/opasim/opasim1/port1/rx_errors
	echo "crc 1" >$RX 2>/dev/null && fail "rx_errors took an unknown kind"
	must sh -c "echo icrc 2 >$RX"
	must sh -c "echo frame 1 >$RX"
	s0=$(rx_counts)
	must ip netns exec na /opa/vnic-send --dev "$a" --kind ipv4-udp --dmac $B --len 1000 --count 5 --flows 1
	sleep 1
	set -- $s0 $(rx_counts)
	d_rx=$(($5 - $1)) d_err=$(($6 - $2)) d_crc=$(($7 - $3)) d_frame=$(($8 - $4))
	echo "$drv rx-errors: 5 sent, 3 flagged: received $d_rx, rx_errors $d_err, crc $d_crc, frame $d_frame"
	[ "$d_crc" = 2 ] && [ "$d_frame" = 1 ] && [ "$d_err" = 3 ] ||
		fail "$drv: the flagged packets are not counted as 2 CRC and 1 frame errors"
	[ "$d_rx" -ge 2 ] || fail "$drv: $d_rx of the 2 good frames received"
	grep -q '^icrc 0$' $RX && grep -q '^frame 0$' $RX || fail "rx_errors still pending: $(cat $RX)"

	echo "== $drv: TCP, small SDMA ring"
	busy0=$(sdma tx_busy) wakes0=$(sdma queue_wakes)
	ip netns exec na sh -c 'echo 0 >/proc/sys/net/ipv4/tcp_timestamps'
	ip netns exec nb sh -c 'echo 0 >/proc/sys/net/ipv4/tcp_timestamps'
	tcp_bulk "tcp without timestamps"
	ip netns exec na sh -c 'echo 1 >/proc/sys/net/ipv4/tcp_timestamps'
	ip netns exec nb sh -c 'echo 1 >/proc/sys/net/ipv4/tcp_timestamps'
	tcp_bulk "tcp with timestamps"
	dropped=$(netstat_of na "$a" tx_dropped)
	busy=$(($(sdma tx_busy) - busy0)) wakes=$(($(sdma queue_wakes) - wakes0))
	echo "$drv tcp: tx_dropped $dropped, NETDEV_TX_BUSY $busy, queues woken $wakes"
	cat $PORT/vnic_sdma
	[ "$dropped" = 0 ] || fail "$drv: $dropped frames dropped on transmit"
	# Whether the ring fills depends on when the DMA work item runs against
	# the sender (it does on the default kernel; on the debug kernel it may
	# keep up): counted, and every stop must have been woken. A completion
	# that races the stop may wake the queue as well as the transmit's own
	# restart, so wakes may exceed stops, never fall short.
	[ "$wakes" -ge "$busy" ] || fail "$drv: $busy pushbacks, $wakes queues woken"
	step_delta tcp >/dev/null

	echo "== $drv: a burst of 600 frames into the 64-descriptor ring"
	busy0=$(sdma tx_busy)
	tx0=$(netstat_of na "$a" tx_packets) rx0=$(netstat_of nb "$b" rx_packets)
	bvm0=$(awk '$1 == "bad_vl_mapping" { print $2 }' $PORT/vnic_drops)
	# The rings' completions held (opasim's vnic_tx_hold) while the burst is
	# posted: the rings fill and push back on a kernel of any speed; the
	# qdisc keeps the rest. The sender runs on: its socket's send buffer is
	# smaller than the burst, so it waits for the release.
	must sh -c "echo hold >$PORT/vnic_tx_hold"
	ip netns exec na /opa/vnic-send --dev "$a" --kind ipv4-udp --dmac $B --len 1000 --count 600 --flows 8 &
	sender=$!
	for i in $(seq 50); do
		[ "$(sdma tx_busy)" -gt "$busy0" ] && break
		sleep 0.2
	done
	held=$(awk '$1 == "queued" { print $2 }' $PORT/vnic_tx_hold)
	must sh -c "echo release >$PORT/vnic_tx_hold"
	wait_limit $sender 60 "vnic-send of the burst" || fail "$drv: vnic-send of the burst failed"
	# The qdisc holds what the ring pushed back until the ring's wakes: wait
	# for the frames to arrive (at most 30 s), then count.
	for i in $(seq 30); do
		[ $(($(netstat_of nb "$b" rx_packets) - rx0)) -ge 600 ] && break
		sleep 1
	done
	sleep 1
	tx=$(($(netstat_of na "$a" tx_packets) - tx0)) rx=$(($(netstat_of nb "$b" rx_packets) - rx0))
	busy=$(($(sdma tx_busy) - busy0))
	bvm=$(($(awk '$1 == "bad_vl_mapping" { print $2 }' $PORT/vnic_drops) - bvm0))
	echo "$drv burst: 600 sent, $held held in the rings, $tx transmitted, $rx received, NETDEV_TX_BUSY $busy"
	[ "$busy" -gt 0 ] || fail "$drv: the burst met no NETDEV_TX_BUSY with the completions held"
	# C's known fault (opa_vnic_rs.rst, "Real peers"): it reads the VLAN tag
	# for the SC from the header bytes it has just pushed, not written yet;
	# when they look like a tag, the SC comes from a PCP row, the VL does not,
	# and the HFI drops the packet (bad_vl_mapping). Reported for C, which
	# hit it once in a burst (67 of 600); never accepted for opa_vnic_rs.
	lost=0
	if [ "$drv" = opa_vnic ] && [ "$bvm" -gt 0 ]; then
		echo "$drv burst: $bvm packet(s) dropped by the VL mapping check (SC from stale bytes, a known C bug)"
		lost=$bvm
	fi
	if [ "$tx" != 600 ] || [ $((rx + lost)) != 600 ]; then
		# Where the frames went: the sender's rings and HFI drops, the receiving port's
		# counters, the receiving netdev's statistics.
		cat $PORT/vnic_sdma $PORT/vnic_drops
		grep . /sys/class/infiniband/opasim1/ports/1/hw_counters/*
		ip netns exec nb ethtool -S "$b" | grep -v ': 0$'
		fail "$drv: a burst of 600 frames: $tx transmitted, $rx received"
	fi
	stops=$(sdma queue_stops) wakes=$(sdma queue_wakes)
	[ "$wakes" -ge "$stops" ] || fail "$drv: $stops queue stops, $wakes wakes"
	step_delta burst >/dev/null

	# The C driver pushes its metadata in ndo_select_queue without looking at
	# the headroom: a frame the bridge floods to it with less than 4 bytes
	# (its own IPv6 neighbour solicitation) ends in skb_under_panic.
	if [ "$drv" = opa_vnic_rs ]; then
		echo "== $drv: frames forwarded from a veth"
		must ip netns add nx
		must ip link add vx0 netns na type veth peer name vx1 netns nx
		must ip -n na link add br0 type bridge
		for d in vx0 "$a"; do
			must ip -n na link set "$d" master br0
		done
		for l in "na vx0" "nx vx1" "na br0"; do
			set -- $l
			must ip -n "$1" link set "$2" mtu 9000
			must ip -n "$1" link set "$2" up
		done
		sleep 1
		echo clear >/sys/kernel/debug/opasim/capture
		must ip netns exec nx /opa/vnic-send --raw --dev vx1 --kind ipv4-udp --dmac $B --len 6000 --count 2 --flows 2
		sleep 1
		capture_ipv4_headers >"/tmp/$drv.fwd.hdr"
		echo "$drv forwarded:"
		cat "/tmp/$drv.fwd.hdr"
		[ "$(captured)" -ge 2 ] || fail "$drv: the forwarded frames did not go out"
		grep -q -F -f "/tmp/$drv.fwd.hdr" "/tmp/$drv.packet.hdr" ||
			fail "$drv: forwarded frames got other headers than the same frames sent directly"
		must ip -n na link set "$a" nomaster
		ip netns del nx
	fi

	echo "== $drv: rmmod under traffic"
	reload_under_traffic "$drv" /tmp/sg.toml na nb 10.21.0.2
	netns_host ma "$vport_a" 10.23.0.1/24
	netns_host mb "$vport_b" 10.23.0.2/24
	sleep 1
	stream_start ma mb 10.23.0.2
	must rmmod opasim
	must rmmod "$drv"
	must rmmod ib_umad
	stream_stop
	for ns in na nb ma mb; do ip netns del $ns; done
}

head -c 4194304 /dev/urandom >/tmp/tcp-send
run_with opa_vnic
run_with opa_vnic_rs

echo "== the drivers compared"
for f in more.hdr packet.hdr udp-more.ethtool packet.ethtool; do
	if cmp -s "/tmp/opa_vnic.$f" "/tmp/opa_vnic_rs.$f"; then
		echo "$f: the same"
	else
		diff "/tmp/opa_vnic.$f" "/tmp/opa_vnic_rs.$f"
		fail "$f differs between opa_vnic and opa_vnic_rs"
	fi
done
echo "VLAN frames on another queue than their VL's: opa_vnic $(cat /tmp/opa_vnic.vlan-mismatch), opa_vnic_rs $(cat /tmp/opa_vnic_rs.vlan-mismatch)"
[ "$(cat /tmp/opa_vnic_rs.vlan-mismatch)" = 0 ] || fail "opa_vnic_rs chose queues of another VL"
check_dmesg_clean
echo "vnic-hfi1-netdev: ok"
