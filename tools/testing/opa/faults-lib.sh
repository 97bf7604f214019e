# SPDX-License-Identifier: GPL-2.0
# Failslab and fail_page_alloc aimed at one module's text, for the faults
# scenario (scenarios/faults.sh, which sets drv, op, n and total, and sources
# this after guest-lib.sh): the Nth allocation from now made with the
# module's code on the stack fails (arm, disarm, resync), and the kernel log
# of a step is checked and its failure's site read (log_check).

# module_text MOD: sets text to "START END" of MOD's code: its first
# function, and two pages past its last (module text is page-aligned, with a
# guard page after). /proc/kallsyms lists every symbol of the kernel, and
# takes seconds to read under TCG: it is read once for each place MOD's
# .text is loaded at (a module loaded again after its unload most often lands
# where it was, and then has the same text there).
text= text_of=
module_text() {
	local at syms
	at=$(cat "/sys/module/$1/sections/.text") || fail "no .text section of $1 in /sys/module"
	[ "$text_of" = "$1 $at" ] && return
	syms=$(awk -v m="[$1]" '$4 == m && ($2 == "t" || $2 == "T") { print $1 }' /proc/kallsyms | sort)
	[ -n "$syms" ] || fail "no functions of $1 in /proc/kallsyms"
	set -- "$1" "$(echo "$syms" | sed -n 1p)" "$(echo "$syms" | sed -n '$p')"
	text="0x$2 0x$(printf '%x' $((0x${3%???} + 2)))000"
	text_of="$1 $at"
}

# The fault counter: failslab's `count` is never reset, and counts only
# filtered allocations while armed; the Nth one from now fails when the
# interval is the count so far plus N (see should_fail_ex()).
count=0

# arm_at INTERVAL: the fault armed to fire when failslab's count reaches
# INTERVAL, its probability left at 0 (100 sets it going).
arm_at() {
	echo 0 >$F/probability
	echo 1 >$F/times
	echo "$1" >$F/interval
	armed=$1
}

# arm N: fail the Nth allocation from now made with the driver on the stack.
arm() {
	arm_at $((count + $1))
	echo 100 >$F/probability
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

# resync: after an operation armed at interval I ran with none failed, the
# count is unknown. Most often the operation ran out of allocations: the
# count is below I, by less than the search's stride. But when two CPUs
# carried it past I (see search()), the operation went on counting: it is
# above I, by as many as the operation makes (a few hundred for an apply:
# the netdev's creation). A fault fires at the first multiple of its
# interval the count reaches, which is the interval itself only if the
# count was below it: armed where the count already is, it fires thousands
# later, or early at a small multiple and wrongly believed. So: armed at
# I + RESYNC_NEAR and made to fire by up to 3 applies (each makes a hundred
# and more), where twice that is beyond what the count can be; if it did
# not fire, the count was past it, and the fault is armed at I + RESYNC_FAR,
# beyond what any operation and those applies count, and made to fire. The
# count is then the interval that fired, exactly.
RESYNC_NEAR=64
RESYNC_FAR=4096
resync() {
	local base=$armed
	{ [ $base -gt $((RESYNC_FAR - 2 * RESYNC_NEAR)) ] && fire_at $((base + RESYNC_NEAR)) 3; } ||
		fire_at $((base + RESYNC_FAR)) 100 ||
		fail "$drv: the fault armed to resync the count never fired, at $((base + RESYNC_NEAR)) nor $((base + RESYNC_FAR))"
	counted
	log_check
	total=$((total + $(grep -c 'FAULT_INJECTION: forcing a failure' /tmp/step.log)))
}

# fire_at INTERVAL TRIES: the fault armed at INTERVAL, and an apply of the
# first vport alone on a freshly loaded driver until it fires, at most TRIES
# times; fails if it did not. One port's MADs, answered one at a time by
# its completion work, the netdev created there too: no second CPU in the
# driver's code to carry the count past the interval in turn (an apply of
# both ports did, once in a run).
fire_at() {
	local i=0
	arm_at "$1"
	while [ $i -lt "$2" ]; do
		i=$((i + 1))
		must modprobe "$drv"
		setup_failslab "$drv" >/dev/null
		echo 100 >$F/probability
		/opa/vnic-em -d umad0 apply /tmp/first.toml >/dev/null 2>&1
		echo 0 >$F/probability
		must rmmod "$drv"
		[ "$(cat $F/times)" = 0 ] && return 0
	done
	return 1
}

# check_resync: resync() itself, on a count carried far past the armed
# interval, as two CPUs can: an apply counted with the fault armed out of
# reach, then believed armed at its first allocation. After the resync a
# fault armed at the next allocation must fire (an apply's first): it would
# not, were the count believed below what it is.
check_resync() {
	arm_at 1000000000
	must modprobe "$drv"
	setup_failslab "$drv" >/dev/null
	echo 100 >$F/probability
	must /opa/vnic-em -d umad0 apply /tmp/first.toml >/dev/null
	echo 0 >$F/probability
	must rmmod "$drv"
	armed=$((count + 1))
	resync
	must modprobe "$drv"
	setup_failslab "$drv" >/dev/null
	arm 1
	/opa/vnic-em -d umad0 apply /tmp/first.toml >/dev/null 2>&1
	disarm || fail "$drv: after a resync from a count carried past, a fault armed at the next allocation did not fire"
	must rmmod "$drv"
	log_check
	total=$((total + $(grep -c 'FAULT_INJECTION: forcing a failure' /tmp/step.log)))
	echo "$drv: resync: a count carried past the armed interval, found again"
}

# setup_failslab MOD: failslab and fail_page_alloc aimed at MOD's text.
setup_failslab() {
	local d
	module_text "$1"
	for d in $F $P; do
		echo N >$d/ignore-gfp-wait
		echo 32 >$d/stacktrace-depth
		echo 0 >$d/space
		echo 2 >$d/verbose
		echo 0 >$d/task-filter
		set -- $text
		echo "$1" >$d/require-start
		echo "$2" >$d/require-end
	done
	# Pages of any order, highmem ones too (the slabs' own pages among them).
	echo N >$P/ignore-gfp-highmem
	echo 0 >$P/min-order
	echo "$text: $drv's text, the failslab and fail_page_alloc filter"
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

