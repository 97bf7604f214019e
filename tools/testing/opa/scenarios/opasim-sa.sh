# SPDX-License-Identifier: GPL-2.0
# The subnet administrator of opasim's fabric (opasim-sa, tools/opa/opasim-sa), asked with
# sa-query as opa-ff's opasaquery asks opa-fm's: under each VNIC driver (which raises
# CapabilityMask3 IsEthOnFabricSupported on the ports it serves), six one-port HFIs, the SA on
# opasim0. It claims the SM role (every port's SMLID), answers NodeRecord, PortInfoRecord,
# McMemberRecord and PathRecord Gets and GetTables with component masks (the last two at
# InfiniBand's versions only, BAD_CLASS at OPA's, as opa-fm), refuses templates
# shorter than the record as opa-fm does (REQ_INVALID), sends a PortInfoRecord table of six
# ports (2360 bytes) as two RMPP segments, answers with the LIDs of now after a LID change
# (of a node, and of the SM's own port), refuses what it cannot answer with the SA status,
# and gives the role up when stopped.
. /opa/guest-lib.sh

q() { /opa/sa-query --umad umad3 "$@"; }
sm() { cat /sys/kernel/debug/opasim/sm; }
smlid() { cat /sys/class/infiniband/$1/ports/1/sm_lid; }

# On a failure: what the SA saw and answered, and what the two ports counted
# (a MAD dropped on the way shows in rcv_dropped).
on_exit() {
	rc=$?
	[ $rc = 0 ] && return
	echo "== on failure: opasim-sa's log"
	cat /tmp/sa.log 2>/dev/null
	for d in opasim0 opasim3; do
		for c in /sys/class/infiniband/$d/ports/1/hw_counters/*; do
			[ -r "$c" ] && [ "$(cat "$c")" != 0 ] && echo "$d ${c##*/} $(cat "$c")"
		done
	done
	dmesg | tail -n 20
}
trap on_exit EXIT

run_with() {
	drv=$1
	echo "=== $drv"
	load_vnic_stack "$drv" devices=6
	expect "no SM yet" "$(sm)" none
	expect "SMLID without an SM" "$(smlid opasim3)" 0x0
	out=$(q node 2>&1) && fail "a query without an SM succeeded: $out"
	echo "$out" | grep -q "SMLID 0, no subnet manager" || fail "no clear error without an SM: $out"
	for i in 1 2 3 4 5; do
		echo "host$i hfi1_0" >/sys/class/infiniband/opasim$i/node_desc ||
			fail "node_desc of opasim$i cannot be written"
	done
	expect "node_desc written" "$(cat /sys/class/infiniband/opasim2/node_desc)" "host2 hfi1_0"

	: >/tmp/sa.log # emptied first: see wait_line
	/opa/opasim-sa --hca opasim0 --port 1 >/tmp/sa.log 2>&1 &
	sa=$!
	wait_line /tmp/sa.log "ready on opasim0 port 1" 10 || {
		cat /tmp/sa.log
		fail "opasim-sa did not start"
	}
	expect "the SM's port" "$(sm)" "opasim0 1 lid 0x1"
	expect "SMLID of another port" "$(smlid opasim5)" 0x1

	echo "== NodeRecord"
	must q node >/tmp/q.out
	cat /tmp/q.out
	expect "NodeRecord table" "$(head -n 1 /tmp/q.out | cut -d' ' -f1-4)" "status 0x0000 records 6"
	expect "descriptions" "$(grep -c 'desc "host[1-5] hfi1_0"' /tmp/q.out)" 5
	# opasim's port GUIDs: device GUID 0x0011750100000000 | index << 8, plus the port.
	must q node --get --guid 0x0011750100000401 >/tmp/q.out
	expect "Get by PortGUID" "$(sed -n 2p /tmp/q.out | cut -d' ' -f2-7)" \
		"lid 0x5 port 1 guid 0x0011750100000401"
	must q node --get --desc "host2 hfi1_0" >/tmp/q.out
	expect "Get by NodeDesc" "$(sed -n 2p /tmp/q.out | cut -d' ' -f2-3)" "lid 0x3"
	q node --get --desc nobody >/tmp/q.out && fail "a Get of no record succeeded"
	expect "no such node" "$(head -n 1 /tmp/q.out | cut -d' ' -f1-2)" "status 0x0300"
	echo "host2 hfi1_0" >/sys/class/infiniband/opasim4/node_desc
	q node --get --desc "host2 hfi1_0" >/tmp/q.out && fail "a Get of two records succeeded"
	expect "two nodes, one name" "$(head -n 1 /tmp/q.out | cut -d' ' -f1-2)" "status 0x0400"
	must q node --desc "host2 hfi1_0" >/tmp/q.out
	expect "GetTable of a shared name" "$(head -n 1 /tmp/q.out | cut -d' ' -f1-4)" \
		"status 0x0000 records 2"
	echo "host4 hfi1_0" >/sys/class/infiniband/opasim4/node_desc

	echo "== PortInfoRecord: a table of two RMPP segments"
	echo clear >/sys/kernel/debug/opasim/capture
	must q portinfo >/tmp/q.out
	cat /tmp/q.out
	expect "PortInfoRecord table" "$(head -n 1 /tmp/q.out)" "status 0x0000 records 6 bytes 2360"
	expect "VNIC-capable ports" "$(grep -c 'sm_lid 0x1 .* cap_mask3 0x2000' /tmp/q.out)" 6
	# GetTableResp (class 03, method 92) segments: RMPP type DATA, Active, First then Last.
	segs=$(awk '$2 == "ud" && substr($17, 3, 2) == "03" && substr($17, 7, 2) == "92" &&
		substr($17, 51, 2) == "01" { print substr($17, 53, 2) }' /sys/kernel/debug/opasim/capture |
		tr '\n' ' ')
	expect "RMPP segments (flags)" "$segs" "03 05 "
	must q portinfo --get --lid 4 >/tmp/q.out
	expect "Get by EndPortLID" "$(sed -n 2p /tmp/q.out | cut -d' ' -f2-3)" "lid 0x4"
	must q portinfo --cap-mask 0x10000 >/tmp/q.out
	expect "CapabilityMask match (IsCM)" "$(head -n 1 /tmp/q.out | cut -d' ' -f3-4)" "records 6"

	echo "== what opa-fm's SA refuses"
	# The data shorter than the record, mask 0 or not: REQ_INVALID (sa_NodeRecord.c,
	# sa_PortInfoRecord.c).
	q node --data-len 0 >/tmp/q.out && fail "a NodeRecord GetTable without a template succeeded"
	expect "NodeRecord, no template" "$(head -n 1 /tmp/q.out | cut -d' ' -f1-2)" "status 0x0200"
	q portinfo --lid 4 --data-len 377 >/tmp/q.out &&
		fail "a PortInfoRecord GetTable with a short template succeeded"
	expect "PortInfoRecord, short template" "$(head -n 1 /tmp/q.out | cut -d' ' -f1-2)" "status 0x0200"

	echo "== McMemberRecord: the group opa-fm's default opafm.xml creates"
	# At IB's versions, as opa-fm serves it: its 32-bit MLID 0xf0000001 as 0xc001.
	must q mcmember --mgid 0xff12401b80010000:0x00000000ffffffff >/tmp/q.out
	cat /tmp/q.out
	expect "the default group" "$(sed -n 2p /tmp/q.out | cut -d' ' -f2-5)" \
		"mgid 0xff12401b80010000:0x00000000ffffffff mlid 0xc001"
	q mcmember --opa-versions --mgid 0xff12401b80010000:0x00000000ffffffff >/tmp/q.out &&
		fail "a McMemberRecord at OPA's versions was answered"
	expect "McMemberRecord at OPA's versions" "$(head -n 1 /tmp/q.out | cut -d' ' -f1-2)" "status 0x0004"
	must q mcmember --mgid 0xff12401b80020000:0x00000000ffffffff >/tmp/q.out
	expect "no such group" "$(head -n 1 /tmp/q.out | cut -d' ' -f1-4)" "status 0x0000 records 0"

	echo "== PathRecord"
	must q path --get --slid 2 --dlid 3 >/tmp/q.out
	expect "Get of a path" "$(sed -n 2p /tmp/q.out)" "path slid 0x2 dlid 0x3 pkey 0xffff sl 0 mtu 7 rate 16"
	must q path --slid 2 >/tmp/q.out
	expect "paths from LID 2" "$(head -n 1 /tmp/q.out | cut -d' ' -f3-4)" "records 6"
	q path --get --slid 2 >/tmp/q.out && fail "a path Get without its destination succeeded"
	expect "insufficient components" "$(head -n 1 /tmp/q.out | cut -d' ' -f1-2)" "status 0x0600"
	q path --opa-versions --get --slid 2 --dlid 3 >/tmp/q.out &&
		fail "a PathRecord at OPA's versions was answered"
	expect "PathRecord at OPA's versions" "$(head -n 1 /tmp/q.out | cut -d' ' -f1-2)" "status 0x0004"

	echo "== the LIDs of now"
	echo 0x33 >/sys/kernel/debug/opasim/opasim2/port1/lid || fail "LID change refused"
	must q node --get --guid 0x0011750100000201 >/tmp/q.out
	expect "a moved node" "$(sed -n 2p /tmp/q.out | cut -d' ' -f2-3)" "lid 0x33"
	echo 0x41 >/sys/kernel/debug/opasim/opasim0/port1/lid || fail "LID change of the SM refused"
	expect "the SM moved" "$(sm)" "opasim0 1 lid 0x41"
	expect "SMLID follows" "$(smlid opasim5)" 0x41
	must q node --get --lid 0x41 >/tmp/q.out
	expect "the SA at its new LID" "$(sed -n 2p /tmp/q.out | cut -d' ' -f2-3)" "lid 0x41"
	grep -c "opasim-sa: LID" /tmp/sa.log >/dev/null || fail "no query in the SA's log"
	grep "opasim-sa: LID 0x4: PortInfoRecord GetTable: 6 record(s), 2304 bytes" /tmp/sa.log ||
		fail "the SA's log misses the PortInfoRecord table"
	# The kernel's ib_sa asks every port's SA for its ClassPortInfo at each SM
	# and LID change, three times more while refused: answered, it asks once.
	echo "ClassPortInfo Gets answered: $(grep -c 'ClassPortInfo Get (IB form)' /tmp/sa.log)"
	grep -q 'ClassPortInfo Get (IB form)' /tmp/sa.log || fail "no ClassPortInfo asked"
	expect "ClassPortInfo Gets refused" "$(grep -c 'attribute 0x0001 ' /tmp/sa.log)" 0

	echo "== stopped"
	kill -TERM $sa
	wait $sa || fail "opasim-sa exited $? on SIGTERM"
	expect "role given up" "$(sm)" none
	expect "SMLID after the SM" "$(smlid opasim3)" 0x0
	unload_vnic_stack "$drv"
}

run_with opa_vnic
run_with opa_vnic_rs
check_dmesg_clean
echo "PASS: opasim-sa"
