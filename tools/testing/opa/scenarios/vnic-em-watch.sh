# SPDX-License-Identifier: GPL-2.0
# vnic-em watch, the EM as a service, on the C opa_vnic (the oracle) and then
# opa_vnic_rs. Started alone on the sample fabric, it configures every vport
# (nobody runs apply). Then the driver is unloaded and loaded again, which
# leaves the node ports with no vport and a zero ClassPortInfo, so no trap
# tells the EM: watch must find that by polling and configure the vports
# again within a bounded time, one re-apply line per node port and vport in
# its log, with nobody running apply. Beside it, a show by hand must work
# (only watch listens for traps) and a second trap listener must be
# refused. SIGTERM stops it with exit 0.
. /opa/guest-lib.sh

# The vports of the sample fabric: LID 1 vport 0, LID 2 vports 0 and 1.
macs="02:00:00:00:01:00 02:00:00:00:02:00 02:00:00:00:02:01"
vports="LID 0x0001 vport 0 [vesw 1 tenant-a]
LID 0x0002 vport 0 [vesw 1 tenant-a]
LID 0x0002 vport 1 [vesw 2 tenant-b]"
interval=2
# A poll while the driver is away waits out 4 attempts (1, 2, 4 and 4 s, and
# 0.5 s each for the timeout report), for the 2 node ports at once; the next
# one comes $interval s after it.
bound=45

em() { /opa/vnic-em -d umad0 "$@"; }

# wait_vports WHAT: waits until every vport of the sample has its netdev,
# $bound seconds at most.
wait_vports() {
	local t0 m missing
	t0=$(date +%s)
	while :; do
		missing=
		for m in $macs; do
			[ -n "$(netdev_by_mac "$m")" ] || missing="$missing $m"
		done
		if [ -z "$missing" ]; then
			echo "$1: every vport has its netdev after $(($(date +%s) - t0)) s"
			return 0
		fi
		if [ $(($(date +%s) - t0)) -ge $bound ]; then
			echo "--- watch log"
			cat /tmp/watch.log
			fail "$1: no netdev for$missing after $bound s"
		fi
		sleep 1
	done
}

# expect_repairs LOG HOW: LOG has a re-apply line for each vport and each
# node port's trap LID, found by HOW.
expect_repairs() {
	local v
	echo "$vports" | while read -r v; do
		grep -qF "$v: vport missing (power-on defaults), $2: re-applied" "$1" ||
			fail "no re-apply of $v $2 in the watch log"
	done || exit 1
	for lid in 0x0001 0x0002; do
		grep -q "^LID $lid: trap LID is 0x0, not the EM's 0x1, $2: re-applied 1 Set(s)" "$1" ||
			fail "no re-apply of the trap LID of LID $lid $2"
	done
}

# The fabric reads back as configured: each vport exists, with its MAC.
expect_configured() {
	local m
	must em show -c /opa/fabric.toml --no-counters --json >/tmp/show.json
	[ "$(grep -c '"exists": true' /tmp/show.json)" = 3 ] || {
		cat /tmp/show.json
		fail "$1: show does not find the 3 vports"
	}
	for m in $macs; do
		grep -q "\"mac\": \"$m\"" /tmp/show.json || fail "$1: show does not find $m"
	done
}

run_with() {
	drv=$1
	echo "=== $drv"
	load_vnic_stack "$drv"
	# Not through em(): $! must be vnic-em itself, for the SIGTERM below.
	: >/tmp/watch.log # emptied first: see wait_line
	/opa/vnic-em -d umad0 watch -c /opa/fabric.toml --interval-ms $((interval * 1000)) >/tmp/watch.log 2>&1 &
	watcher=$!
	wait_vports "$drv: watch at start"
	expect_repairs /tmp/watch.log "found at start"
	expect_configured "$drv: at start"
	em traps --wait-ms 1000 >/tmp/traps.out 2>&1
	rc=$?
	[ $rc = 4 ] || { cat /tmp/traps.out; fail "a second trap listener exited $rc, not 4"; }
	grep -q "cannot register" /tmp/traps.out || fail "no registration error from the second listener"

	seen=$(wc -l </tmp/watch.log)
	echo "== rmmod $drv; modprobe $drv"
	must rmmod "$drv"
	for m in $macs; do
		[ -z "$(netdev_by_mac "$m")" ] || fail "$drv: the netdev of $m outlived rmmod"
	done
	must modprobe "$drv"
	wait_vports "$drv: after the reload"
	# The last re-apply line may follow the netdev it creates.
	sleep 1
	tail -n +"$((seen + 1))" /tmp/watch.log >"/tmp/$drv.reload"
	echo "--- watch log since the reload"
	cat "/tmp/$drv.reload"
	expect_repairs "/tmp/$drv.reload" "found by poll"
	expect_configured "$drv: after the reload"

	kill -TERM $watcher
	wait_limit $watcher 20 "vnic-em watch" || fail "vnic-em watch exited $? on SIGTERM"
	tail -n 1 /tmp/watch.log | grep -qx stopping || fail "no 'stopping' at the end of the watch log"
	unload_vnic_stack "$drv"
}

run_with opa_vnic
run_with opa_vnic_rs
# A poll that lands while a driver unloads or loads is dropped unanswered, as by the
# C agent, and sent again: never refused as a vport the driver could not add.
if dmesg | grep 'cannot add vport'; then
	fail "a Set that raced the reload was refused (above)"
fi
check_dmesg_clean
echo "vnic-em-watch: ok"
