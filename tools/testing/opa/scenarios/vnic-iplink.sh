# SPDX-License-Identifier: GPL-2.0
# ip link and ip maddr on a VNIC interface, under the C opa_vnic (the
# oracle) and then opa_vnic_rs: the EM's eth_mtu bounds the MTU the stack
# may set, and a larger eth_mtu from the EM lets it grow; a multicast
# address added with ip maddr shows in the list the EM reads (and a
# multicast MAC list trap reaches the EM), and is gone from it once
# deleted; a secondary unicast address (bridge fdb add ... self) shows in
# the unicast list and is gone once deleted. What each step gives is written down and must be the same
# for both drivers.
. /opa/guest-lib.sh

two_vport_fabric

# The interface MAC lists of the vport on LID 2, as the EM reads them.
em_macs() {
	/opa/vnic-em -d umad0 show -l 2 --vport 0 --no-counters | grep "iface $1 macs" ||
		fail "$drv: the EM cannot read the $1 MAC list"
}

run_with() {
	drv=$1
	out=/tmp/$drv.iplink
	echo "=== $drv"
	load_vnic_stack "$drv"
	must /opa/vnic-em -d umad0 apply /tmp/fabric.toml >/dev/null
	b=$(netdev_by_mac 02:00:00:00:02:00)
	[ -n "$b" ] || fail "$drv: no netdev for LID 2"

	# eth_mtu 1500: the stack may go down to 1400, not up to 1501.
	must ip link set "$b" mtu 1400
	ip link set "$b" mtu 1501 2>/dev/null && fail "$drv: MTU 1501 taken with eth_mtu 1500"
	echo "mtu after 1400 and 1501: $(cat /sys/class/net/$b/mtu)" >>"$out"
	# The EM raises eth_mtu: 9000 is taken now, 9001 is not.
	must /opa/vnic-em -d umad0 set -l 2 --vport 0 --eth-mtu 9000 >/dev/null
	must ip link set "$b" mtu 9000
	ip link set "$b" mtu 9001 2>/dev/null && fail "$drv: MTU 9001 taken with eth_mtu 9000"
	echo "mtu after 9000 and 9001: $(cat /sys/class/net/$b/mtu)" >>"$out"
	[ "$(cat /sys/class/net/$b/mtu)" = 9000 ] || fail "$drv: the MTU is not 9000"

	must ip link set "$b" up
	sleep 2
	/opa/vnic-em -d umad0 traps --wait-ms 3000 --json >"/tmp/$drv.mtraps" 2>&1 &
	listener=$!
	sleep 1
	must ip maddr add 01:00:5e:01:02:03 dev "$b"
	wait $listener
	cat "/tmp/$drv.mtraps"
	grep -q '"opcode": *2' "/tmp/$drv.mtraps" || fail "$drv: no multicast MAC list trap after ip maddr add"
	m=$(em_macs mcast)
	echo "$m"
	echo "$m" | grep -q 01:00:5e:01:02:03 || fail "$drv: the EM does not see the multicast address"
	echo "mcast has 01:00:5e:01:02:03: yes" >>"$out"
	must ip maddr del 01:00:5e:01:02:03 dev "$b"
	m=$(em_macs mcast)
	echo "$m" | grep -q 01:00:5e:01:02:03 && fail "$drv: the EM still sees the deleted multicast address"
	echo "mcast has 01:00:5e:01:02:03 after del: no" >>"$out"

	# A secondary unicast address (bridge fdb ... self: the stack's default
	# FDB handler puts it in the device's unicast list).
	must /usr/bin/bridge fdb add 02:00:00:00:02:77 dev "$b" self permanent
	u=$(em_macs ucast)
	echo "$u"
	echo "$u" | grep -q 02:00:00:00:02:77 || fail "$drv: the EM does not see the secondary address"
	echo "ucast has 02:00:00:00:02:77: yes" >>"$out"
	must /usr/bin/bridge fdb del 02:00:00:00:02:77 dev "$b" self
	u=$(em_macs ucast)
	echo "$u" | grep -q 02:00:00:00:02:77 && fail "$drv: the EM still sees the deleted secondary address"
	echo "ucast has 02:00:00:00:02:77 after del: no" >>"$out"

	unload_vnic_stack "$drv"
}

run_with opa_vnic
run_with opa_vnic_rs

echo "== C, then Rust"
cat /tmp/opa_vnic.iplink
cat /tmp/opa_vnic_rs.iplink
cmp -s /tmp/opa_vnic.iplink /tmp/opa_vnic_rs.iplink ||
	fail "ip link and ip maddr give other results under opa_vnic_rs than under opa_vnic"
check_dmesg_clean
echo "vnic-iplink: ok"
