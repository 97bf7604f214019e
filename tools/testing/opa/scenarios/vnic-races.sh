# SPDX-License-Identifier: GPL-2.0
# What the EM changes over VEMA and what the stack (or opasim's control
# files) changes at the same time, each part followed by a check of the
# kernel log (no BUG, WARNING, lockdep splat or KASAN report):
#
# (a) base MAC Sets from the EM (alternating two MACs) against
#     "ip link set address" (alternating two others) on the same vport, up,
#     under the C opa_vnic and then opa_vnic_rs: both loops finish, the
#     vport still answers a Get, its address is one of the four, and a
#     fifth MAC from the EM still takes;
# (b) vesw id Sets (alternating 1 and 2) against "ip link set up/down",
#     under opa_vnic_rs and then the C opa_vnic: a last vesw id Set reads
#     back, and removing the device (opasim's "del") afterwards finishes
#     within 60 s;
# (c) per-port debugfs files of opasim held open while their device is
#     removed, read and written after it, closed; the device added again;
#     everything unloads;
# (d) MAC table Sets on the sending vport (two tables in turn, both with
#     the receiver's MAC, at different indices) while frames go to that
#     MAC, under opa_vnic_rs and then the C opa_vnic: every frame arrives
#     (the fabric has no unknown-unicast DLID, so a frame sent while the
#     table looked empty or torn would be dropped as DLID 0).
#
# The Sets go ten at a time from vema-sets, the ip commands ten at a time
# through "ip -batch", so that both sides keep a similar pace. Each loop
# runs at least N times (opa.race_count=N on the kernel command line,
# default 1000) and the faster one goes on until the slower is done.
# opa.race_parts=LETTERS runs only those parts (default abcd).
. /opa/guest-lib.sh

N=1000
PARTS=abcd
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	opa.race_count=*) N=${arg#*=} ;;
	opa.race_parts=*) PARTS=${arg#*=} ;;
	esac
done
# part LETTER: whether part LETTER runs.
part() { case "$PARTS" in *"$1"*) return 0 ;; esac; return 1; }
LIMIT=60
# The loops, which are slow under TCG, get longer.
LOOP_LIMIT=600
ctl=/sys/kernel/debug/opasim
for t in vnic-em vema-sets; do [ -x /opa/$t ] || fail "/opa/$t is missing"; done
two_vport_fabric

# vpi VESW MAC: the VESW port info two_vport_fabric gives the vport on
# LID 2 (fabric 1, P_Key 0x8001, multicast DLID 0xf00001, MTU 1500, port 2,
# forwarding, encap SLID 2), with vesw id VESW and base MAC MAC (12 hex
# digits), in hex.
vpi() {
	printf '0001%04x%020d8001%08d00f00001%0248d05dc0000' "$1" 0 0 0
	printf '0000000200000000%s030000000000000000000000000000000002%0192d' "$2" 0
}

# Each loop below runs at least N times and goes on until the other one has
# run N times too, so that they overlap from start to end whatever their
# speeds; it writes its count of runs in /tmp/NAME.runs and of failures in
# /tmp/NAME.bad.
# more NAME OTHER I: whether loop NAME, at run I, goes on.
more() {
	[ "$3" -ge $N ] && [ ! -e "/tmp/$1.reached" ] && : >"/tmp/$1.reached"
	[ "$3" -lt $N ] || [ ! -e "/tmp/$2.reached" ]
}

# run_loop NAME OTHER CMD...: runs CMD (ten operations a run) for as long
# as "more" says, counting the operations in /tmp/NAME.runs and those of the
# failed runs in /tmp/NAME.bad; what the failed runs said goes to
# /tmp/NAME.err.
run_loop() {
	local name=$1 other=$2 i=0 bad=0 out
	shift 2
	while more "$name" "$other" $i; do
		if ! out=$("$@" 2>&1); then
			bad=$((bad + 10))
			echo "$out" >>"/tmp/$name.err"
		fi
		i=$((i + 10))
	done
	echo $i >"/tmp/$name.runs"
	echo $bad >"/tmp/$name.bad"
}

# em_sets VPI_A VPI_B: ten Sets of VESW port info of vport 0 of LID 2,
# alternating A and B, from one vema-sets run (a vnic-em run per Set would
# make this side far slower than the other); fails unless every Set is
# answered with status 0.
em_sets() {
	/opa/vema-sets -d umad0 --dlid 2 --attr 0x0011 --mod 0 --count 10 "$1" "$2"
}

# ip_links ARGS_A ARGS_B: ten "ip link set dev $b", alternating the two
# argument lists, from one ip run (ip -batch).
ip_links() {
	for k in 1 2 3 4 5; do
		echo "link set dev $b $1"
		echo "link set dev $b $2"
	done | ip -batch -
}

# race WHAT EM_VPI_A EM_VPI_B IP_ARGS_A IP_ARGS_B: both loops at once, on
# the netdev $b of driver $drv; fails if a loop had a failure. The drivers
# log each trap they drop for its rate, thousands here: the console is
# quiet meanwhile (a serial console would pace the loops), and the kernel
# log of the race is printed afterwards without those lines.
race() {
	local t0 cons
	rm -f /tmp/em.* /tmp/ip.*
	dmesg_new >/dev/null
	cons=$(cut -f1 /proc/sys/kernel/printk)
	echo 1 >/proc/sys/kernel/printk
	t0=$(date +%s)
	run_loop em ip em_sets "$2" "$3" &
	em=$!
	run_loop ip em ip_links "$4" "$5" &
	ipl=$!
	wait_limit $em $LOOP_LIMIT "$drv: EM Set loop" || fail "$drv: EM Set loop exited non-zero"
	wait_limit $ipl $LOOP_LIMIT "$drv: ip link loop" || fail "$drv: ip link loop exited non-zero"
	echo "$cons" >/proc/sys/kernel/printk
	echo "kernel log of the race ($(dmesg_new | tee /tmp/race.log | grep -cE 'rate exceeded|Aborting trap') trap rate lines left out):"
	grep -vE 'rate exceeded|Aborting trap' /tmp/race.log
	echo "$drv: $1: $(($(date +%s) - t0)) s;" \
		"EM Sets: $(cat /tmp/em.runs), $(cat /tmp/em.bad) in failed runs;" \
		"ip link set: $(cat /tmp/ip.runs), $(cat /tmp/ip.bad) in failed runs"
	if [ "$(cat /tmp/em.bad)" != 0 ]; then
		cat /tmp/em.err
		fail "$drv: EM Sets failed (above)"
	fi
	if [ "$(cat /tmp/ip.bad)" != 0 ]; then
		cat /tmp/ip.err
		fail "$drv: ip link set failed (above)"
	fi
}

# setup DRV: the stack with DRV, the fabric applied, the netdev of the
# vport on LID 2 in $b, up.
setup() {
	drv=$1
	load_vnic_stack "$drv"
	must /opa/vnic-em -d umad0 apply /tmp/fabric.toml >/dev/null
	b=$(netdev_by_mac 02:00:00:00:02:00)
	[ -n "$b" ] || fail "$drv: no netdev for LID 2"
	must ip link set "$b" up
}

# part_done NAME: the kernel log check that ends each part.
part_done() {
	check_dmesg_clean
	echo "PASS: $1 (kernel log clean)"
}

MAC_EM1=020000000200 MAC_EM2=020000000201
MAC_IP1=02:00:00:00:02:0a MAC_IP2=02:00:00:00:02:0b

race_mac() {
	echo "=== (a) $1: EM MAC Sets against ip link set address, at least $N each"
	setup "$1"
	race "MAC Sets against ip link set address" "$(vpi 1 $MAC_EM1)" "$(vpi 1 $MAC_EM2)" \
		"address $MAC_IP1" "address $MAC_IP2"
	out=$(/opa/vnic-em -d umad0 raw -l 2 --attr 0x0011 --mod 0 2>&1)
	echo "$out" | grep -q '^status 0x0000$' || fail "$drv: the vport does not answer a Get: $out"
	addr=$(cat "/sys/class/net/$b/address")
	echo "$drv: $b address $addr"
	case $addr in
	02:00:00:00:02:00 | 02:00:00:00:02:01 | $MAC_IP1 | $MAC_IP2) ;;
	*) fail "$drv: $b has address $addr, none of the four set" ;;
	esac
	# The EM still sets the address: a fifth MAC shows.
	out=$(/opa/vnic-em -d umad0 raw -l 2 --attr 0x0011 --mod 0 --set --data "$(vpi 1 02000000020c)" 2>&1)
	echo "$out" | grep -q '^status 0x0000$' || fail "$drv: a last MAC Set failed: $out"
	addr=$(cat "/sys/class/net/$b/address")
	[ "$addr" = 02:00:00:00:02:0c ] ||
		fail "$drv: $b has address $addr after the EM set 02:00:00:00:02:0c"
	echo "$drv: $b address $addr after a last EM Set"
	unload_vnic_stack "$drv"
	part_done "(a) $drv"
}

race_vesw() {
	echo "=== (b) $1: EM vesw id Sets against ip link set up/down, at least $N each, then del opasim1"
	setup "$1"
	race "vesw id Sets against ip link set up/down" "$(vpi 2 020000000200)" \
		"$(vpi 1 020000000200)" down up
	# The vport still takes a Set and answers with what was set.
	out=$(/opa/vnic-em -d umad0 raw -l 2 --attr 0x0011 --mod 0 --set --data "$(vpi 7 020000000200)" 2>&1)
	echo "$out" | grep -q '^data 00010007' || fail "$drv: a last vesw id Set did not take: $out"
	out=$(/opa/vnic-em -d umad0 raw -l 2 --attr 0x0011 --mod 0 2>&1)
	echo "$out" | grep -q '^data 00010007' || fail "$drv: the vport does not read back vesw 7: $out"
	echo "$drv: vesw id 7 set and read back"
	ip link show dev "$b"
	sh -c "echo 'del opasim1' >$ctl/devices" &
	del=$!
	wait_limit $del $LIMIT "$drv: del opasim1" || fail "$drv: del opasim1 exited non-zero"
	[ -e /sys/class/infiniband/opasim1 ] && fail "$drv: opasim1 still exists"
	[ -e "/sys/class/net/$b" ] && fail "$drv: $b still exists"
	unload_vnic_stack "$drv"
	part_done "(b) $drv"
}

if part a; then
	race_mac opa_vnic
	race_mac opa_vnic_rs
fi
if part b; then
	race_vesw opa_vnic_rs
	race_vesw opa_vnic
fi
# mac_entries DIGEST MAC1 MAC2: a Set of MAC table entries 0 and 1 with the
# digest, MAC1 and MAC2 (12 hex digits each) both to LID 2, in hex.
mac_entries() {
	printf '00000002%08x%s000000000000%08x%s000000000000%08x' "$1" "$2" 512 "$3" 512
}

race_mac_table() {
	echo "=== (d) $1: MAC table Sets under traffic to a MAC of the table"
	setup "$1"
	a=$(netdev_by_mac 02:00:00:00:01:00)
	must ip link set "$a" up
	# The operational state follows the administrative one through the link
	# watch, up to a second later; a frame sent before is dropped as "not up".
	for d in "$a" "$b"; do
		i=0
		while [ "$(cat /sys/class/net/$d/operstate)" != up ]; do
			i=$((i + 1))
			[ $i -le 50 ] || fail "$drv: $d is not operationally up: $(cat /sys/class/net/$d/operstate)"
			sleep 0.1
		done
	done
	# Unicast only: the stack's own reports (IPv6 MLD, router solicitations)
	# are multicast.
	rx0=$(ethtool -S "$b" | awk '/ rx_unicast:/ { print $2 }')
	z0=$(ethtool -S "$a" | awk '/tx_dlid_zero:/ { print $2 }')
	# Sets on the vport of LID 1, the sender, from the EM on LID 2, until
	# the frames are sent.
	rm -f /tmp/frames.done /tmp/mt.bad
	(
		while [ ! -e /tmp/frames.done ]; do
			/opa/vema-sets -d umad1 --dlid 1 --attr 0x0012 --mod 0 --count 10 \
				"$(mac_entries 4369 020000000200 020000000900)" \
				"$(mac_entries 8738 020000000900 020000000200)" >/dev/null ||
				echo bad >>/tmp/mt.bad
		done
	) &
	sets=$!
	sent=0
	while [ $sent -lt $((N * 4)) ]; do
		must /opa/vnic-send --dev "$a" --kind ipv4-udp --dmac 02:00:00:00:02:00 --count 100 --flows 8
		sent=$((sent + 100))
	done
	: >/tmp/frames.done
	wait_limit $sets $LIMIT "$drv: MAC table Sets" || fail "$drv: the MAC table Sets failed"
	[ -e /tmp/mt.bad ] && fail "$drv: a MAC table Set was not answered with status 0"
	sleep 1
	rx=$(($(ethtool -S "$b" | awk '/ rx_unicast:/ { print $2 }') - rx0))
	z=$(($(ethtool -S "$a" | awk '/tx_dlid_zero:/ { print $2 }') - z0))
	echo "$drv: $sent frames sent during MAC table Sets: $rx received (unicast), $z dropped for DLID 0"
	if [ "$rx" != "$sent" ]; then
		ethtool -S "$a" | grep -E 'tx_|dlid' | grep -v ': 0$'
		ethtool -S "$b" | grep -E 'rx_' | grep -v ': 0$'
		grep -v ' 0$' $ctl/opasim0/port1/vnic_drops $ctl/opasim1/port1/vnic_drops
		fail "$drv: $((sent - rx)) frames lost while the MAC table changed"
	fi
	unload_vnic_stack "$drv"
	part_done "(d) $drv"
}

if part d; then
	race_mac_table opa_vnic_rs
	race_mac_table opa_vnic
fi
part c || { echo "vnic-races: ok (parts $PARTS)"; exit 0; }

echo "=== (c) per-port debugfs files open across the removal of their device"
load_vnic_stack opa_vnic_rs
must /opa/vnic-em -d umad0 apply /tmp/fabric.toml >/dev/null
p=$ctl/opasim0/port1
for f in sc2vl lid pkeys state capabilities vnic_drops; do
	[ -e "$p/$f" ] || fail "no $p/$f"
done
exec 3<"$p/sc2vl" 4<>"$p/sc2vl" 5<"$p/lid" 6<"$p/pkeys" 7<"$p/state" 8<"$p/vnic_drops"
must sh -c "echo 'del opasim0' >$ctl/devices"
[ -e /sys/class/infiniband/opasim0 ] && fail "opasim0 still exists"
[ -e $ctl/opasim0 ] && fail "debugfs opasim0 still exists"
# Used after the removal: either works on what was read at open or fails,
# and does not crash.
echo "read of sc2vl after del: $(cat <&3 2>&1)"
echo "read of state after del: $(cat <&7 2>&1)"
if (echo "2:1" >&4) 2>/dev/null; then w=accepted; else w=refused; fi
echo "write to sc2vl after del: $w"
exec 3<&- 4<&- 5<&- 6<&- 7<&- 8<&-
must sh -c "echo 'add 1 1' >$ctl/devices"
cat $ctl/devices
grep -q ' lids 1$' $ctl/devices || fail "the device added again does not have LID 1"
must rmmod opa_vnic_rs
must rmmod ib_umad
must rmmod opasim
[ -e $ctl ] && fail "$ctl still exists after rmmod opasim"
part_done "(c)"
echo "vnic-races: ok"
