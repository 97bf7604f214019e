# SPDX-License-Identifier: GPL-2.0
# VNIC end to end on the real fabric manager: Debian's opa-fm, unmodified, sweeps opasim's
# managed fabric (a switch and four HFIs; the SM and the EM on opasim0, whose host also has a
# VNIC), and no SA of ours runs. vnic-em applies a config naming its node ports by GUID and by
# node description (resolved through opa-fm's SA), takes the broadcast DLID from the Default
# vFabric's multicast group, and joins the VNIC ports to it, so the SM programs the switch's
# multicast table for them; ping, ARP and a TCP transfer go between VNICs through the LFT
# and MFT the SM wrote. show and counters read the vports back. With vnic-em watch running,
# the SM restarts with its port's LID changed in opafm.xml (an admin's change): watch sees
# the new LID, re-applies what points to it and joins the ports to the restarted SM's empty
# group again, and ping and ARP resume. An EM on a port that is a limited member of the
# management partition fails at once with the message that says what to change. Under each
# VNIC driver: opa_vnic_rs, then the C opa_vnic as reference. Needs the initramfs built with
# OPA_TOOLS_ROOT (opa-fm) and /opa/vnic-em, /opa/opasim-umad.
. /opa/guest-lib.sh
fm=/usr/lib/opa-fm/bin/opafmd
conf=/etc/opa-fm/opafm.xml
ib=/sys/class/infiniband
umad=/opa/opasim-umad
[ -x $fm ] || fail "$fm is missing (initramfs built without OPA_TOOLS_ROOT?)"
export PATH=/usr/sbin:$PATH
em() { /opa/vnic-em -d umad0 "$@"; }
interval=3
cp $conf /tmp/opafm.xml.orig

# sweeps: how many sweeps the SM has ended so far.
sweeps() { grep -c "DISCOVERY CYCLE END" /var/log/messages; }
# fm_start: opafmd as its systemd unit starts it; waits for a sweep that finds the switch
# and four HFIs, and for every HFI port Active.
fm_start() {
	local before n=0
	before=$(sweeps)
	must $fm -D
	until [ "$(sweeps)" -gt "$before" ] &&
		[ "$(cat $ib/opasim*/ports/1/state | grep -c ACTIVE)" = 4 ]; do
		[ $n -ge 180 ] && {
			tail -n 30 /var/log/messages
			fail "opa-fm: no sweep with every port Active in 180 s"
		}
		sleep 1
		n=$((n + 1))
	done
	grep "DISCOVERY CYCLE END" /var/log/messages | tail -n 1
	grep "DISCOVERY CYCLE END" /var/log/messages | tail -n 1 | grep -q "1 SWs, 4 HFIs" ||
		fail "the sweep did not find 1 switch and 4 HFIs"
}
fm_stop() {
	local n=0
	$fm halt >/dev/null 2>&1
	while pidof sm fe opafmd >/dev/null; do
		[ $n -ge 30 ] && kill -9 $(pidof sm fe opafmd) 2>/dev/null
		sleep 1
		n=$((n + 1))
	done
}
lid_of() { cat $ib/opasim$1/ports/1/lid; }
# mft_ports MLID: the switch ports in the MFT entry of the 16-bit MLID the SA gave (a
# hexadecimal port mask); the switch's table starts at the first multicast LID.
mft_ports() {
	local idx=$(($1 - 0xc000))
	$umad smp umad0 0x1b --path 1 --am $(((1 << 24) | (idx / 8))) >/tmp/mft 2>&1 || {
		cat /tmp/mft
		fail "SubnGet(MFT) of the switch"
	}
	sed -n 's/^data //p' /tmp/mft | cut -c$((idx % 8 * 16 + 1))-$((idx % 8 * 16 + 16))
}
# ping_ok NS ADDR: one round trip within two seconds.
ping_ok() { ip netns exec "$1" ping -c 1 -W 2 "$2" >/dev/null 2>&1; }
# wait_for WHAT SECONDS CMD...: CMD succeeds within SECONDS (the time it took
# is printed), or the test fails, after vnic-em watch's log if one is running.
wait_for() {
	local what=$1 limit=$2 n=0
	shift 2
	until "$@"; do
		if [ $n -ge "$limit" ]; then
			[ -s /tmp/watch.log ] && cat /tmp/watch.log
			fail "$what: not within $limit s"
		fi
		sleep 1
		n=$((n + 1))
	done
	echo "ok: $what (after $n s)"
}

cat >/tmp/vnic.toml <<TOML
[em]
fabric_id = 1

# The Default vFabric of opa-fm's opafm.xml: P_Key 0x8001 in every port's table, and the
# broadcast group it pre-creates (unknown_mcast_mgid's default).
[[vesw]]
id = 1
name = "tenant"
pkey = 0x8001
eth_mtu = 1500

[[vport]]
node = "GUID0"
vport = 0
vesw = 1
port_num = 1
mac = "02:00:00:00:01:00"

[[vport]]
node = "hostA hfi1_0"
vport = 0
vesw = 1
port_num = 2
mac = "02:00:00:00:02:00"

[[vport]]
node = "hostB hfi1_0"
vport = 0
vesw = 1
port_num = 3
mac = "02:00:00:00:03:00"
TOML

run_with() {
	local drv=$1 a b c mlid m lid0 w
	echo "=== $drv"
	# Management allowed on opasim0's switch port only, where the SM and the EM run (a
	# switch's per-port setting): the other HFIs are limited members of the Admin vFabric.
	load_vnic_stack "$drv" managed=1 devices=4 mgmt_allowed=0
	must modprobe ib_uverbs
	echo -n "em hfi1_0" >$ib/opasim0/node_desc
	echo -n "hostA hfi1_0" >$ib/opasim1/node_desc
	echo -n "hostB hfi1_0" >$ib/opasim2/node_desc
	echo -n "hostC hfi1_0" >$ib/opasim3/node_desc
	sed "s/GUID0/0x$(cut -d: -f5-8 $ib/opasim0/ports/1/gids/0 | tr -d :)/" /tmp/vnic.toml >/tmp/v.toml
	cp /tmp/opafm.xml.orig $conf
	fm_start

	echo "== apply against opa-fm's SA"
	must em apply /tmp/v.toml >/tmp/apply.out
	cat /tmp/apply.out
	grep -q '"hostB hfi1_0" is LID '"$(printf '0x%04x' $(($(lid_of 2))))" /tmp/apply.out ||
		fail "apply does not say where hostB is"
	m=$(sed -n 's/^vesw 1 (tenant): 3 node port(s) joined multicast group 0xff12401b80010000:0x00000000ffffffff (MLID \(0x[0-9a-f]*\))$/\1/p' /tmp/apply.out)
	[ -n "$m" ] || fail "apply did not join the three VNIC ports to the Default broadcast group"
	mlid=$m
	# The join made the SM sweep and program the switch: ports 1-3 (opasim0-2), not 4.
	n=0
	until [ "$(mft_ports "$mlid")" = 000000000000000e ] || [ $n -ge 60 ]; do
		sleep 1
		n=$((n + 1))
	done
	if [ "$(mft_ports "$mlid")" != 000000000000000e ]; then
		grep fm0_sm /var/log/messages | tail -n 30
		/opa/sa-query --umad umad3 mcmember --mgid 0xff12401b80010000:0x00000000ffffffff
		$umad smp umad0 0x1b --path 1 --am $(((1 << 24) | 0))
	fi
	expect "the switch's MFT entry of MLID $mlid" "$(mft_ports "$mlid")" 000000000000000e

	a=$(netdev_by_mac 02:00:00:00:01:00)
	b=$(netdev_by_mac 02:00:00:00:02:00)
	c=$(netdev_by_mac 02:00:00:00:03:00)
	[ -n "$a" ] && [ -n "$b" ] && [ -n "$c" ] || fail "no netdev for every vport"
	netns_host h0 "$a" 192.168.77.1/24
	netns_host h1 "$b" 192.168.77.2/24
	netns_host h2 "$c" 192.168.77.3/24
	echo "== ping, ARP and TCP through the switch's tables"
	# ARP requests go to the group's MLID (the MFT), the replies and pings by the LFT.
	must ip netns exec h1 ping -c 3 -W 3 192.168.77.3
	must ip netns exec h0 ping -c 3 -W 3 192.168.77.2
	ip -n h1 neigh show | grep -q "192.168.77.3 .*lladdr 02:00:00:00:03:00" ||
		fail "h1 learnt no MAC of h2 by ARP: $(ip -n h1 neigh show)"
	# TCP for 2 s (iperf3); the receiver's count of bytes, which a short transfer of a fixed
	# size would leave short by what is still in flight when the client ends it.
	ip netns exec h2 iperf3 -s -1 -D >/dev/null || fail "iperf3 server"
	sleep 1
	ip netns exec h0 timeout 60 iperf3 -c 192.168.77.3 -t 2 -J >/tmp/iperf.json 2>&1 || {
		cat /tmp/iperf.json
		fail "iperf3 over the VNICs"
	}
	got=$(sed -n '/"sum_received"/,/}/p' /tmp/iperf.json | sed -n 's/.*"bytes":[[:space:]]*\([0-9]*\).*/\1/p')
	bps=$(sed -n '/"sum_received"/,/}/p' /tmp/iperf.json | sed -n 's/.*"bits_per_second":[[:space:]]*\([0-9]*\).*/\1/p')
	echo "TCP h0 -> h2 for 2 s: the receiver counted ${got:-0} bytes ($((${bps:-0} / 1000000)) Mbit/s)"
	[ "${got:-0}" -ge 1048576 ] || fail "less than 1 MiB of TCP in 2 s through the switch"
	echo "ok: ping, ARP and TCP between VNICs, through the LFT and MFT opa-fm wrote"

	echo "== show and counters"
	must em show -c /tmp/v.toml --no-counters --json >/tmp/show.json
	grep -q "\"unknown_mcast_dlid\": $(((mlid - 0xc000) | 0xf00000))," /tmp/show.json ||
		fail "show: the group's DLID: $(grep unknown_mcast /tmp/show.json)"
	must em counters -c /tmp/v.toml --prometheus >/tmp/counters.prom
	# Every vport read, and the EM host's vport counted what it sent.
	grep -q "^opa_vnic_em_read_errors 0$" /tmp/counters.prom ||
		fail "counters: read errors: $(grep read_errors /tmp/counters.prom)"
	grep -E "^opa_vnic_vport_tx_[a-z0-9_]*_total[{].*mac=.02:00:00:00:01:00.[}] [1-9]" \
		/tmp/counters.prom | head -n 4 | grep . ||
		fail "counters: nothing sent by h0's vport: $(grep -c . /tmp/counters.prom) lines"

	echo "== the EM on a limited member's port"
	echo "opasim1 P_Keys: $(cat $ib/opasim1/ports/1/pkeys/* | grep -v '^0x0000$' | tr '\n' ' ')"
	grep -qx 0xffff $ib/opasim1/ports/1/pkeys/* && fail "opasim1 is a full member of the Admin vFabric"
	t0=$(date +%s)
	out=$(/opa/vnic-em -d umad1 discover 2>&1) && fail "discover from a limited member succeeded"
	echo "$out (after $(($(date +%s) - t0)) s)"
	[ $(($(date +%s) - t0)) -le 2 ] || fail "the limited member's error took more than 2 s (time-outs?)"
	echo "$out" | grep -q "add this port to the Admin vFabric" ||
		fail "no clear message for the limited member's port: $out"

	echo "== an SM restart that changes a LID, under vnic-em watch"
	: >/tmp/watch.log # emptied first: see wait_line
	/opa/vnic-em -d umad0 watch -c /tmp/v.toml --interval-ms $((interval * 1000)) >/tmp/watch.log 2>&1 &
	w=$!
	wait_for "watch starts" 30 grep -q "^watching 3 vport(s) on 3 node port(s)" /tmp/watch.log
	lid0=$(printf '0x%04x' $(($(lid_of 0))))
	fm_stop
	# An admin's change: the SM's own port at LID 0x20 (the instance's <Sm><LID>, fm_xml.c),
	# which opa-fm assigns at its start before any LID the port had.
	awk '/<Sm>/ && ++n == 2 { print; print "    <LID>0x20</LID>"; next } { print }' \
		/tmp/opafm.xml.orig >$conf
	fm_start
	expect "opasim0's LID after the restart" "$(lid_of 0)" 0x20
	expect "the SM LID" "$(cat $ib/opasim2/ports/1/sm_lid)" 0x20
	# Until the restarted SA answers, each poll asks it for the names and the
	# vanished LID for its class port info, in vain: 4 attempts each, backing
	# off from 1 s to 4 s (11 s), then the 3 s interval. Two such polls before
	# the one that finds the new LID are 50 s; a guest under load, more (the C
	# driver's run once took over 60).
	wait_for "watch re-applies after the LID change" 120 \
		grep -q "LID $lid0 -> 0x0020" /tmp/watch.log
	# The restarted SM's group has no member until watch joins the ports again.
	wait_for "watch joins the ports to the restarted SM's group" 60 \
		sh -c "[ \$(grep -c 'joined multicast group' /tmp/watch.log) -ge 2 ]"
	must ip netns exec h0 ip neigh flush all
	must ip netns exec h1 ip neigh flush all
	wait_for "ping h1 -> h0 (ARP) after the restart" 60 ping_ok h1 192.168.77.1
	wait_for "ping h0 -> h2 (ARP) after the restart" 60 ping_ok h0 192.168.77.3
	cat /tmp/watch.log
	echo "ok: watch followed the SM restart and the LID change; ping and ARP resumed"
	kill $w
	wait $w 2>/dev/null
	for ns in h0 h1 h2; do ip netns del $ns; done

	if [ "$drv" = opa_vnic_rs ]; then
		echo "== discover --config: the starting file, applied as written"
		must em discover --config >/tmp/start.toml
		cat /tmp/start.toml
		must em apply /tmp/start.toml >/tmp/apply.out
		cat /tmp/apply.out
		grep -q "node port(s) joined multicast group" /tmp/apply.out ||
			fail "apply of the starting file joined no multicast group"
		set -- $(sed -n 's/^mac = "\(.*\)"$/\1/p' /tmp/start.toml)
		[ $# = 4 ] || fail "the starting file has $# vports, not one on each of the 4 HFIs"
		s1=$(netdev_by_mac "$2") s2=$(netdev_by_mac "$3")
		[ -n "$s1" ] && [ -n "$s2" ] || fail "no netdev with the starting file's MACs $2 and $3"
		netns_host s1 "$s1" 192.168.79.1/24
		netns_host s2 "$s2" 192.168.79.2/24
		# No permanent neighbours: the first ping needs ARP, whose broadcast reaches
		# the other VNIC only through the group apply joined.
		wait_for "ping with ARP over the starting file's vesw" 60 ping_ok s1 192.168.79.2
		ip -n s1 neigh show | grep -q "192.168.79.2 .*lladdr $3" ||
			fail "s1 learnt no MAC of s2 by ARP: $(ip -n s1 neigh show)"
		for ns in s1 s2; do ip netns del $ns; done
	fi

	fm_stop
	cp /tmp/opafm.xml.orig $conf
	sleep 1
	must rmmod ib_uverbs
	unload_vnic_stack "$drv"
}

mkdir -p /var/log /var/run /var/lib/opa-fm
syslogd -O /var/log/messages
run_with opa_vnic_rs
run_with opa_vnic
if grep -E "fm0_sm.*ERROR" /var/log/messages; then
	fail "opa-fm logged errors (above)"
fi
killall syslogd 2>/dev/null
check_dmesg_clean
echo "opafm-vnic: ok"
