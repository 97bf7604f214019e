# SPDX-License-Identifier: GPL-2.0
# Failslab and fail_page_alloc aimed at one module's text, for the faults
# scenario (scenarios/faults.sh, which sets drv, op, n and total, and sources
# this after guest-lib.sh): the Nth allocation from now made with the
# module's code on the stack fails (arm, disarm, resync), and the kernel log
# of a step is checked and its failure's site read (log_check).

# module_text MOD: "START END" of MOD's code: its first function, and two
# pages past its last (module text is page-aligned, with a guard page after).
module_text() {
	local first last
	first=$(awk -v m="[$1]" '$4 == m && ($2 == "t" || $2 == "T") { print $1 }' /proc/kallsyms | sort | head -n 1)
	last=$(awk -v m="[$1]" '$4 == m && ($2 == "t" || $2 == "T") { print $1 }' /proc/kallsyms | sort | tail -n 1)
	[ -n "$first" ] || fail "no functions of $1 in /proc/kallsyms"
	echo "0x$first 0x$(printf '%x' $((0x${last%???} + 2)))000"
}

# The fault counter: failslab's `count` is never reset, and counts only
# filtered allocations while armed; the Nth one from now fails when the
# interval is the count so far plus N (see should_fail_ex()).
count=0

# arm N: fail the Nth allocation from now made with the driver on the stack.
arm() {
	local interval=$((count + $1))
	echo 0 >$F/probability
	echo 1 >$F/times
	echo "$interval" >$F/interval
	echo 100 >$F/probability
	armed=$interval
}

# counted: the count after the armed fault fired. An interval of 1 does not
# count (should_fail_ex() counts only above 1).
counted() {
	[ "$armed" -le 1 ] || count=$armed
}

# disarm: no more faults; says whether the armed one was injected.
disarm() {
	echo 0 >$F/probability
	counted
	[ "$(cat $F/times)" = 0 ]
}

# resync: after an operation that made fewer filtered allocations than the
# interval asked for, the count is unknown: below the armed interval, or,
# when two CPUs carried it past (see search()), a few above. The fault is
# armed again RESYNC_MARGIN further on and made to fire: the count is then
# that interval, exactly. (Firing the old interval would not do: a count
# carried past it fires at its next multiple, and every later N would be
# off by as much, each search ending at half its depth.) What makes it fire
# is an apply of the first vport alone on a freshly loaded driver: one
# port's MADs, answered one at a time by its completion work, the netdev
# created there too, so that no second CPU in the driver's code can carry
# the count past this interval in turn (an apply of both ports did, once
# in a run).
RESYNC_MARGIN=64
resync() {
	local i=0 interval=$((armed + RESYNC_MARGIN))
	echo 0 >$F/probability
	echo 1 >$F/times
	echo "$interval" >$F/interval
	armed=$interval
	until [ "$(cat $F/times)" = 0 ]; do
		i=$((i + 1))
		[ $i -le 50 ] || fail "$drv: the armed fault never fired in 50 applies"
		must modprobe "$drv"
		setup_failslab "$drv" >/dev/null
		echo 100 >$F/probability
		/opa/vnic-em -d umad0 apply /tmp/first.toml >/dev/null 2>&1
		echo 0 >$F/probability
		must rmmod "$drv"
	done
	counted
	log_check
	total=$((total + $(grep -c 'FAULT_INJECTION: forcing a failure' /tmp/step.log)))
}

# setup_failslab MOD: failslab and fail_page_alloc aimed at MOD's text.
setup_failslab() {
	local d range
	range=$(module_text "$1")
	for d in $F $P; do
		echo N >$d/ignore-gfp-wait
		echo 32 >$d/stacktrace-depth
		echo 0 >$d/space
		echo 2 >$d/verbose
		echo 0 >$d/task-filter
		set -- $range
		echo "$1" >$d/require-start
		echo "$2" >$d/require-end
	done
	# Pages of any order, highmem ones too (the slabs' own pages among them).
	echo N >$P/ignore-gfp-highmem
	echo 0 >$P/min-order
	echo "$range: $drv's text, the failslab and fail_page_alloc filter"
}

# The kernel log since the last call, without the injected failures' own
# reports (FAULT_INJECTION and its stack dump); fails on anything bad left.
# Writes the driver's innermost frame on the injected failure's stack to
# /tmp/site: as the kernel prints it (the site's key), and readably.
log_check() {
	dmesg -c >/tmp/step.log
	# Two CPUs may both pass failslab's check before either counts the fault
	# down, and their reports interleave: each report ends at its </TASK>.
	# A page the page allocator fails is reported again by warn_alloc(), with
	# its own stack ("page allocation failure"), unless __GFP_NOWARN.
	awk '/FAULT_INJECTION: forcing a failure|page allocation failure: order:/ { skip++ }
	!skip { print } /<\/TASK>/ && skip { skip-- }' /tmp/step.log >/tmp/step.rest
	if grep -qE 'WARNING:|BUG:|Oops|general protection|Call Trace:|kernel BUG|UBSAN|KASAN|possible recursive locking|circular locking|hung_task' /tmp/step.rest; then
		cat /tmp/step.log
		fail "$drv $op #$n: the kernel log has a report besides the injected failure (above)"
	fi
	awk -v m="[$drv]" '
	# The last two names of a Rust (v0) mangled symbol: <length><name> each,
	# base-62 numbers ending in "_" skipped.
	function rust(s,   i, j, n, len, id) {
		n = 0
		for (i = 1; i <= length(s); ) {
			if (substr(s, i, 1) !~ /[0-9]/) { i++; continue }
			for (j = i; substr(s, j, 1) ~ /[0-9]/; j++) ;
			if (substr(s, j, 1) == "_") { i = j + 1; continue }
			len = substr(s, i, j - i) + 0
			id[++n] = substr(s, j, len)
			i = j + len
		}
		return n > 1 ? id[n - 1] "::" id[n] : id[n]
	}
	/FAULT_INJECTION: forcing a failure/ { on = 1 }
	# Not the "? " lines: stale addresses the stack scan found, not callers.
	on && $NF == m && $(NF - 2) != "?" {
		f = $(NF - 1); off = f; sub(/\+.*/, "", f); sub(/^[^+]*/, "", off); sub(/\/.*/, "", off)
		print $(NF - 1), (f ~ /^_R/ ? rust(f) : f) off
		found = 1
		exit
	}
	END { if (!found) print "? ?" }' /tmp/step.log >/tmp/site
}

