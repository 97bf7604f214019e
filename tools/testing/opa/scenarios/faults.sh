# SPDX-License-Identifier: GPL-2.0
# Allocation failures in the VNIC driver's own work, one at a time, under
# the C opa_vnic (the reference) and then opa_vnic_rs.
#
# The kernel's failslab (Documentation/fault-injection/) fails kmalloc and
# kmem_cache allocations whose call stack holds the driver's code (the
# stack-trace filter, require-start/end, set to the module's text), sleeping
# ones too (ignore-gfp-wait off). An operation is run again and again, each
# time with one such allocation failed, the Nth it makes (failslab's
# interval, times 1), until it runs with none left to fail (which Ns: see
# search()). The operations:
#   apply   vnic-em apply of a second vport beside one applied before: the
#           EM's Gets and Sets through the VEMA agent, netdev creation, MAC
#           tables
#   iplink  on an applied vport: ip link up, MTU, a VLAN device, down
#   mac     on two applied vports, up: vnic-em apply of a config that
#           changes one's MAC and adds an explicit MAC table entry (MAC
#           table and base MAC Sets on live vports)
#   vesw    on the two applied vports, up, each in a network namespace:
#           vnic-em apply of a config that moves both to another vesw id
#           (VESWPortInfo Sets that change what transmit puts in every
#           packet); an apply that succeeded must leave them reaching each
#           other on the new id (a Set answered success must be in effect
#           for transmit too)
#   delete  on the vport on LID 2, applied with an explicit MAC table
#           entry: vnic-em set --delete, one attempt (--retries 0: a busy
#           answer is a failure, not retried); the vport must be as it was,
#           or wholly reset (power-on info, no MAC table, digest 0), never
#           the info reset with the table kept
#   flap    on an applied vport, up: its node port's link down and up
#           (opasim's state: the port events hfi1 delivers); the carrier
#           must come back
#   traffic between the two vports, each in a network namespace: a TCP
#           stream that meets a DMA engine holding its completions for a
#           second (opasim's vnic_tx_hold: NETDEV_TX_BUSY), then released
# Then, at rates (failslab's probability: 10%, 50% and 100% of the
# driver's allocations failed), each operation once more per rate; and with
# fail_page_alloc failing every page allocated under the driver's code, the
# apply that creates the second vport (create), apply and traffic.
# After each failure, with faults off: an apply that had succeeded must have
# been true (apply --check finds nothing to do: never a wrong success), a
# fresh apply converges (apply --check), each vport has its one netdev and
# no other is left, ping works between the two (each in a network
# namespace), the kernel log has nothing but the injected failures (no
# warning, oops, KASAN or lockdep report), and the driver unloads. On the
# debug kernel kmemleak then scans for leaks; on the others, the
# unreclaimable slab after the driver's last unload is within 2 MiB of
# what it was after a first load, apply, ping and unload.
# The sites (the driver's innermost frame on each failed stack) and what
# each operation did are printed per driver, with the number of failures
# injected.
#
# The C opa_vnic, the reference, is searched at sampled Ns: apply and mac
# every 24th allocation, vesw every one, delete as opa_vnic_rs, the others
# every 4th (its failures that matter are the sites it shares with
# opa_vnic_rs: the MAD answers, the netdev's creation, and the MAC table,
# which apply reaches: mac's every 24th meets only the MAD answers);
# opa_vnic_rs at every N that search() names, and both at every rate.
#
# That whole search (make faults; make check-full) takes over 20 minutes.
# make check runs a sample of it, a different one for each commit:
# opa.faults_seed=S on the kernel command line keeps, of each operation's
# Ns above, every Kth (opa.faults_every=K, default 12), starting at one the
# seed picks for that driver and operation, and the runs at rates each at
# one rate the seed picks; both drivers, every operation, the pages, and
# every check after each step, as in the whole search. Over many commits
# every N is reached; a failure names the seed, and "make faults
# FAULTS_SEED=S" runs the same sample again.
#
# opa.faults_quick=1 on the kernel command line (OPA_FLAVOR=debug make check
# sets it: under KASAN a step takes three times as long) keeps opa_vnic_rs
# only, searched at the reference's sampled Ns, and runs the 100% rate and
# the pages.
. /opa/guest-lib.sh
. /opa/faults-lib.sh

quick=0 seed= every=12
for arg in $(cat /proc/cmdline); do
	case $arg in
	opa.faults_quick=1) quick=1 ;;
	opa.faults_seed=*) seed=${arg#*=} ;;
	opa.faults_every=*) every=${arg#*=} ;;
	esac
done
case "$seed$every" in *[!0-9]*) fail "opa.faults_seed and opa.faults_every take numbers" ;; esac
[ "$every" -gt 0 ] || fail "opa.faults_every must be at least 1"
[ -z "$seed" ] || echo "faults: a sample, seed $seed, every ${every}th N (replay: make faults FAULTS_SEED=$seed FAULTS_EVERY=$every)"

# pick K WHAT: a number below K drawn from the seed and WHAT (0 without a
# seed): the same seed picks the same for the same WHAT.
pick() {
	[ -n "$seed" ] || { echo 0; return; }
	echo $((0x$(echo "$seed $2" | md5sum | cut -c1-7) % $1))
}

F=/sys/kernel/debug/failslab
[ -d $F ] || fail "no $F: the kernel lacks CONFIG_FAILSLAB or CONFIG_FAULT_INJECTION_DEBUG_FS"
P=/sys/kernel/debug/fail_page_alloc
[ -d $P ] || fail "no $P: the kernel lacks CONFIG_FAIL_PAGE_ALLOC"

two_vport_fabric
# The vport on LID 1 alone: applied before the faults, so that the faulted
# apply creates one vport (the other's path is the same).
awk '/^\[\[vport\]\]/ { n++ } n < 2' /tmp/fabric.toml >/tmp/first.toml
# The mac operation's config: the vport on LID 2 with another MAC, and an
# explicit MAC table entry.
sed 's/02:00:00:00:02:00/02:00:00:00:02:99/' /tmp/fabric.toml >/tmp/mac.toml
printf '[[vesw.mac_table]]\nmac = "02:a0:00:00:00:10"\ndlid = 0x2\n' >>/tmp/mac.toml
# The vesw operation's config: both vports on vesw id 2.
sed 's/^id = 1$/id = 2/; s/^vesw = 1$/vesw = 2/' /tmp/fabric.toml >/tmp/vesw.toml
D=/sys/kernel/debug/opasim
quiet_netns h1 h2

# netns_pair A B: the netdev A in h1 as 192.168.77.1/24, B in h2 as
# 192.168.77.2/24, both up, with their carriers (faults off: a ping sent
# at once took a second longer than one sent once both had it); netns_back
# A B: back to the first namespace, where converged() looks for them.
netns_pair() {
	into_netns "$1" h1 192.168.77.1 && into_netns "$2" h2 192.168.77.2 ||
		fail "$drv $op #$n: cannot set the netdevs up in h1 and h2 with faults off"
	carrier "$1" h1 && carrier "$2" h2 ||
		fail "$drv $op #$n: no carrier in h1 and h2 with faults off"
}

netns_back() {
	ip -n h1 link set "$1" netns 1 && ip -n h2 link set "$2" netns 1 ||
		fail "$drv $op #$n: cannot move the netdevs back"
}

# carrier DEV [NS]: DEV (in NS, or the first namespace) has its carrier
# within 10 s.
carrier() {
	local i=0
	until ip ${2:+-n "$2"} -o link show "$1" | grep LOWER_UP >/dev/null; do
		[ $i -lt 50 ] || return 1
		sleep 0.2
		i=$((i + 1))
	done
}

# The state every step must end in: both vports applied and true, one
# netdev each and no other, ping between them.
converged() {
	/opa/vnic-em -d umad0 apply /tmp/fabric.toml >/tmp/apply.out 2>&1 || {
		cat /tmp/apply.out
		fail "$drv $op #$n: apply with faults off failed"
	}
	/opa/vnic-em -d umad0 apply --check /tmp/fabric.toml >/tmp/apply.out 2>&1 || {
		cat /tmp/apply.out
		fail "$drv $op #$n: apply with faults off did not converge"
	}
	a=$(netdev_by_mac 02:00:00:00:01:00)
	b=$(netdev_by_mac 02:00:00:00:02:00)
	[ -n "$a" ] && [ -n "$b" ] || fail "$drv $op #$n: a vport has no netdev"
	# The VNIC netdevs are veth<N> (the name both drivers give).
	others=$(ls /sys/class/net | grep '^veth' | grep -v -e "^$a\$" -e "^$b\$" | tr '\n' ' ')
	[ -z "$others" ] || fail "$drv $op #$n: netdevs left over: $others"
	netns_pair "$a" "$b"
	ip netns exec h1 ping -c 1 -W 5 192.168.77.2 >/dev/null ||
		fail "$drv $op #$n: no ping between the vports with faults off"
}

# applied_true RC FILE: an apply of FILE that exited RC, if 0, made the
# fabric FILE's (never a wrong success).
applied_true() {
	[ "$1" = 0 ] || return 0
	/opa/vnic-em -d umad0 apply --check "$2" >/tmp/check.out 2>&1 || {
		cat /tmp/op.out /tmp/check.out
		fail "$drv $op #$n: apply reported success, but the fabric differs"
	}
}

# deleted_whole RC: after a delete of the vport on LID 2 (applied from
# /tmp/mac.toml) that exited RC, the vport is wholly reset: vesw id 0, no
# MAC table, digest 0; or, if RC is not 0, still as /tmp/mac.toml made it
# (a delete may also be done with its answer lost).
deleted_whole() {
	local json
	/opa/vnic-em -d umad0 show --lid 2 --vport 0 --json --no-counters >/tmp/show.json ||
		fail "$drv delete #$n: cannot read the vport with faults off"
	json=$(tr -d ' \n' </tmp/show.json)
	case $json in
	*'"vesw":{"id":0,'*'"mac_tbl_digest":0,'*'"mac_table":[],'*) return 0 ;;
	esac
	[ "$1" != 0 ] && /opa/vnic-em -d umad0 apply --check /tmp/mac.toml >/tmp/check.out 2>&1 && return 0
	cat /tmp/op.out
	echo "$json"
	fail "$drv delete #$n: exit $1, and the vport is neither as it was nor wholly reset"
}

# armed_apply FILE: apply FILE with the Nth allocation failed; sets rc and,
# when the fault did not fire, injected=no (step's variables).
armed_apply() {
	arm "$n"
	/opa/vnic-em -d umad0 apply "$1" >/tmp/op.out 2>&1
	rc=$?
	disarm || injected=no
	applied_true $rc "$1"
}

# step OP N: one operation with the Nth allocation failed; returns 1 once
# an operation ran with none failed.
step() {
	local rc injected=yes
	op=$1 n=$2
	must modprobe "$drv"
	setup_failslab "$drv" >/dev/null
	case $op in
	apply)
		must /opa/vnic-em -d umad0 apply /tmp/first.toml >/dev/null
		armed_apply /tmp/fabric.toml
		;;
	iplink)
		must /opa/vnic-em -d umad0 apply /tmp/fabric.toml >/dev/null
		b=$(netdev_by_mac 02:00:00:00:02:00)
		arm "$n"
		{ ip link set "$b" up && ip link set "$b" mtu 1400 &&
			ip link add link "$b" name vl10 type vlan id 10 && ip link set vl10 up &&
			ip link del vl10 && ip link set "$b" down; } >/tmp/op.out 2>&1
		rc=$?
		disarm || injected=no
		ip link del vl10 2>/dev/null
		ip link set "$b" down 2>/dev/null
		;;
	mac)
		must /opa/vnic-em -d umad0 apply /tmp/fabric.toml >/dev/null
		must ip link set "$(netdev_by_mac 02:00:00:00:01:00)" up
		must ip link set "$(netdev_by_mac 02:00:00:00:02:00)" up
		armed_apply /tmp/mac.toml
		;;
	vesw)
		must /opa/vnic-em -d umad0 apply /tmp/fabric.toml >/dev/null
		a=$(netdev_by_mac 02:00:00:00:01:00)
		b=$(netdev_by_mac 02:00:00:00:02:00)
		netns_pair "$a" "$b"
		armed_apply /tmp/vesw.toml
		if [ $rc = 0 ] && ! ip netns exec h1 ping -c 1 -W 5 192.168.77.2 >/dev/null; then
			fail "$drv vesw #$n: apply reported success, but the vports do not reach each other on the new vesw id"
		fi
		netns_back "$a" "$b"
		;;
	delete)
		must /opa/vnic-em -d umad0 apply /tmp/mac.toml >/dev/null
		arm "$n"
		/opa/vnic-em -d umad0 --retries 0 set --lid 2 --vport 0 --delete >/tmp/op.out 2>&1
		rc=$?
		disarm || injected=no
		deleted_whole $rc
		;;
	flap)
		must /opa/vnic-em -d umad0 apply /tmp/fabric.toml >/dev/null
		b=$(netdev_by_mac 02:00:00:00:02:00)
		must ip link set "$b" up
		carrier "$b" || fail "$drv flap #$n: $b has no carrier before the flap"
		arm "$n"
		echo down >$D/opasim1/port1/state
		sleep 0.5
		echo active >$D/opasim1/port1/state
		carrier "$b"
		rc=$?
		# The port events' work (the traps of the link's change) ends later.
		sleep 1
		disarm || injected=no
		[ $rc = 0 ] || fail "$drv flap #$n: the carrier of $b did not come back"
		;;
	traffic)
		must /opa/vnic-em -d umad0 apply /tmp/fabric.toml >/dev/null
		a=$(netdev_by_mac 02:00:00:00:01:00)
		b=$(netdev_by_mac 02:00:00:00:02:00)
		netns_pair "$a" "$b"
		ip netns exec h2 timeout 20 iperf3 -s -1 >/dev/null 2>&1 &
		server=$!
		sleep 0.5
		arm "$n"
		ip netns exec h1 timeout 15 iperf3 -c 192.168.77.2 -t 3 >/tmp/op.out 2>&1 &
		client=$!
		sleep 1
		echo hold >$D/opasim0/port1/vnic_tx_hold
		sleep 1
		echo release >$D/opasim0/port1/vnic_tx_hold
		wait $client
		rc=$?
		disarm || injected=no
		kill $server 2>/dev/null
		wait $server 2>/dev/null
		netns_back "$a" "$b"
		;;
	esac
	log_check
	total=$((total + $(grep -c 'FAULT_INJECTION: forcing a failure' /tmp/step.log)))
	read -r key site </tmp/site
	converged
	log_check
	must rmmod "$drv"
	log_check
	steps=$((steps + 1))
	[ $steps -le 400 ] || fail "$drv: more than 400 steps"
	if [ $injected = yes ]; then
		echo "$op #$n: $site: $([ $rc = 0 ] && echo "completed" || echo "failed (exit $rc)")" >>"/tmp/$drv.steps"
		return
	fi
	echo "$op #$n: none failed, exit $rc" >>"/tmp/$drv.steps"
	key=none
	resync
}

# search OP DENSE STRIDE LEAST: the operation with its 1st allocation
# failed, its 2nd, ... up to its DENSEth, then every STRIDEth, until it runs
# with none left to fail. apply: every one of the first 24 (the MADs'
# answers, a few allocations each, the same sites again for each MAD), then
# every 6th (the netdev's creation: register_netdev() alone makes a hundred,
# kernfs nodes of one call); mac: every one of the first 24, then every 3rd
# (the MADs again); delete: every one of the first 12 (the Gets' answers and the
# delete's own: its transmit plan and table, its netdev's changes), then every
# 4th (the answers to vnic-em's later reads, three allocations each); the
# others make few: every one.
# failslab's count is a plain increment (should_fail_ex()): two CPUs in the
# driver's code at once can lose one, or carry it past the interval, and the
# fault then never fires. So a run with none failed is believed only when
# the same N, after resync(), again fails none; and an operation known to
# make more than LEAST allocations must get past its LEASTth.
#
# With a seed, only every $every-th of those Ns is run (the ith, with i
# modulo $every the one pick() draws), and the Ns that end the search.
search() {
	local op=$1 dense=$2 stride=$3 least=$4 n=1 nones=0 i=0 k=1 at=0
	if [ -n "$seed" ]; then
		k=$every
		at=$(pick "$k" "$drv $op")
	fi
	while :; do
		# An N outside the sample is passed over.
		if [ $((i % k)) = "$at" ]; then
			step "$op" $n
			if [ "$key" = none ]; then
				nones=$((nones + 1))
				[ $nones -lt 2 ] && continue
				[ $n -gt "$least" ] ||
					fail "$drv $op: the search ended at #$n; this operation makes more than $least allocations"
				return
			fi
			nones=0
		fi
		i=$((i + 1))
		if [ $n -lt "$dense" ]; then n=$((n + 1)); else n=$((n + stride)); fi
	done
}

# rate OP P [DIR]: the operation once with P% of the driver's allocations
# failed (failslab's probability, interval 1, times -1: its count, which only
# an interval above 1 advances, stays as arm() left it); with DIR $P, P% of
# the pages allocated under the driver's code (fail_page_alloc: a kmalloc
# that needs a new slab, or a large one, fails there).
rate() {
	local rc faults d=${3:-$F} what
	op=$1 n=$2%
	[ $d = $F ] && what=$2% || what="$2% of pages"
	must modprobe "$drv"
	setup_failslab "$drv" >/dev/null
	if [ "$op" = create ]; then
		must /opa/vnic-em -d umad0 apply /tmp/first.toml >/dev/null
	else
		must /opa/vnic-em -d umad0 apply /tmp/fabric.toml >/dev/null
		a=$(netdev_by_mac 02:00:00:00:01:00)
		b=$(netdev_by_mac 02:00:00:00:02:00)
		if [ "$op" = traffic ]; then
			netns_pair "$a" "$b"
		else
			ip link set "$a" up && ip link set "$b" up || fail "$drv rate $op: ip link up with faults off"
		fi
	fi
	echo 0 >$d/probability
	echo 1 >$d/interval
	echo -1 >$d/times
	echo "$2" >$d/probability
	case $op in
	create) /opa/vnic-em -d umad0 apply /tmp/fabric.toml ;;
	apply) /opa/vnic-em -d umad0 apply /tmp/mac.toml ;;
	iplink)
		ip link set "$b" mtu 1400 && ip link add link "$b" name vl10 type vlan id 10 &&
			ip link set vl10 up && ip link del vl10 && ip link set "$b" down
		;;
	flap)
		echo down >$D/opasim1/port1/state
		sleep 0.5
		echo active >$D/opasim1/port1/state
		sleep 1
		;;
	traffic) ip netns exec h1 ping -c 20 -i 0.1 -W 2 192.168.77.2 ;;
	esac >/tmp/op.out 2>&1
	rc=$?
	echo 0 >$d/probability
	echo 0 >$d/times
	ip link del vl10 2>/dev/null
	[ "$op" = traffic ] && netns_back "$a" "$b"
	[ "$op" = create ] && applied_true $rc /tmp/fabric.toml
	[ "$op" = apply ] && applied_true $rc /tmp/mac.toml
	log_check
	faults=$(grep -c 'FAULT_INJECTION: forcing a failure' /tmp/step.log)
	total=$((total + faults))
	echo "rate $op at $what: $faults failed, exit $rc" >>"/tmp/$drv.steps"
	converged
	log_check
	must rmmod "$drv"
	log_check
}

# slab_kb: the kernel's unreclaimable slab memory (kB), once the caches
# that can be dropped are and the RCU callbacks of what was freed have run.
slab_kb() {
	echo 3 >/proc/sys/vm/drop_caches
	sleep 3
	awk '/^SUnreclaim:/ { print $2 }' /proc/meminfo
}

run_with() {
	local slab0 slab1 t0
	drv=$1
	t0=$(date +%s)
	: >"/tmp/$drv.steps"
	steps=0
	total=0
	must modprobe opasim
	must modprobe ib_umad
	dmesg -c >/dev/null
	# The baseline after one load, apply, ping and unload: the caches the
	# first use fills (and keeps) are in it.
	must modprobe "$drv"
	must /opa/vnic-em -d umad0 apply /tmp/fabric.toml >/dev/null
	op=warm-up n=0 converged
	must rmmod "$drv"
	log_check
	slab0=$(slab_kb)
	if [ $quick = 1 ] || [ "$drv" = opa_vnic ]; then
		search apply 1 24 24
		search iplink 1 4 4
		search mac 1 24 24
		search vesw 1 1 4
		search delete 12 4 2
		search flap 1 4 0
		search traffic 1 4 0
	else
		search apply 24 6 24
		search iplink 1 1 4
		search mac 24 3 24
		search vesw 1 1 4
		search delete 12 4 2
		search flap 1 1 0
		search traffic 1 1 0
	fi
	# Once a boot, the resync itself (the count is in the thousands by now).
	[ -n "$resync_checked" ] || check_resync
	resync_checked=1
	rates="10 50 100"
	[ $quick = 1 ] && rates=100
	if [ -n "$seed" ]; then
		# One rate for each operation, drawn.
		for op in apply iplink flap traffic; do
			set -- $rates
			shift "$(pick 3 "$drv rate $op")"
			rate $op "$1"
		done
	else
		for p in $rates; do
			for op in apply iplink flap traffic; do
				rate $op $p
			done
		done
	fi
	for op in create apply traffic; do
		rate $op 100 $P
	done
	slab1=$(slab_kb)
	must rmmod ib_umad
	must rmmod opasim
	echo "== $drv: $steps steps, each with one allocation failed (#N: the Nth the driver's work made)"
	grep -v '^rate ' "/tmp/$drv.steps" | sort -t'#' -k1,1 -k2n
	echo "== $drv: at rates"
	grep '^rate ' "/tmp/$drv.steps"
	echo "== $drv: the sites"
	grep -v -e 'none failed' -e '^rate ' "/tmp/$drv.steps" | sed 's/^\([a-z]*\) #[0-9]*: /\1 /; s/: .*//' | sort | uniq -c
	echo "== $drv: $total allocation failures injected in all"
	echo "== $drv: unreclaimable slab $slab0 kB before its first load, $slab1 kB after its last unload"
	echo "== $drv: $(($(date +%s) - t0)) s in all"
	# A leak of a netdev per failed creation or per step would be megabytes
	# (20 kB and more each); a few hundred kB are what the kernel's caches
	# keep. Under KASAN the quarantine holds freed objects by the megabyte:
	# kmemleak judges there.
	if ! debug_kernel && [ $((slab1 - slab0)) -gt 2048 ]; then
		fail "$drv: the slab grew by $((slab1 - slab0)) kB over the faults"
	fi
}

[ $quick = 1 ] || run_with opa_vnic
run_with opa_vnic_rs
check_dmesg_clean
echo "faults: ok"
