# SPDX-License-Identifier: GPL-2.0
# opasim's SMA and PMA through the real MAD stack: directed-route SMPs to the local port from
# a QP0 agent over /dev/infiniband/umad* (as opamgt, the SM and the admin tools send them),
# which the core hands to the provider's process_mad (handle_outgoing_dr_smp()); answers
# checked against sysfs and debugfs; a wrong route refused by the core; the PMA read through
# sysfs's counters (the core's own PerfMgmt queries); the traps the SMA sends the SM's port.
# Needs /opa/opasim-umad.
. /opa/guest-lib.sh

umad=/opa/opasim-umad
[ -x $umad ] || fail "$umad is missing"
must modprobe opasim
must modprobe ib_umad
ib=/sys/class/infiniband/opasim0
dbg=/sys/kernel/debug/opasim/opasim0/port1

# field OUT OFFSET LEN: LEN bytes (hex) at OFFSET of the attribute data opasim-umad printed
# in OUT.
field() {
	sed -n 's/^data //p' "$1" | cut -c$((2 * $2 + 1))-$((2 * ($2 + $3)))
}
guid_hex() { tr -d ':' <"$1"; }
# show OUT: what opasim-umad printed, its data cut to 64 bytes.
show() { sed 's/^\(data .\{128\}\).*/\1 .../' "$1"; }

echo "== IB NodeInfo, as opamgt's port_is_opa() asks"
must $umad smp umad0 0x11 --ib >/tmp/ni
show /tmp/ni
grep -q 'method 0x81 status 0x8000' /tmp/ni || fail "IB NodeInfo: not a good answer"
expect "base and class version, node type, ports" "$(field /tmp/ni 0 4)" 80800101
expect "IB NodeInfo's node GUID" "$(field /tmp/ni 12 8)" "$(guid_hex $ib/node_guid)"

echo "== OPA NodeInfo and NodeDescription"
must $umad smp umad0 0x11 >/tmp/ni
show /tmp/ni
expect "OPA NodeInfo's port GUID is the node GUID" "$(field /tmp/ni 24 8)" "$(guid_hex $ib/node_guid)"
echo "opasim-sma host" >$ib/node_desc
must $umad smp umad0 0x10 >/tmp/nd
expect "NodeDescription" "$(field /tmp/nd 0 15)" "$(printf 'opasim-sma host' | od -An -tx1 | tr -d ' \n')"

echo "== PortInfo against sysfs and debugfs"
must $umad smp umad0 0x15 --am 0x01000000 >/tmp/pi
show /tmp/pi
expect "PortInfo LID" "$((16#$(field /tmp/pi 0 4)))" "$(($(cat $ib/ports/1/lid)))"
expect "PortInfo port state (LinkUp, Active)" "$(field /tmp/pi 19 1)" 54
expect "PortInfo local port number" "$(field /tmp/pi 239 1)" 01
must sh -c "echo down >$dbg/state"
must $umad smp umad0 0x15 --am 0x01000000 >/tmp/pi
expect "PortInfo after debugfs state down (Polling, Down)" "$(field /tmp/pi 19 1)" 21
expect "sysfs state after it" "$(cat $ib/ports/1/state)" "1: DOWN"
must sh -c "echo active >$dbg/state"

echo "== refusals"
must $umad smp umad0 0x99 >/tmp/bad
grep -q 'status 0x800c' /tmp/bad || fail "an unknown attribute was not refused as unsupported"
must $umad smp umad0 0x11 --am 1 >/tmp/bad
grep -q 'status 0x801c' /tmp/bad || fail "NodeInfo with a modifier was not an invalid field"
rc=0
$umad smp umad0 0x11 --hop-ptr 3 >/tmp/bad || rc=$?
show /tmp/bad
expect "a bad hop pointer: the MAD layer refuses the send" "$rc" 2
dmesg_new | grep -q 'OPA Invalid directed route' || fail "no 'OPA Invalid directed route' in the log"

echo "== the PMA through sysfs counters"
ls $ib/ports/1/counters/
tx0=$(cat $ib/ports/1/counters/port_xmit_packets)
must $umad ping umad0 umad1 2
tx1=$(cat $ib/ports/1/counters/port_xmit_packets)
echo "port_xmit_packets: $tx0 -> $tx1"
[ "$tx1" -gt "$tx0" ] || fail "the PMA's PortXmitPkts did not move with a MAD sent"
expect "PMA packets = opasim's counter" "$tx1" "$(cat $ib/ports/1/hw_counters/xmit_packets)"

echo "== traps to the SM (opasim1's port): node description, capability masks"
must sh -c 'echo "opasim1 1" >/sys/kernel/debug/opasim/sm'
$umad traps umad1 --count 3 --secs 30 >/tmp/traps 2>&1 &
tp=$!
sleep 2
echo "opasim-sma trap" >$ib/node_desc
# The VNIC driver sets IsEthOnFabric in CapabilityMask3 of both ports: trap 144 each.
must modprobe opa_vnic_rs
wait $tp || { cat /tmp/traps; fail "the SM's port did not get 3 traps"; }
cat /tmp/traps
# Trap 144's details: LID, CapabilityMask, reserved, CapabilityMask3, change flags.
grep -Eq '^trap 144 from LID 1 .*: 00000001[0-9a-f]{16}0001' /tmp/traps ||
	fail "no node-description trap from opasim0"
grep -Eq '^trap 144 from LID 1 .*: 00000001[0-9a-f]{8}000020000000' /tmp/traps ||
	fail "no capability trap with IsEthOnFabric from opasim0"
grep -Eq '^trap 144 from LID 2 .*: 00000002[0-9a-f]{8}000020000000' /tmp/traps ||
	fail "no capability trap with IsEthOnFabric from opasim1"
must rmmod opa_vnic_rs

must rmmod ib_umad
must rmmod opasim
check_dmesg_clean
echo "opasim-sma: ok"
