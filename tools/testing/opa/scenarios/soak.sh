# SPDX-License-Identifier: GPL-2.0
# A bounded soak of opa_vnic_rs (make soak): for a set time, actions drawn
# at random from a seed, each followed by its checks:
#   em      vnic-em apply of a changed config: vesw MTU, which of the extra
#           vports are enabled, their MACs (the vesw's MAC tables follow),
#           explicit MAC table entries; with traffic flowing, or not
#   traffic ping both ways, a TCP stream (iperf3), and once in a while one
#           that meets a stalled DMA engine (opasim's vnic_tx_hold) before
#           it is released
#   flap    a node port's link down for a moment and up again (opasim's
#           state: the port events hfi1 delivers), under traffic or not
#   reload  rmmod opa_vnic_rs (under traffic or not), modprobe, apply
# After each action: the kernel log has no warning, oops, KASAN, lockdep or
# hung-task report; every few actions, and after each reload: the fabric
# reads back as the config (apply --check), every netdev of the driver
# belongs to a vport of the config and no vport has two, and the two base
# vports (one per node, each in a network namespace) ping each other. At
# the end the stack unloads and the log is clean (on the debug kernel,
# kmemleak scans for leaks).
#
# The kernel command line sets it (make soak passes them):
#   opa.soak_minutes=M   how long (default 2, make soak's default 20)
#   opa.soak_seed=S      the seed (default: the clock); the same seed draws
#                        the same actions, so a run can be replayed
. /opa/guest-lib.sh

minutes=2
seed=$(date +%s)
for arg in $(cat /proc/cmdline); do
	case $arg in
	opa.soak_minutes=*) minutes=${arg#*=} ;;
	opa.soak_seed=*) seed=${arg#*=} ;;
	esac
done
case "$minutes$seed" in *[!0-9]*) fail "opa.soak_minutes and opa.soak_seed take numbers" ;; esac
echo "soak: seed $seed, $minutes minutes (replay: make soak SOAK_SEED=$seed SOAK_MINUTES=$minutes)"

drv=opa_vnic_rs
D=/sys/kernel/debug/opasim
rng=$seed
# rnd N: a number in 0..N-1 in $r, from the seeded generator (the LCG of
# POSIX's rand() example, in the shell's 64-bit arithmetic): the same seed
# gives the same draws whatever the kernel's speed.
rnd() {
	rng=$(((rng * 1103515245 + 12345) % 2147483648))
	r=$((rng / 65536 % $1))
}

# soak_fabric FILE: a config drawn at random. vesw 1 (P_Key 0x8001) with
# four vports on each node (LIDs 1 and 2): vport 0, the base one, always
# enabled with its fixed MAC; vports 1-3 each enabled or not, with a MAC
# drawn from four; 0-3 explicit MAC table entries.
soak_fabric() {
	local file=$1 lid v mtu
	rnd 4
	mtu=$(echo 1500 2000 4000 9000 | cut -d' ' -f$((r + 1)))
	{
		printf '[em]\nfabric_id = 1\n\n[[vesw]]\nid = 1\nname = "soak"\npkey = 0x8001\n'
		printf 'eth_mtu = %d\nunknown_mcast_dlid = 0xf00001\nmac_table_from_vports = true\n' "$mtu"
		rnd 4
		v=0
		while [ $v -lt $r ]; do
			rnd 256
			printf '[[vesw.mac_table]]\nmac = "02:a0:00:00:%02x:%02x"\n' $v $r
			rnd 2
			printf 'dlid = %d\n' $((r + 1))
			v=$((v + 1))
		done
		for lid in 1 2; do
			printf '[[vport]]\nlid = %d\nvport = 0\nvesw = 1\nport_num = %d\n' $lid $(((lid - 1) * 4 + 1))
			printf 'mac = "02:00:00:00:%02d:00"\n' $lid
			for v in 1 2 3; do
				printf '[[vport]]\nlid = %d\nvport = %d\nvesw = 1\nport_num = %d\n' \
					$lid $v $(((lid - 1) * 4 + v + 1))
				rnd 4
				printf 'mac = "02:00:00:00:%02d:%d%d"\n' $lid $v $r
				rnd 3
				[ $r = 0 ] && echo 'enabled = false'
			done
		done
	} >"$file.new"
	mv "$file.new" "$file"
}

# The MACs of the netdevs of the driver, in every namespace.
vnic_macs() {
	for ns in "" h1 h2; do
		ip ${ns:+-n $ns} -o link
	done | grep -o 'link/ether 02:00:00:00:[0-9:]*' | awk '{ print $2 }'
}

# place: the base vports' netdevs into h1 and h2 (addressed, up), where
# they are not there yet (a reload makes them again).
place() {
	local a b
	a=$(netdev_by_mac 02:00:00:00:01:00)
	b=$(netdev_by_mac 02:00:00:00:02:00)
	if [ -n "$a" ]; then
		into_netns "$a" h1 192.168.77.1 || fail "soak #$i: cannot set up $a in h1"
	fi
	if [ -n "$b" ]; then
		into_netns "$b" h2 192.168.77.2 || fail "soak #$i: cannot set up $b in h2"
	fi
}

apply() {
	/opa/vnic-em -d umad0 apply /tmp/soak.toml >/tmp/apply.out 2>&1 || {
		cat /tmp/apply.out
		fail "soak #$i ($what): apply failed"
	}
}

# log_ok: no kernel report since the last call.
log_ok() {
	dmesg -c >/tmp/step.log
	if grep -qE 'WARNING:|BUG:|Oops|general protection|Call Trace:|kernel BUG|UBSAN|KASAN|possible recursive locking|circular locking|hung_task|blocked for more than' /tmp/step.log; then
		cat /tmp/step.log
		fail "soak #$i ($what): the kernel log has a report (above)"
	fi
	checks=$((checks + 1))
}

# wait_carrier NS MAC SECS: the netdev of MAC in NS has its carrier.
wait_carrier() {
	local n=0
	until ip -n "$1" -o link | grep "link/ether $2" | grep -q LOWER_UP; do
		[ $n -ge $(($3 * 5)) ] && return 1
		sleep 0.2
		n=$((n + 1))
	done
}

# verify: the fabric as the config, the netdevs as its vports, a ping.
verify() {
	local m
	/opa/vnic-em -d umad0 apply --check /tmp/soak.toml >/tmp/check.out 2>&1 || {
		cat /tmp/check.out
		fail "soak #$i ($what): the fabric differs from the config"
	}
	for m in $(vnic_macs | sort | uniq -d); do
		fail "soak #$i ($what): two netdevs have the MAC $m"
	done
	for m in $(vnic_macs); do
		grep -q "mac = \"$m\"" /tmp/soak.toml || fail "soak #$i ($what): a netdev of $m, no vport of the config"
	done
	wait_carrier h1 02:00:00:00:01:00 10 && wait_carrier h2 02:00:00:00:02:00 10 ||
		fail "soak #$i ($what): a base vport has no carrier"
	ip netns exec h1 ping -c 2 -i 0.2 -W 5 192.168.77.2 >/dev/null ||
		fail "soak #$i ($what): no ping between the base vports"
	verified=$((verified + 1))
	log_ok
}

# stream SECS: a TCP stream from h1 to h2 in the background ($spid); its
# result is not checked (actions under it may cut it).
stream() {
	ip netns exec h2 timeout $(($1 + 10)) iperf3 -s -1 >/dev/null 2>&1 &
	spid=$!
	sleep 0.5
	ip netns exec h1 timeout $(($1 + 5)) iperf3 -c 192.168.77.2 -t "$1" >/dev/null 2>&1 &
	spid="$spid $!"
}
stream_end() {
	[ -n "$spid" ] && wait $spid 2>/dev/null
	spid=
}

quiet_netns h1 h2
must modprobe opasim
must modprobe ib_umad
must modprobe $drv
dmesg -c >/dev/null
i=0
what=start
checks=0
verified=0
n_em=0 n_traffic=0 n_flap=0 n_reload=0 n_busy=0
soak_fabric /tmp/soak.toml
apply
place
verify
end=$(($(date +%s) + minutes * 60))
while [ "$(date +%s)" -lt $end ]; do
	i=$((i + 1))
	rnd 10
	case $r in
	0 | 1 | 2)
		n_em=$((n_em + 1))
		soak_fabric /tmp/soak.toml
		rnd 2
		what="em$([ $r = 1 ] && echo ' under traffic')"
		[ $r = 1 ] && stream 3
		apply
		stream_end
		place
		;;
	3 | 4 | 5)
		n_traffic=$((n_traffic + 1))
		rnd 4
		if [ $r = 0 ]; then
			# A stalled DMA engine on node 1's port: the stream fills the rings,
			# meets NETDEV_TX_BUSY, and goes on once they drain.
			what="traffic with the DMA engine held"
			n_busy=$((n_busy + 1))
			stream 4
			sleep 1
			echo hold >$D/opasim0/port1/vnic_tx_hold || fail "soak #$i: hold"
			sleep 1
			echo release >$D/opasim0/port1/vnic_tx_hold || fail "soak #$i: release"
			stream_end
		else
			what=traffic
			stream 2
			stream_end
			ip netns exec h2 ping -c 3 -i 0.2 -W 5 192.168.77.1 >/dev/null ||
				fail "soak #$i ($what): no ping from h2 to h1"
		fi
		;;
	6 | 7)
		n_flap=$((n_flap + 1))
		rnd 2
		dev=opasim$r
		rnd 2
		what="flap of $dev$([ $r = 1 ] && echo ' under traffic')"
		[ $r = 1 ] && stream 3
		echo down >$D/$dev/port1/state || fail "soak #$i: $dev down"
		rnd 10
		sleep "0.$r"
		echo active >$D/$dev/port1/state || fail "soak #$i: $dev up"
		stream_end
		;;
	*)
		n_reload=$((n_reload + 1))
		rnd 2
		what="reload$([ $r = 1 ] && echo ' under traffic')"
		[ $r = 1 ] && stream 3
		must rmmod $drv
		stream_end
		vnic_macs | grep -q . && fail "soak #$i ($what): netdevs left after rmmod: $(vnic_macs)"
		must modprobe $drv
		apply
		place
		verify
		continue
		;;
	esac
	log_ok
	rnd 3
	[ $r = 0 ] && verify
done
what=end
verify
echo "soak: $i actions in $minutes minutes (seed $seed): $n_em EM changes, $n_traffic traffic" \
	"($n_busy with the DMA engine held), $n_flap link flaps, $n_reload reloads;" \
	"$checks kernel log checks, $verified full checks"
must rmmod $drv
must rmmod ib_umad
must rmmod opasim
check_dmesg_clean
echo "soak: ok"
