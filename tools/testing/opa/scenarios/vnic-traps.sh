# SPDX-License-Identifier: GPL-2.0
# Traps to the EM, from the C opa_vnic (the oracle) and then opa_vnic_rs:
# vnic-em applies a fabric (which points the agents' trap LID at the EM,
# LID 1) and listens; on LID 2 the vport's interface comes up (link status
# trap, and multicast list traps as the stack joins groups), gets a new
# MAC with ip link (unicast MAC trap) and goes down (link status trap).
# Both drivers must send the same set of traps, with the right issuer,
# vesw, port numbers and opcodes.
# Between the two MAC changes the P_Key table of LID 2 changes: the full
# default P_Key, which traps go with, moves from index 0 to index 1, and
# index 0 gets a P_Key the EM's port does not have. A driver that kept the
# old index would lose the second unicast MAC trap.
. /opa/guest-lib.sh

two_vport_fabric

run_with() {
	drv=$1
	echo "=== $drv"
	load_vnic_stack "$drv"
	must /opa/vnic-em -d umad0 apply /tmp/fabric.toml >/dev/null
	b=$(netdev_by_mac 02:00:00:00:02:00)
	[ -n "$b" ] || fail "$drv: no netdev for LID 2"
	/opa/vnic-em -d umad0 traps --wait-ms 12000 --json >"/tmp/$drv.traps" 2>&1 &
	listener=$!
	sleep 1
	# Each step waits out the drivers' trap rate window (about a second).
	must ip link set "$b" up
	sleep 2
	must ip link set "$b" address 02:00:00:00:02:99
	sleep 2
	echo "0x8002 0xffff 0x8001" >/sys/kernel/debug/opasim/opasim1/port1/pkeys ||
		fail "cannot change the P_Keys of LID 2"
	must ip link set "$b" address 02:00:00:00:02:98
	sleep 2
	must ip link set "$b" down
	wait $listener
	echo "listener exited $?"
	cat "/tmp/$drv.traps"
	# What must be the same for both drivers: every field but the TID.
	sed 's/, *"tid": *[0-9]*//; s/"tid": *[0-9]*, *//' "/tmp/$drv.traps" | sort -u >"/tmp/$drv.set"
	grep -q '"opcode": *3' "/tmp/$drv.set" || fail "$drv: no link status trap"
	grep -q '"opcode": *1' "/tmp/$drv.set" || fail "$drv: no unicast MAC trap"
	grep -q '"src_lid": *2,"issuer_lid": *2' "/tmp/$drv.set" || fail "$drv: traps do not come from LID 2"
	# How many unicast MAC and link status traps arrived: the set above
	# hides a trap lost after the P_Key change.
	uc=$(grep -c '"opcode": *1' "/tmp/$drv.traps")
	ls=$(grep -c '"opcode": *3' "/tmp/$drv.traps")
	echo "unicast MAC traps $uc, link status traps $ls" >"/tmp/$drv.counts"
	[ "$ls" = 2 ] || fail "$drv: $ls link status traps, expected 2 (up, down)"
	unload_vnic_stack "$drv"
}

run_with opa_vnic
run_with opa_vnic_rs

echo "== the traps: C, then Rust"
cat /tmp/opa_vnic.set
cat /tmp/opa_vnic_rs.set
cmp -s /tmp/opa_vnic.set /tmp/opa_vnic_rs.set || fail "opa_vnic_rs sends other traps than opa_vnic"
cat /tmp/opa_vnic.counts /tmp/opa_vnic_rs.counts
cmp -s /tmp/opa_vnic.counts /tmp/opa_vnic_rs.counts || fail "opa_vnic_rs sends fewer or more traps than opa_vnic"
check_dmesg_clean
echo "vnic-traps: ok"
