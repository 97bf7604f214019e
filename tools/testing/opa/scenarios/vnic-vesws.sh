# SPDX-License-Identifier: GPL-2.0
# Two vesws with four vports each, under the C opa_vnic (the oracle) and
# then opa_vnic_rs: opasim has two HFIs of two ports (LIDs 1-4); every port
# has a vport in vesw 1 (P_Key 0x8001) and one in vesw 2 (P_Key 0x8002),
# eight netdevs, each in its own network namespace. The EM gives every
# vport a MAC table entry for each other vport of its vesw, so unicast
# frames find their DLID in the table. Within each vesw, pings go from LID 1
# to every other LID and back, and a bulk TCP transfer crosses the HFIs;
# the frames on the wire carry their vesw's id and P_Key and the right
# LIDs; the 16B headers and what the EM reads back are the same for both
# drivers.
. /opa/guest-lib.sh

cat >/tmp/vesws.toml <<'TOML'
[em]
fabric_id = 1

[[vesw]]
id = 1
name = "blue"
pkey = 0x8001
eth_mtu = 1500
unknown_mcast_dlid = 0xf00001
mac_table_from_vports = true

[[vesw]]
id = 2
name = "green"
pkey = 0x8002
eth_mtu = 1500
unknown_mcast_dlid = 0xf00002
mac_table_from_vports = true
TOML
for lid in 1 2 3 4; do
	cat >>/tmp/vesws.toml <<TOML

[[vport]]
lid = $lid
vport = 0
vesw = 1
port_num = $lid
mac = "02:00:00:01:0$lid:00"

[[vport]]
lid = $lid
vport = 1
vesw = 2
port_num = $lid
mac = "02:00:00:02:0$lid:01"
TOML
done

run_with() {
	drv=$1
	echo "=== $drv"
	load_vnic_stack "$drv" devices=2 ports=2 pkeys=0xffff,0x8001,0x8002
	must /opa/vnic-em -d umad0 apply /tmp/vesws.toml >/dev/null
	/opa/vnic-em -d umad0 apply --check /tmp/vesws.toml >/dev/null ||
		fail "$drv: the fabric differs from the applied config"
	/opa/vnic-em -d umad0 show -c /tmp/vesws.toml --json --no-counters >"/tmp/$drv.vshow" ||
		fail "$drv: show"
	for v in 1 2; do
		for lid in 1 2 3 4; do
			nd=$(netdev_by_mac "02:00:00:0$v:0$lid:0$((v - 1))")
			[ -n "$nd" ] || fail "$drv: no netdev for vesw $v on LID $lid"
			netns_host "v${v}l$lid" "$nd" "10.$v.0.$lid/24"
			eval "nd_${v}_$lid=\$nd"
		done
	done
	# Permanent neighbours between LID 1 and the others, in each vesw: a
	# neighbour entry the pings leave behind is probed (a unicast ARP) some
	# seconds later, which would land among the other vesw's frames between
	# the same LIDs when the kernel is slow (the debug kernel).
	for v in 1 2; do
		for lid in 2 3 4; do
			eval "d1=\$nd_${v}_1 dl=\$nd_${v}_$lid"
			must ip -n "v${v}l1" neigh replace "10.$v.0.$lid" lladdr "02:00:00:0$v:0$lid:0$((v - 1))" \
				dev "$d1" nud permanent
			must ip -n "v${v}l$lid" neigh replace "10.$v.0.1" lladdr "02:00:00:0$v:01:0$((v - 1))" \
				dev "$dl" nud permanent
		done
	done
	sleep 1
	: >"/tmp/$drv.vhdr"
	for v in 1 2; do
		# The capture keeps the last 64 frames: one vesw at a time.
		echo clear >/sys/kernel/debug/opasim/capture
		for lid in 2 3 4; do
			ip netns exec "v${v}l1" timeout 10 ping -c 1 "10.$v.0.$lid" >/dev/null ||
				{ cat /sys/kernel/debug/opasim/capture; fail "$drv: vesw $v: no ping from LID 1 to LID $lid"; }
			ip netns exec "v${v}l$lid" timeout 10 ping -c 1 "10.$v.0.1" >/dev/null ||
				fail "$drv: vesw $v: no ping from LID $lid to LID 1"
		done
		# Each vesw's frames carry its own id and P_Key, between the right LIDs.
		for lid in 2 3 4; do
			must /opa/opasim-capture --slid 1 --dlid $lid --pkey 0x800$v --vesw $v --ethertype 0x0800 --min 1
			must /opa/opasim-capture --slid $lid --dlid 1 --pkey 0x800$v --vesw $v --ethertype 0x0800 --min 1
		done
		capture_ipv4_headers >>"/tmp/$drv.vhdr"
	done
	wc -l <"/tmp/$drv.vhdr"

	# A bulk transfer in each vesw, across the two HFIs, both at once.
	ip netns exec v1l3 timeout 60 iperf3 -s -1 >/dev/null 2>&1 &
	ip netns exec v2l4 timeout 60 iperf3 -s -1 >/dev/null 2>&1 &
	sleep 1
	ip netns exec v1l1 timeout 40 iperf3 -c 10.1.0.3 -t 3 >/tmp/iperf1 2>&1 &
	c1=$!
	ip netns exec v2l2 timeout 40 iperf3 -c 10.2.0.4 -t 3 >/tmp/iperf2 2>&1 ||
		{ cat /tmp/iperf2; fail "$drv: vesw 2: bulk transfer from LID 2 to LID 4 failed"; }
	wait $c1 || { cat /tmp/iperf1; fail "$drv: vesw 1: bulk transfer from LID 1 to LID 3 failed"; }
	grep receiver /tmp/iperf1 /tmp/iperf2
	wait

	# The counters the EM reads show each vport's traffic.
	for v in 1 2; do
		/opa/vnic-em -d umad0 counters -l 1 --vport $((v - 1)) --json >/tmp/counters.json ||
			fail "$drv: counters of vesw $v on LID 1"
		grep -q '"tx_unicast": *0,' /tmp/counters.json && fail "$drv: vesw $v: no unicast sent counted"
		grep -q '"rx_unicast": *0,' /tmp/counters.json && fail "$drv: vesw $v: no unicast received counted"
	done

	for v in 1 2; do
		for lid in 1 2 3 4; do
			ip netns del "v${v}l$lid"
		done
	done
	unload_vnic_stack "$drv"
}

run_with opa_vnic
run_with opa_vnic_rs

cmp -s /tmp/opa_vnic.vshow /tmp/opa_vnic_rs.vshow || {
	diff /tmp/opa_vnic.vshow /tmp/opa_vnic_rs.vshow
	fail "the EM reads a different state back from opa_vnic_rs than from opa_vnic"
}
cmp -s /tmp/opa_vnic.vhdr /tmp/opa_vnic_rs.vhdr || {
	diff /tmp/opa_vnic.vhdr /tmp/opa_vnic_rs.vhdr
	fail "opa_vnic_rs puts other 16B headers on the wire than opa_vnic"
}
check_dmesg_clean
echo "vnic-vesws: ok"
