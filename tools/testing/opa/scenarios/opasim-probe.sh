# SPDX-License-Identifier: GPL-2.0
# opasim registers its default devices (2 devices of 1 port, LIDs 1 and 2, P_Keys 0xffff,
# 0x8001 and 0x7fff, as an SM would program a management node) as OPA, VNIC-capable RDMA devices with ACTIVE ports; the MAD stack, umad, the
# C opa_vnic and opa_vnic_rs attach to them; everything unloads cleanly, in either order.
. /opa/guest-lib.sh

must modprobe opasim
dmesg_new | grep opasim
rdma link show
for d in 0 1; do
	dev=/sys/class/infiniband/opasim$d
	[ -d $dev ] || fail "no $dev"
	state=$(cat $dev/ports/1/state)
	echo "opasim$d: state '$state' lid $(cat $dev/ports/1/lid) pkeys $(cat $dev/ports/1/pkeys/0) $(cat $dev/ports/1/pkeys/1)"
	[ "$state" = "4: ACTIVE" ] || fail "opasim$d port 1 is not ACTIVE"
	[ "$(cat $dev/ports/1/phys_state)" = "5: LinkUp" ] || fail "opasim$d port 1 is not LinkUp"
	[ "$(cat $dev/ports/1/lid)" = "0x$((d + 1))" ] || fail "opasim$d has LID $(cat $dev/ports/1/lid)"
	[ "$(cat $dev/ports/1/pkeys/0)" = "0xffff" ] || fail "opasim$d P_Key 0"
	[ "$(cat $dev/ports/1/pkeys/1)" = "0x8001" ] || fail "opasim$d P_Key 1"
	[ "$(cat $dev/ports/1/pkeys/2)" = "0x7fff" ] || fail "opasim$d P_Key 2"
	[ "$(cat $dev/node_type)" = "1: CA" ] || fail "opasim$d is not a CA"
done
rdma link show | grep -q 'opasim0/1 .*state ACTIVE' || fail "rdma link does not show opasim0/1 ACTIVE"

# CapabilityMask3 of port 1 of opasim$1, as ib_modify_port() left it.
cap3() {
	sed -n 's/^cap_mask3 //p' /sys/kernel/debug/opasim/opasim$1/port1/capabilities
}
# Both ports advertise IsEthOnFabricSupported (0x2000) or neither.
expect_eth_cap() {
	for d in 0 1; do
		[ "$(cap3 $d)" = "$2" ] || fail "$1: opasim$d CapabilityMask3 is '$(cap3 $d)', expected $2"
	done
}
cat /sys/kernel/debug/opasim/opasim0/port1/capabilities
expect_eth_cap "no VNIC driver" 0x0000
echo 0x2000 >/sys/kernel/debug/opasim/opasim0/port1/capabilities 2>/dev/null &&
	fail "the capabilities file took a write"

# The Rust VNIC driver sees them as VNIC capable and advertises Ethernet on their ports
# while it serves them.
must modprobe opa_vnic_rs
log=$(dmesg_new)
echo "$log" | grep opa_vnic_rs
for d in 0 1; do
	echo "$log" | grep -q "opa_vnic_rs: opasim$d: ports 1-1, OPA VNIC capable: yes" ||
		fail "opa_vnic_rs does not see opasim$d as VNIC capable"
done
expect_eth_cap "opa_vnic_rs loaded" 0x2000
must rmmod opa_vnic_rs
expect_eth_cap "opa_vnic_rs unloaded" 0x0000

# umad: one device node per port, with the port's identity.
must modprobe ib_umad
for n in 0 1; do
	[ -c /dev/infiniband/umad$n ] || fail "no /dev/infiniband/umad$n"
done
ls /sys/class/infiniband_mad/
cat /sys/class/infiniband_mad/umad0/ibdev /sys/class/infiniband_mad/umad0/port

# The C opa_vnic registers its VEMA agents on the ports (it would fail to load otherwise).
must modprobe opa_vnic
dmesg_new | grep -i vnic
grep -q '^opa_vnic ' /proc/modules || fail "opa_vnic is not loaded"
expect_eth_cap "opa_vnic loaded" 0x2000

# Unloading opasim while the ULPs hold its devices is clean: they are told to let go.
must rmmod opasim
[ -e /sys/class/infiniband/opasim0 ] && fail "opasim0 still exists"
[ -e /dev/infiniband/umad0 ] && fail "umad0 still exists"
must modprobe opasim
[ -c /dev/infiniband/umad0 ] || fail "umad0 did not come back"
expect_eth_cap "opa_vnic, opasim reloaded" 0x2000
must rmmod opa_vnic
expect_eth_cap "opa_vnic unloaded" 0x0000
must rmmod ib_umad
for p in devices ports pkeys; do
	echo "parameter $p: $(cat /sys/module/opasim/parameters/$p)"
done
[ "$(cat /sys/module/opasim/parameters/devices)" = 2 ] || fail "the devices parameter is not 2"
must rmmod opasim

echo "== module parameters: 3 devices of 2 ports, other P_Keys"
must modprobe opasim devices=3 ports=2 pkeys=0xffff,0x8002,0x0003
rdma link show
[ "$(rdma link show | grep -c 'state ACTIVE')" = 6 ] || fail "expected 6 ACTIVE ports"
[ "$(cat /sys/class/infiniband/opasim2/ports/2/lid)" = 0x6 ] || fail "opasim2/2 does not have LID 6"
[ "$(cat /sys/kernel/debug/opasim/opasim1/port2/pkeys)" = "0xffff 0x8002 0x0003" ] ||
	fail "the P_Keys are not those of the parameter"
must rmmod opasim
echo "== managed: the ports' P_Keys are hfi1's after reset, until an SM programs them"
must modprobe opasim managed=1 devices=1
keys=$(cat /sys/kernel/debug/opasim/opasim0/port1/pkeys)
echo "managed, after reset: $keys"
[ "$keys" = "0x8001 0x7fff" ] || fail "a managed port starts with P_Keys '$keys', not hfi1's 0x8001 0x7fff"
must sh -c 'echo add 1 >/sys/kernel/debug/opasim/devices'
keys=$(cat /sys/kernel/debug/opasim/opasim1/port1/pkeys)
[ "$keys" = "0x8001 0x7fff" ] || fail "a managed port added at run time starts with P_Keys '$keys'"
must rmmod opasim
for bad in devices=17 ports=0 ports=9 pkeys=0x8000 pkeys=; do
	modprobe opasim $bad 2>/dev/null && fail "opasim loaded with $bad"
	grep -q '^opasim ' /proc/modules && fail "opasim is loaded after $bad"
	echo "refused: $bad"
done
dmesg_new | grep opasim
check_dmesg_clean
echo "opasim-probe: ok"
