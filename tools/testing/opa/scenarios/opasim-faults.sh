# SPDX-License-Identifier: GPL-2.0
# opasim's fault knobs (Documentation/infiniband/opasim.rst, "Run-time
# interface") under the C opa_vnic (the reference) and then opa_vnic_rs,
# each fault injected once:
#
#   fail_open      ip link set up fails with ENOMEM, the netdev stays down;
#                  the next ip link set up works
#   fail_set_id    a vesw id change (vnic-em set --vesw) of an open netdev
#                  cannot bring it up again: no carrier, and the netdev
#                  detached (ethtool refused) until it is closed and
#                  opened, which works
#   fail_mad_send  the agent's answer (port of LID 2), then the EM's request
#                  (LID 1), completes in error: vnic-em without retries
#                  times out (exit 2); the same show then works
#   vnic_tx_hold   with the completions held, a burst fills the 64-descriptor
#                  ring (NETDEV_TX_BUSY), nothing arrives; once released,
#                  every frame arrives
#   state          the link down and up: the carrier of the port's netdev
#                  follows (IB_EVENT_PORT_ERR, IB_EVENT_PORT_ACTIVE)
#
# After each fault: the counts the knob shows, the VNIC netdevs (two, no
# orphan); at the end a fresh vnic-em apply converges, the driver and
# opasim unload, and the kernel log has no warning. Bad writes to the knobs
# are refused. What each step gives is written down for both drivers and
# printed side by side.
. /opa/guest-lib.sh

for b in vnic-em vnic-send; do [ -x /opa/$b ] || fail "/opa/$b is missing"; done
two_vport_fabric
A=02:00:00:00:01:00
B=02:00:00:00:02:00
D=/sys/kernel/debug/opasim
P1=$D/opasim0/port1
P2=$D/opasim1/port1
# No IPv6 frames of the stack's own (router solicitations, DAD, MLD): the
# burst's counts are the burst's.
for k in default all; do echo 1 >/proc/sys/net/ipv6/conf/$k/disable_ipv6; done

# knob FILE: what a knob file shows, on one line.
knob() { tr '\n' ' ' <"$1" | sed 's/ $//'; }
# vnics: the VNIC netdevs (the fabric's MACs), one a line.
vnics() { ip -o link | grep -ci 'link/ether 02:00:00:00:0[12]:00'; }
carrier() { cat "/sys/class/net/$1/carrier" 2>/dev/null || echo none; }
sdma() { awk -v k="$1" '$1 == k { print $2 }' $P1/vnic_sdma; }
rx_of() { cat "/sys/class/net/$1/statistics/rx_packets"; }
# note LINE: a result of the driver's run, compared with the other's at the end.
note() { echo "$*"; echo "$*" >>"$out"; }

echo "== bad writes are refused"
must modprobe opasim
for w in "fail_open:-1" "fail_open:1000001" "fail_open:1 2" "fail_set_id:x" \
	"fail_mad_send:0x1" "vnic_tx_hold:held" "vnic_tx_hold:1"; do
	f=${w%%:*} v=${w#*:}
	sh -c "echo '$v' >$P1/$f" 2>/dev/null && fail "$f: '$v' taken"
	echo "ok: $f refuses '$v'"
done
expect "fail_open after bad writes" "$(knob $P1/fail_open)" "pending 0 injected 0"
# More than 1000000 pending is refused; 0 clears.
must sh -c "echo 1000000 >$P1/fail_open"
sh -c "echo 1 >$P1/fail_open" 2>/dev/null && fail "fail_open: 1000001 pending taken"
must sh -c "echo 0 >$P1/fail_open"
expect "fail_open cleared" "$(knob $P1/fail_open)" "pending 0 injected 0"
must rmmod opasim
dmesg | grep -q "a fail_ file takes one number" || fail "no log line for a bad fail_ write"
dmesg | grep -q "vnic_tx_hold takes 'hold' or 'release'" || fail "no log line for a bad vnic_tx_hold write"

run_with() {
	drv=$1
	out=/tmp/$drv.faults
	: >"$out"
	echo "=== $drv"
	load_vnic_stack "$drv" vnic_sdma_descs=64
	expect "$drv: fail_open at load" "$(knob $P1/fail_open)" "pending 0 injected 0"
	expect "$drv: vnic_tx_hold at load" "$(knob $P1/vnic_tx_hold)" "released queued 0 holds 0"
	must /opa/vnic-em -d umad0 apply /tmp/fabric.toml >/dev/null
	a=$(netdev_by_mac $A)
	b=$(netdev_by_mac $B)
	[ -n "$a" ] && [ -n "$b" ] || fail "$drv: the VNIC netdevs are missing"
	expect "$drv: VNIC netdevs" "$(vnics)" 2

	echo "== $drv: fail_open"
	must sh -c "echo 1 >$P1/fail_open"
	expect "$drv: fail_open armed" "$(knob $P1/fail_open)" "pending 1 injected 0"
	err=$(ip link set "$a" up 2>&1) && fail "$drv: ip link set up worked with fail_open"
	note "open with fail_open: $err"
	echo "$err" | grep -q "Cannot allocate memory" || fail "$drv: the open failed otherwise: $err"
	expect "$drv: fail_open after" "$(knob $P1/fail_open)" "pending 0 injected 1"
	ip -o link show "$a" | grep -q '[<,]UP[,>]' && fail "$drv: $a is UP after a failed open"
	note "after the failed open: flags $(ip -o link show "$a" | sed 's/.*<\(.*\)>.*/\1/'), VNIC netdevs $(vnics)"
	must ip link set "$a" up
	sleep 1
	note "open again: carrier $(carrier "$a")"
	expect "$drv: carrier after the retried open" "$(carrier "$a")" 1

	echo "== $drv: fail_set_id"
	must sh -c "echo 1 >$P1/fail_set_id"
	dmesg_new >/dev/null
	must /opa/vnic-em -d umad0 set -l 1 --vport 0 --vesw 2 >/dev/null
	sleep 1
	expect "$drv: fail_set_id after" "$(knob $P1/fail_set_id)" "pending 0 injected 1"
	dmesg_new | grep -E 'injected|vesw id' | sed 's/^\[[ 0-9.]*\] //' | tee -a "$out"
	note "after the failed reopen: carrier $(carrier "$a"), VNIC netdevs $(vnics)"
	note "the EM sees: $(/opa/vnic-em -d umad0 show -l 1 --vport 0 --no-counters 2>&1 | grep -iE 'vesw|state' | tr -s ' ' | tr '\n' ';')"
	expect "$drv: carrier after the failed reopen" "$(carrier "$a")" 0
	# The HFI detached the netdev (hfi1: HFI1_VNIC_REOPEN_FAILED): ethtool,
	# which wants a device present, is refused.
	ethtool -S "$a" >/tmp/ethtool.out 2>&1 && fail "$drv: ethtool -S works on the detached netdev"
	expect "$drv: ethtool -S on the detached netdev" "$(grep -o 'No such device' /tmp/ethtool.out)" \
		"No such device"
	# A link flap now: the driver turns the carrier on for a netdev the HFI
	# did not bring up again (recorded, not judged); detached, the stack's
	# transmit watchdog does not look at its stopped queues.
	must sh -c "echo down >$P1/state"
	must sh -c "echo active >$P1/state"
	sleep 1
	note "a link flap after the failed reopen: carrier $(carrier "$a")"
	# Frames sent meanwhile: the HFI stopped the queues when it took the
	# netdev down, and a carrier turned on does not start them again.
	tx0=$(cat /sys/class/net/$a/statistics/tx_packets)
	must /opa/vnic-send --dev "$a" --kind ipv4-udp --dmac $B --len 100 --count 5 --flows 1
	sleep 1
	note "5 frames sent then: $(($(cat /sys/class/net/$a/statistics/tx_packets) - tx0)) reached the driver"
	must ip link set "$a" down
	must ip link set "$a" up
	sleep 1
	expect "$drv: carrier after down and up" "$(carrier "$a")" 1
	must ethtool -S "$a" >/dev/null
	must /opa/vnic-em -d umad0 set -l 1 --vport 0 --vesw 1 >/dev/null
	sleep 1
	expect "$drv: carrier back on vesw 1" "$(carrier "$a")" 1
	expect "$drv: VNIC netdevs" "$(vnics)" 2

	echo "== $drv: fail_mad_send"
	sleep 1
	for p in "$P2 agent" "$P1 EM"; do
		set -- $p
		must sh -c "echo 1 >$1/fail_mad_send"
		dmesg_new >/dev/null
		/opa/vnic-em -d umad0 --timeout-ms 500 --retries 0 show -l 2 --vport 0 --no-counters >/tmp/show 2>&1
		rc=$?
		note "show with the $2's send failing: exit $rc: $(grep -v '^ ' /tmp/show | head -2 | tr '\n' ' ')"
		[ $rc = 2 ] || { cat /tmp/show; fail "$drv: vnic-em show exited $rc with the $2's send failing"; }
		expect "$drv: fail_mad_send of the $2 after" "$(knob $1/fail_mad_send)" "pending 0 injected 1"
		dmesg_new | grep injected | sed 's/^\[[ 0-9.]*\] //'
		must /opa/vnic-em -d umad0 show -l 2 --vport 0 --no-counters >/dev/null
	done

	echo "== $drv: vnic_tx_hold"
	must ip link set "$b" up
	sleep 1
	must sh -c "echo hold >$P1/vnic_tx_hold"
	busy0=$(sdma tx_busy) rx0=$(rx_of "$b")
	must /opa/vnic-send --dev "$a" --kind ipv4-udp --dmac $B --len 1000 --count 40 --flows 1
	sleep 1
	queued=$(awk '$1 == "queued" { print $2 }' $P1/vnic_tx_hold)
	busy=$(($(sdma tx_busy) - busy0)) rx=$(($(rx_of "$b") - rx0))
	note "held: $queued queued, NETDEV_TX_BUSY $busy, received $rx"
	[ "$queued" -gt 0 ] && [ "$busy" -gt 0 ] && [ "$rx" = 0 ] ||
		fail "$drv: with the completions held: $queued queued, $busy pushbacks, $rx received"
	must sh -c "echo release >$P1/vnic_tx_hold"
	for i in $(seq 20); do
		[ $(($(rx_of "$b") - rx0)) -ge 40 ] && break
		sleep 0.5
	done
	rx=$(($(rx_of "$b") - rx0))
	note "released: received $rx, $(knob $P1/vnic_tx_hold)"
	[ "$rx" = 40 ] || fail "$drv: $rx of 40 frames received after the release"

	echo "== $drv: link flap"
	must sh -c "echo down >$P1/state"
	sleep 1
	note "port down: carrier $(carrier "$a")"
	expect "$drv: carrier with the port down" "$(carrier "$a")" 0
	must sh -c "echo active >$P1/state"
	sleep 1
	note "port active: carrier $(carrier "$a")"
	expect "$drv: carrier with the port active again" "$(carrier "$a")" 1

	echo "== $drv: a fresh apply converges"
	must /opa/vnic-em -d umad0 apply /tmp/fabric.toml >/dev/null
	must /opa/vnic-em -d umad0 show -c /tmp/fabric.toml --no-counters >/dev/null
	expect "$drv: VNIC netdevs" "$(vnics)" 2
	unload_vnic_stack "$drv"
	expect "$drv: VNIC netdevs after unload" "$(vnics)" 0
	check_dmesg_clean
}

run_with opa_vnic
run_with opa_vnic_rs

echo "== C, then Rust"
cat /tmp/opa_vnic.faults
echo "--"
cat /tmp/opa_vnic_rs.faults
check_dmesg_clean
echo "opasim-faults: ok"
