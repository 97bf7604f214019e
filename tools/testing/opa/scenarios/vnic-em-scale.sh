# SPDX-License-Identifier: GPL-2.0
# vnic-em at scale, under the C opa_vnic (the oracle) and then opa_vnic_rs:
# 32 opasim HFIs (16 at load, 16 added at run time), 256 vports (8 on each
# node port, 4 vesws of 64). apply from nothing creates every vport's
# netdev, with many MADs in flight (the default) and, after a reload of the
# driver, one at a time; so does a MAC change of every vport (its address
# and its vesw's MAC table). Each time is printed. Then 10% of the nodes go
# dead (3 ports down: they neither send nor receive) and a changed config
# is applied: it must end within the time of one request's attempts past
# the same apply with every node alive, not the sum over the dead nodes,
# exit 3 (partial) with one error per dead LID, and every live vport must
# be configured. A line "FIGURES <driver>: ..." sums the times up.
. /opa/guest-lib.sh

dbg=/sys/kernel/debug/opasim
nodes=32
per=8
# Short timeouts, as an EM on a small fabric would use: 500 ms, 3 retries
# backing off to 2 s (0.5 + 1 + 2 + 2 s, and 0.5 s each for the kernel's
# timeout report: 7.5 s for a node that does not answer). On the debug
# kernel every time is SCALE times longer: there the C driver took 30 s to
# create the 256 netdevs (1.7 s on the test kernel), each in its turn for
# RTNL, and a Set waiting behind the others outlasted 5.5 s.
scale=1
debug_kernel && scale=8
opts="--timeout-ms $((500 * scale)) --timeout-max-ms $((2000 * scale)) --retries 3"
give_up=$((8 * scale))
dead_hfis="opasim5 opasim17 opasim30"

em() { /opa/vnic-em -d umad0 $opts "$@"; }

# fabric BYTE FILE: the config of 256 vports: node n (LID of opasimN) has
# vports 0-7, vport v in vesw v%4+1, MAC 02:BYTE:00:NN:00:0V
# (NN and V in decimal digits).
fabric() {
	{
		printf '[em]\nfabric_id = 1\n'
		for w in 1 2 3 4; do
			printf '[[vesw]]\nid = %d\nname = "t%d"\npkey = 0x800%d\n' $w $w $w
			printf 'unknown_mcast_dlid = 0xf0000%d\nmac_table_from_vports = true\n' $w
		done
		n=0
		for lid in $lids; do
			v=0
			while [ $v -lt $per ]; do
				printf '[[vport]]\nlid = %d\nvport = %d\nvesw = %d\nport_num = %d\n' \
					"$lid" $v $((v % 4 + 1)) $((n * 2 + v / 4 + 1))
				printf 'mac = "02:%s:00:%02d:00:%02d"\nenabled = true\n' "$1" $n $v
				v=$((v + 1))
			done
			n=$((n + 1))
		done
	} >"$2"
}

# The LID of opasim device $1.
lid_of() { awk -v d="$1" '$1 == d { print $5 }' $dbg/devices; }

netdevs() { ip -o link | grep -c 'link/ether 02:e[56]:00:'; }

# Milliseconds since boot (busybox's date has no %N), to 10 ms.
now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }

# timed NAME RC CMD...: runs CMD, saves its output in /tmp/NAME.out, fails
# unless it exits RC; sets $ms to the time it took.
timed() {
	local name=$1 want=$2 t0 rc
	shift 2
	t0=$(now_ms)
	"$@" >/tmp/$name.out 2>/tmp/$name.err
	rc=$?
	ms=$(($(now_ms) - t0))
	echo "$drv: $name: exit $rc in $ms ms: $(tail -n 1 /tmp/$name.out)"
	if [ $rc != "$want" ]; then
		tail -n 20 /tmp/$name.out /tmp/$name.err
		fail "$drv: $name exited $rc, not $want"
	fi
}

# macs_are BYTE [SKIP_NODES]: the 256 netdevs are there, and those of the
# nodes not in SKIP_NODES (indexes) have the MACs of config BYTE.
macs_are() {
	local bad
	[ "$(netdevs)" = $((nodes * per)) ] || fail "$drv: $(netdevs) netdevs, not $((nodes * per))"
	bad=$(ip -o link | awk -v want="$1" -v skip=" $2 " '/link\/ether 02:e[56]:00:/ {
		for (i = 1; i <= NF; i++) if ($i == "link/ether") mac = $(i + 1)
		split(mac, b, ":"); n = b[4] + 0
		if (index(skip, " " n " ") == 0 && b[2] != want) print mac
	}')
	[ -z "$bad" ] || { echo "$bad" | head; fail "$drv: netdevs without the MACs of 02:$1 (above)"; }
}

run_with() {
	drv=$1
	echo "=== $drv"
	must modprobe opasim devices=16
	i=16
	while [ $i -lt $nodes ]; do
		echo "add 1" >$dbg/devices || fail "cannot add HFI $i"
		i=$((i + 1))
	done
	must modprobe ib_umad
	must modprobe "$drv"
	lids=$(awk '{ print $5 }' $dbg/devices)
	[ "$(echo $lids | wc -w)" = $nodes ] || { cat $dbg/devices; fail "not $nodes HFIs"; }
	fabric e5 /tmp/a.toml
	fabric e6 /tmp/b.toml
	must em validate /tmp/a.toml

	timed apply-from-nothing 0 em apply /tmp/a.toml
	t_create=$ms
	count=$(netdevs)
	echo "$drv: $count VNIC netdevs"
	[ "$count" = $((nodes * per)) ] || fail "$drv: $count netdevs for $((nodes * per)) vports"
	n=0
	for lid in $lids; do
		v=0
		while [ $v -lt $per ]; do
			[ -n "$(netdev_by_mac "$(printf '02:e5:00:%02d:00:%02d' $n $v)")" ] ||
				fail "$drv: no netdev for LID $lid vport $v"
			v=$((v + 1))
		done
		n=$((n + 1))
	done
	timed apply-again 0 em apply /tmp/a.toml
	grep -qx "nothing to do" /tmp/apply-again.out || fail "$drv: a second apply sends Sets"
	# From nothing again, one MAD at a time.
	must rmmod "$drv"
	[ "$(netdevs)" = 0 ] || fail "$drv: netdevs left after rmmod"
	must modprobe "$drv"
	timed create-sequential 0 em apply --window 1 --max-in-flight 1 /tmp/a.toml
	t_create_seq=$ms
	macs_are e5

	timed mac-windowed 0 em apply /tmp/b.toml
	t_mac=$ms
	macs_are e6
	timed mac-sequential 0 em apply --window 1 --max-in-flight 1 /tmp/a.toml
	t_mac_seq=$ms
	macs_are e5

	dead_nodes=
	for d in $dead_hfis; do
		echo down >$dbg/$d/port1/state || fail "cannot take $d down"
		dead_nodes="$dead_nodes ${d#opasim}"
	done
	timed dead-windowed 3 em apply /tmp/b.toml
	t_dead=$ms
	bound=$((t_mac + give_up * 1000 + 5000 * scale))
	echo "$drv: with 3 of $nodes nodes dead: $t_dead ms (alive: $t_mac ms; bound $bound ms; the sum over dead nodes would be $((t_mac + 3 * give_up * 1000)) ms)"
	[ "$t_dead" -le "$bound" ] || fail "$drv: apply with dead nodes took $t_dead ms, over $bound"
	for d in $dead_hfis; do
		lid=$(printf '%#06x' "$(lid_of "$d")")
		grep -q "LID $lid: no response after 4 attempt(s)" /tmp/dead-windowed.err ||
			{ cat /tmp/dead-windowed.err; fail "$drv: no timeout error for $d (LID $lid)"; }
	done
	[ "$(wc -l </tmp/dead-windowed.err)" = 3 ] ||
		{ cat /tmp/dead-windowed.err; fail "$drv: not one error per dead node"; }
	macs_are e6 "$dead_nodes"
	timed dead-sequential 3 em apply --window 1 --max-in-flight 1 /tmp/a.toml
	t_dead_seq=$ms
	macs_are e5 "$dead_nodes"
	for d in $dead_hfis; do
		echo active >$dbg/$d/port1/state || fail "cannot bring $d back"
	done
	timed revived 0 em apply /tmp/a.toml
	macs_are e5

	echo "FIGURES $drv: create windowed ${t_create} ms, sequential ${t_create_seq} ms; MAC change windowed ${t_mac} ms, sequential ${t_mac_seq} ms;" \
		"3 dead windowed ${t_dead} ms, sequential ${t_dead_seq} ms"
	t0=$(now_ms)
	unload_vnic_stack "$drv"
	echo "$drv: unload in $(($(now_ms) - t0)) ms"
}

run_with opa_vnic
run_with opa_vnic_rs
check_dmesg_clean
echo "vnic-em-scale: ok"
