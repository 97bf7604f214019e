# SPDX-License-Identifier: GPL-2.0
# vnic-em on a fabric whose LIDs belong to the subnet manager, under each VNIC driver: three
# HFIs with the node descriptions rdma-ndd would write, the fabric's SA (opasim-sa) on
# opasim0, the EM beside it. discover lists the ports the driver serves (CapabilityMask3),
# as text, JSON and a starting config; a config naming its node ports by GUID and by
# description is applied (resolved through the SA, the broadcast DLID from the SA's multicast
# group; a group the fabric lacks is an error) and carries ping between two vports.
# Then, with vnic-em watch running and traffic flowing, the SM moves hostB to a new LID:
# watch's next poll notices, logs it, re-applies hostB's encap_slid and the MAC tables and
# unknown unicast DLIDs that point to it, and the traffic flows again. Names that give no
# port or two, and an SA that is gone, stop apply with an error naming the config line.
. /opa/guest-lib.sh

em() { /opa/vnic-em -d umad0 "$@"; }
interval=3

cat >/tmp/named.toml <<'TOML'
[em]
fabric_id = 1

[[vesw]]
id = 1
name = "test"
pkey = 0x8001
eth_mtu = 1500
unknown_mcast_mgid = "0xff12401b80010000:0x00000000ffffffff"
unknown_ucast_nodes = ["hostB hfi1_0"]

[[vport]]
node = "0x0011750100000101"
vport = 0
vesw = 1
port_num = 1
mac = "02:00:00:00:01:00"

[[vport]]
node = "hostB hfi1_0"
vport = 0
vesw = 1
port_num = 2
mac = "02:00:00:00:02:00"
TOML

# ping_ok: one round trip host1 -> host2 within a second.
ping_ok() { ip netns exec host1 ping -c 1 -W 1 192.168.77.2 >/dev/null 2>&1; }

run_with() {
	drv=$1
	echo "=== $drv"
	load_vnic_stack "$drv" devices=3
	echo "em hfi1_0" >/sys/class/infiniband/opasim0/node_desc
	echo "hostA hfi1_0" >/sys/class/infiniband/opasim1/node_desc
	echo "hostB hfi1_0" >/sys/class/infiniband/opasim2/node_desc
	out=$(em discover 2>&1) && fail "discover without an SM succeeded: $out"
	echo "$out" | grep -q "SMLID 0, no subnet manager" || fail "discover without an SM: $out"
	: >/tmp/sa.log # emptied first: see wait_line
	/opa/opasim-sa --hca opasim0 --port 1 >/tmp/sa.log 2>&1 &
	sa=$!
	n=0
	until grep -q ready /tmp/sa.log; do
		[ $n -ge 50 ] && fail "opasim-sa did not start: $(cat /tmp/sa.log)"
		sleep 0.2
		n=$((n + 1))
	done

	echo "== discover"
	must em discover >/tmp/d.out
	cat /tmp/d.out
	grep -q "^0x0011750100000201  0x0003     1  yes   hostB hfi1_0$" /tmp/d.out ||
		fail "discover does not list hostB"
	grep -q "^3 port(s), 3 served by a VNIC driver$" /tmp/d.out || fail "discover's count"
	must em discover --json >/tmp/d.json
	grep -q '"desc": "hostA hfi1_0"' /tmp/d.json || fail "discover --json: $(cat /tmp/d.json)"
	must em discover --config >/tmp/start.toml
	must /opa/vnic-em validate /tmp/start.toml

	echo "== apply by name"
	must em apply /tmp/named.toml >/tmp/apply.out
	cat /tmp/apply.out
	grep -q '^/tmp/named.toml:13: GUID 0x0011750100000101 is LID 0x0002' /tmp/apply.out ||
		fail "apply does not say where the GUID is"
	grep -q '^/tmp/named.toml:20: "hostB hfi1_0" is LID 0x0003' /tmp/apply.out ||
		fail "apply does not say where hostB is"
	a=$(netdev_by_mac 02:00:00:00:01:00)
	b=$(netdev_by_mac 02:00:00:00:02:00)
	[ -n "$a" ] && [ -n "$b" ] || fail "no netdevs for the named vports"
	netns_host host1 "$a" 192.168.77.1/24
	netns_host host2 "$b" 192.168.77.2/24
	must ip netns exec host1 ping -c 3 -W 2 192.168.77.2
	# The broadcast DLID is the MLID of the SA's group (0xf0000001), in the 16B space.
	must em show -c /tmp/named.toml --no-counters --json >/tmp/show.json
	grep -q '"unknown_mcast_dlid": 15728641,' /tmp/show.json ||
		fail "show: the group's DLID 0xf00001: $(cat /tmp/show.json)"
	sed 's/0xff12401b80010000:/0xff12401b80020000:/' /tmp/named.toml >/tmp/nogroup.toml
	em apply /tmp/nogroup.toml >/tmp/ng.out 2>&1
	rc=$?
	cat /tmp/ng.out
	[ $rc = 2 ] || fail "apply naming a group the fabric lacks exited $rc, not 2"
	grep -q "the fabric has no multicast group 0xff12401b80020000:0x00000000ffffffff" /tmp/ng.out ||
		fail "no clear error for a missing multicast group"

	echo "== the SM moves hostB while traffic runs"
	: >/tmp/watch.log # emptied first: see wait_line
	/opa/vnic-em -d umad0 watch -c /tmp/named.toml --interval-ms $((interval * 1000)) >/tmp/watch.log 2>&1 &
	w=$!
	n=0
	until grep -q "^watching 2 vport(s) on 2 node port(s)" /tmp/watch.log; do
		[ $n -ge 50 ] && fail "watch did not start: $(cat /tmp/watch.log)"
		sleep 0.2
		n=$((n + 1))
	done
	: >/tmp/ping.log # emptied first: see wait_line
	ip netns exec host1 ping -i 0.2 -w 60 192.168.77.2 >/tmp/ping.log 2>&1 &
	p=$!
	sleep 1
	echo 0x33 >/sys/kernel/debug/opasim/opasim2/port1/lid || fail "the LID change was refused"
	t0=$(date +%s)
	ping_ok && echo "traffic still flows right after the change (watch polled already)" ||
		echo "traffic stopped: hostB is not at LID 0x3 any more"
	until grep -q 'LID 0x0003 -> 0x0033' /tmp/watch.log && ping_ok; do
		[ $(($(date +%s) - t0)) -ge $((interval * 4 + 10)) ] && {
			cat /tmp/watch.log
			fail "traffic does not flow again $((interval * 4 + 10)) s after the LID change"
		}
		sleep 0.5
	done
	echo "traffic flows again $(($(date +%s) - t0)) s after the LID change (poll every $interval s)"
	kill $p 2>/dev/null
	wait $p
	tail -n 3 /tmp/ping.log
	cat /tmp/watch.log
	grep -q '^"hostB hfi1_0" (line 10): LID 0x0003 -> 0x0033, found by poll: re-applying what points to it$' \
		/tmp/watch.log || fail "watch does not log the LID change"
	grep -q '^LID 0x0033 vport 0 \[vesw 1 test\]: .*encap_slid differ(s).*re-applied' /tmp/watch.log ||
		fail "watch did not re-apply hostB's encap_slid"
	grep -q '^LID 0x0002 vport 0 \[vesw 1 test\]: .*unknown_ucast_dlids.*MAC table differs.*re-applied' \
		/tmp/watch.log || fail "watch did not re-apply hostA's view of hostB"
	must em show -c /tmp/named.toml --no-counters --json >/tmp/show.json
	grep -q '"encap_slid": 51,' /tmp/show.json || fail "show: hostB's encap_slid: $(cat /tmp/show.json)"
	kill -TERM $w
	wait $w || fail "watch exited $? on SIGTERM"

	echo "== names that give no port or two, and no SA"
	sed 's/0x0011750100000101/0x00117501000009ff/' /tmp/named.toml >/tmp/bad.toml
	em apply /tmp/bad.toml >/tmp/bad.out 2>&1
	rc=$?
	cat /tmp/bad.out
	[ $rc = 1 ] || fail "apply of an unknown GUID exited $rc, not 1"
	grep -q "^/tmp/bad.toml:13:8: error: no port of the fabric is GUID 0x00117501000009ff" \
		/tmp/bad.out || fail "no error naming the line of the unknown GUID"
	echo "hostB hfi1_0" >/sys/class/infiniband/opasim1/node_desc
	em apply /tmp/named.toml >/tmp/bad.out 2>&1
	rc=$?
	cat /tmp/bad.out
	[ $rc = 1 ] || fail "apply of a shared name exited $rc, not 1"
	grep -q '2 ports are "hostB hfi1_0"' /tmp/bad.out || fail "no error for the shared name"
	echo "hostA hfi1_0" >/sys/class/infiniband/opasim1/node_desc
	kill -TERM $sa
	wait $sa
	em apply /tmp/named.toml >/tmp/bad.out 2>&1
	rc=$?
	cat /tmp/bad.out
	[ $rc = 2 ] || fail "apply without an SA exited $rc, not 2"
	grep -q "cannot resolve 3 node name(s): .*no subnet manager" /tmp/bad.out ||
		fail "no clear error without an SA"

	ip netns del host1
	ip netns del host2
	unload_vnic_stack "$drv"
}

run_with opa_vnic
run_with opa_vnic_rs
check_dmesg_clean
echo "PASS: vnic-em-names"
