# SPDX-License-Identifier: GPL-2.0
# The data path of each driver, the C opa_vnic (the oracle) and then
# opa_vnic_rs, on the same fabric: vnic-em configures one vport on each
# opasim port (LIDs 1 and 2, vesw 1, P_Key 0x8001); the two VNIC netdevs,
# each in its own network namespace, ping each other and move a bulk TCP
# transfer (iperf3); the 16B headers of the IPv4 frames on the wire must
# be the same for both drivers (entropy aside: it comes from the flow
# hash), what the EM reads back after applying the config must be the
# same, and the device must be removable under both with the netdevs up.
. /opa/guest-lib.sh

for b in vnic-em opasim-capture; do [ -x /opa/$b ] || fail "/opa/$b is missing"; done
two_vport_fabric

run_with() {
	drv=$1
	echo "=== $drv"
	load_vnic_stack "$drv"
	must /opa/vnic-em -d umad0 apply /tmp/fabric.toml
	# Applied again, the config finds nothing to change: every field reads
	# back as configured. And the whole state the EM reads back must be the
	# same under both drivers.
	/opa/vnic-em -d umad0 apply --check /tmp/fabric.toml >/dev/null ||
		fail "$drv: the fabric differs from the applied config"
	/opa/vnic-em -d umad0 show -c /tmp/fabric.toml --json --no-counters >"/tmp/$drv.show" ||
		fail "$drv: show"
	a=$(netdev_by_mac 02:00:00:00:01:00)
	b=$(netdev_by_mac 02:00:00:00:02:00)
	[ -n "$a" ] && [ -n "$b" ] || fail "$drv: the VNIC netdevs are missing"
	echo "$drv: vport of LID 1: $a, vport of LID 2: $b"
	netns_host na "$a" 10.11.0.1/24
	netns_host nb "$b" 10.11.0.2/24
	sleep 1
	echo clear >/sys/kernel/debug/opasim/capture
	for i in 1 2 3; do
		ip netns exec na ping -c 1 -W 2 10.11.0.2 >/dev/null || fail "$drv: no ping from LID 1 to LID 2"
		ip netns exec nb ping -c 1 -W 2 10.11.0.1 >/dev/null || fail "$drv: no ping from LID 2 to LID 1"
	done
	must /opa/opasim-capture --slid 1 --dlid 2 --pkey 0x8001 --vesw 1 --ethertype 0x0800 --min 3
	must /opa/opasim-capture --slid 2 --dlid 1 --pkey 0x8001 --vesw 1 --ethertype 0x0800 --min 3
	capture_ipv4_headers >"/tmp/$drv.hdr"
	# The EM reads the state back: forwarding, link up.
	/opa/vnic-em -d umad0 show -l 1 --vport 0 --json --no-counters >/tmp/show.json ||
		fail "$drv: show"
	grep -q '"oper_state": "forwarding"' /tmp/show.json || fail "$drv: vport not forwarding"

	# The counters the EM reads come from the device's statistics.
	/opa/vnic-em -d umad0 counters -l 1 --vport 0 --json >/tmp/counters.json || fail "$drv: counters"
	grep -q '"tx_packets": *0,' /tmp/counters.json && fail "$drv: no transmitted packets counted"
	grep -q '"rx_unicast": *0,' /tmp/counters.json && fail "$drv: no unicast received counted"
	grep -E '"(tx|rx)_(packets|unicast)"' /tmp/counters.json

	# ethtool: the statistics' names (the same for both drivers) and values.
	ip netns exec na ethtool -S "$a" >"/tmp/$drv.ethtool" || fail "$drv: ethtool -S"
	awk -F: 'NR > 1 { print $1 }' "/tmp/$drv.ethtool" >"/tmp/$drv.ethtool-names"
	grep -Eq '^ +tx_unicast: [1-9]' "/tmp/$drv.ethtool" || fail "$drv: ethtool -S counts no unicast sent"
	# ethtool -i: the driver, and the IB device's parent as the bus (opasim's
	# root device, as hfi1's is its PCI device): the same under both drivers.
	ip netns exec na ethtool -i "$a" >"/tmp/$drv.drvinfo" || fail "$drv: ethtool -i"
	grep -q "^driver: $drv\$" "/tmp/$drv.drvinfo" || fail "$drv: ethtool -i does not name $drv"
	bus=$(sed -n 's/^bus-info: //p' "/tmp/$drv.drvinfo")
	[ -n "$bus" ] && [ -e "/sys/devices/$bus/infiniband" ] || {
		cat "/tmp/$drv.drvinfo"
		fail "$drv: ethtool -i does not name an IB device's parent as the bus"
	}
	echo "$bus" >"/tmp/$drv.bus"

	echo "== $drv: bulk transfer"
	ip netns exec nb iperf3 -s -1 -D >/dev/null || fail "$drv: iperf3 server"
	sleep 1
	ip netns exec na iperf3 -c 10.11.0.2 -t 2 -f m >/tmp/iperf.out 2>&1 || {
		cat /tmp/iperf.out
		fail "$drv: iperf3"
	}
	grep -E 'sender|receiver' /tmp/iperf.out
	ip -n na -s link show "$a"

	echo "== $drv: vport disabled, then enabled again"
	must /opa/vnic-em -d umad0 set -l 2 --vport 0 --disable >/dev/null
	# (busybox ping cannot time out on this kernel, which has no POSIX timers;
	# busybox's timeout runs its own ip applet for a bare "ip": iproute2's)
	timeout 5 /usr/bin/ip netns exec na ping -c 1 -W 2 10.11.0.2 >/dev/null &&
		fail "$drv: a disabled vport answers"
	must /opa/vnic-em -d umad0 set -l 2 --vport 0 --enable >/dev/null
	sleep 1
	ip netns exec na ping -c 1 -W 2 10.11.0.2 >/dev/null || fail "$drv: no answer once enabled again"

	echo "== $drv: the port goes down and up: so does the carrier"
	ctl=/sys/kernel/debug/opasim/opasim1/port1/state
	must sh -c "echo down >$ctl"
	sleep 1
	ip -n nb link show "$b" | grep -q NO-CARRIER || fail "$drv: carrier still on with the port down"
	must sh -c "echo active >$ctl"
	sleep 1
	ip -n nb link show "$b" | grep -q NO-CARRIER && fail "$drv: no carrier with the port active again"
	ip netns exec na ping -c 1 -W 2 10.11.0.2 >/dev/null || fail "$drv: no ping after the port came back"

	echo "== $drv: rmmod and insmod under traffic"
	reload_under_traffic "$drv" /tmp/fabric.toml na nb 10.11.0.2
	a=$vport_a b=$vport_b
	netns_host na2 "$a" 10.11.0.1/24
	netns_host nb2 "$b" 10.11.0.2/24
	sleep 1
	ip netns exec na2 ping -c 1 -W 2 10.11.0.2 >/dev/null || fail "$drv: no ping after reloading"

	# Remove the device with the netdevs up: they go away with it.
	must rmmod opasim
	ip -n na2 link show | grep -q "$a" && fail "$drv: $a survived the removal of its device"
	must rmmod "$drv"
	must rmmod ib_umad
	for ns in na nb na2 nb2; do ip netns del $ns; done
}

run_with opa_vnic
run_with opa_vnic_rs

cmp -s /tmp/opa_vnic.ethtool-names /tmp/opa_vnic_rs.ethtool-names || {
	diff /tmp/opa_vnic.ethtool-names /tmp/opa_vnic_rs.ethtool-names
	fail "ethtool -S names differ between the drivers"
}
cmp -s /tmp/opa_vnic.bus /tmp/opa_vnic_rs.bus ||
	fail "ethtool -i names the bus $(cat /tmp/opa_vnic_rs.bus) under opa_vnic_rs, $(cat /tmp/opa_vnic.bus) under opa_vnic"
cmp -s /tmp/opa_vnic.show /tmp/opa_vnic_rs.show || {
	diff /tmp/opa_vnic.show /tmp/opa_vnic_rs.show
	fail "the EM reads a different state back from opa_vnic_rs than from opa_vnic"
}

echo "== 16B headers of the IPv4 frames: C, then Rust"
cat /tmp/opa_vnic.hdr
cat /tmp/opa_vnic_rs.hdr
[ -s /tmp/opa_vnic.hdr ] || fail "no IPv4 frames captured"
cmp -s /tmp/opa_vnic.hdr /tmp/opa_vnic_rs.hdr || fail "opa_vnic_rs puts other headers on the wire than opa_vnic"
check_dmesg_clean
echo "vnic-datapath: ok"
