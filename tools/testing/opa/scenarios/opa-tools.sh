# SPDX-License-Identifier: GPL-2.0
# Debian's Omni-Path admin tools (opa-basic-tools, unmodified from the archive:
# scripts/opa/opa-tools) on opasim, under each VNIC driver: opamgt opens the ports (an IB
# Get(NodeInfo) answered with base version 0x80, libibverbs with opasim's provider), then
# opainfo, opasmaquery (NodeInfo, PortInfo, P_Keys, SL2SC, SC2VLt, buffer control), opaportinfo
# and opapmaquery (PortStatus before and after VNIC traffic, ClearPortStatus) print what
# opasim's state says, and opasaquery asks opasim-sa. The ports carry the limited management
# P_Key 0x7fff, which opamgt requires (hfi1 has it after reset). Needs the initramfs built
# with OPA_VERBS_ROOT and OPA_TOOLS_ROOT.
. /opa/guest-lib.sh
export PATH=/usr/sbin:$PATH

for t in opainfo opasmaquery opapmaquery opaportinfo opasaquery; do
	[ -x /usr/sbin/$t ] || fail "/usr/sbin/$t is missing (initramfs built without OPA_TOOLS_ROOT?)"
done
ib=/sys/class/infiniband
dbg=/sys/kernel/debug/opasim

# has FILE PATTERN WHAT: FILE has a line matching the extended regex PATTERN.
has() {
	grep -Eq "$2" "$1" || { cat "$1"; fail "$3: no line matching '$2' (above)"; }
	echo "ok: $3"
}
guid() { echo "0x$(tr -d : <$ib/$1/node_guid)"; }
# pm_field OUT NAME: the number after NAME in opapmaquery's output OUT (the flits for data).
pm_field() { sed -n "s/^ *$2 *\\([0-9]*\\).*/\\1/p" "$1" | head -n 1; }
flits() { sed -n "s/^ *$2 .*(\\([0-9]*\\) Flits).*/\\1/p" "$1" | head -n 1; }

run_with() {
	local drv=$1 a b tx0 txd0 tx1 txd1 h0 h1 sent
	echo "=== $drv"
	load_vnic_stack "$drv"
	must modprobe ib_uverbs

	echo "== opainfo"
	must opainfo >/tmp/opainfo 2>&1
	cat /tmp/opainfo
	has /tmp/opainfo "^opasim0:1 +PortGID:0xfe80000000000000:$(tr -d : <$ib/opasim0/node_guid)" \
		"opainfo: opasim0 port 1 and its GID"
	has /tmp/opainfo "^ +PortState: +Active" "opainfo: Active"
	has /tmp/opainfo "LID: 0x00000002-0x00000002 +SM LID: 0x00000000" "opainfo: opasim1's LID, no SM"

	echo "== opasmaquery"
	must opasmaquery -o nodeinfo >/tmp/ni 2>&1
	cat /tmp/ni
	has /tmp/ni "^NodeGuid: $(guid opasim0) PortGuid: $(guid opasim0)$" "nodeinfo: GUIDs (port 1's is the node's)"
	has /tmp/ni "^BaseVersion: 128 SmaVersion: 128 VendorID: 0x1175" "nodeinfo: OPA versions, vendor"
	echo "opa-tools host" >$ib/opasim0/node_desc
	must opasmaquery -o nodedesc >/tmp/nd 2>&1
	has /tmp/nd "^opa-tools host$" "nodedesc: the description written in sysfs"
	must opasmaquery -o portinfo -h 2 >/tmp/pi 2>&1
	has /tmp/pi "BaseLID: +0x00000002 +SMLID: +0x00000000" "portinfo: opasim1's LID"
	has /tmp/pi "PortState: +Active" "portinfo: Active"
	has /tmp/pi "NeighborNodeType: Switch" "portinfo: the neighbour is the switch"
	has /tmp/pi "Capability3: +0x2000" "portinfo: CapabilityMask3 has IsEthOnFabric ($drv)"
	must opasmaquery -o pkey >/tmp/pkey 2>&1
	has /tmp/pkey "0- +7: +0xffff +0x8001 +0x7fff +0x0000" "pkey: the port's table, opasim's default"
	must opasmaquery -o slsc >/tmp/slsc 2>&1
	has /tmp/slsc "^SC: 00 01 02 03" "slsc: the identity map after reset"
	echo "1:3" >$dbg/opasim0/port1/sc2vl || fail "cannot write sc2vl"
	must opasmaquery -o scvlt >/tmp/scvlt 2>&1
	has /tmp/scvlt "VLT: 00 03 02 03 04 05 06 07" "scvlt: the table debugfs changed (SC1 to VL3)"
	echo default >$dbg/opasim0/port1/sc2vl || fail "cannot restore sc2vl"
	must opasmaquery -o bfrctrl >/tmp/bct 2>&1
	has /tmp/bct "^VL15 : D: +272" "bfrctrl: VL15's credits"
	must opaportinfo >/tmp/opi 2>&1
	has /tmp/opi "Port 1 Info on HFI 1 \\(opasim0\\)" "opaportinfo: opasim0"

	echo "== opapmaquery around VNIC traffic"
	two_vport_fabric
	must /opa/vnic-em -d umad0 apply /tmp/fabric.toml
	a=$(netdev_by_mac 02:00:00:00:01:00)
	b=$(netdev_by_mac 02:00:00:00:02:00)
	[ -n "$a" ] && [ -n "$b" ] || fail "no VNIC netdevs"
	two_hosts "$a" "$b"
	must opapmaquery -o getportstatus >/tmp/ps0 2>&1
	cat /tmp/ps0
	tx0=$(pm_field /tmp/ps0 "Xmit Pkts") txd0=$(flits /tmp/ps0 "Xmit Data")
	must ip netns exec host1 ping -c 20 -i 0.05 -s 1000 -q 192.168.77.2
	h0=$(cat $ib/opasim0/ports/1/hw_counters/xmit_bytes)
	must opapmaquery -o getportstatus >/tmp/ps1 2>&1
	h1=$(cat $ib/opasim0/ports/1/hw_counters/xmit_bytes)
	tx1=$(pm_field /tmp/ps1 "Xmit Pkts") txd1=$(flits /tmp/ps1 "Xmit Data")
	echo "PortXmitPkts $tx0 -> $tx1, PortXmitData $txd0 -> $txd1 flits"
	[ "$tx1" -ge $((tx0 + 20)) ] || fail "PortXmitPkts did not count 20 pings"
	# 20 echo requests of 1000 bytes of data, 1042 on the wire after the IP and ICMP headers.
	sent=$(((txd1 - txd0) * 8))
	[ "$sent" -ge $((20 * 1028)) ] || fail "PortXmitData moved by $sent bytes, under 20 pings' 20560"
	# The query's own MADs go out of the port too: the counter read before and after it
	# brackets what the PMA answered.
	[ "$txd1" -ge $((h0 / 8)) ] && [ "$txd1" -le $((h1 / 8)) ] ||
		fail "PortXmitData $txd1 flits is not opasim's xmit_bytes ($h0 to $h1) in flits"
	echo "ok: PortXmitData $txd1 flits within opasim's xmit_bytes $h0..$h1 / 8"
	must opapmaquery -o clearportstatus >/tmp/clr 2>&1
	must opapmaquery -o getportstatus >/tmp/ps2 2>&1
	[ "$(pm_field /tmp/ps2 "Xmit Pkts")" -lt "$tx1" ] || fail "ClearPortStatus did not clear PortXmitPkts"
	must opapmaquery -o getdatacounters >/tmp/dc 2>&1
	has /tmp/dc "Port Number +1" "getdatacounters: port 1"
	must opapmaquery -o geterrorcounters >/tmp/ec 2>&1
	has /tmp/ec "Rcv Constraint Errors +0" "geterrorcounters: no P_Key violation"

	echo "== opasaquery against opasim-sa"
	: >/tmp/sa.log # emptied first: see wait_line
	/opa/opasim-sa --hca opasim0 --port 1 >/tmp/sa.log 2>&1 &
	local sa=$!
	wait_line /tmp/sa.log "ready on opasim0 port 1" 10 || { cat /tmp/sa.log; fail "opasim-sa did not start"; }
	must opasaquery -o node >/tmp/sa-node 2>&1
	cat /tmp/sa-node
	has /tmp/sa-node "$(guid opasim1)" "opasaquery -o node: opasim1's node"
	must opasaquery -o portinfo >/tmp/sa-pi 2>&1
	head -n 20 /tmp/sa-pi
	has /tmp/sa-pi "LID: 0x00000002|0x00000002" "opasaquery -o portinfo: LID 2"
	kill $sa
	wait $sa 2>/dev/null

	ip netns del host1
	ip netns del host2
	must rmmod ib_uverbs
	unload_vnic_stack "$drv"
}

run_with opa_vnic
run_with opa_vnic_rs
check_dmesg_clean
echo "opa-tools: ok"
