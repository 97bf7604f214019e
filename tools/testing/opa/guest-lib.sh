# SPDX-License-Identifier: GPL-2.0
# Helpers of the guest scenarios; sourced.

export PATH=/usr/bin:/bin:/sbin

# busybox's shell runs its own applet for a bare "ip", whatever PATH says:
# use iproute2's (veth peers, netns, rdma-aware output).
ip() { /usr/bin/ip "$@"; }

fail() {
	# On stderr: a caller's redirection of a command's output
	# ("must q ... >/tmp/q.out") must not hide why the scenario ended.
	echo "FAIL: $*" >&2
	exit 1
}

# expect WHAT GOT WANT: fails the scenario unless GOT is WANT, and says so either way.
expect() {
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
	echo "ok: $1: $3"
}

# wait_line FILE PATTERN SECS: until FILE has a line matching PATTERN.
# A log that a background job writes (`cmd >LOG 2>&1 &`) is emptied before
# the job starts (`: >LOG`): the job opens it only once it runs, and a
# wait here (or any grep of it) may come first and read an earlier run's
# lines, such as the previous driver's "ready" (seen with two guests side
# by side: the SA's port was read before the second SA had started).
wait_line() {
	local n=0
	until grep -q "$2" "$1"; do
		[ $n -ge $(($3 * 5)) ] && return 1
		sleep 0.2
		n=$((n + 1))
	done
}

# Run a command, failing the scenario (with its output) when it fails.
must() {
	"$@" || fail "'$*' exited $?"
}

# into_netns DEV NS ADDR: DEV moved into the network namespace NS, with the
# address ADDR/24, up; fails (returns non-zero) at the first step that does.
into_netns() {
	ip link set "$1" netns "$2" && ip -n "$2" addr add "$3/24" dev "$1" &&
		ip -n "$2" link set "$1" up
}

# Fail when the kernel log has a warning, a BUG or an oops since boot, or
# (on a kernel with kmemleak) when a scan finds leaked memory.
check_dmesg_clean() {
	if [ -w /sys/kernel/debug/kmemleak ]; then
		echo scan >/sys/kernel/debug/kmemleak
		if [ -s /sys/kernel/debug/kmemleak ]; then
			cat /sys/kernel/debug/kmemleak
			fail "kmemleak reports leaked memory (above)"
		fi
	fi
	! dmesg_report || fail "the kernel log has a warning or a crash (above)"
}

# dmesg_report: whether the kernel log has a warning, a BUG or an oops
# since boot (or since the guest's init emptied it between scenarios);
# prints the first report whole, with the lines that lead to it (a
# workqueue or lockdep report says what it is about before its WARNING
# line).
dmesg_report() {
	local bad='WARNING:|BUG:|Oops|general protection|Call Trace:|kernel BUG|UBSAN|KASAN|suspected memory leak|possible recursive locking|circular locking'
	dmesg | grep -qE "$bad" || return 1
	dmesg | grep -E -B4 -A40 "$bad" | head -80
}

# debug_kernel: whether this is the debug kernel (KASAN, lockdep, kmemleak:
# OPA_FLAVOR=debug), whose kmemleak file says so. It does the same work many
# times slower: creating a netdev, under RTNL, some 15 times.
debug_kernel() { [ -e /sys/kernel/debug/kmemleak ]; }

# wait_limit PID SECS WHAT: waits at most SECS seconds for the background job
# PID (WHAT names it); fails when it is still running then, saying where it
# is blocked (its wait channel, and its kernel stack where the kernel shows
# it). Returns the job's exit status.
wait_limit() {
	local t0 rc
	t0=$(date +%s)
	while kill -0 "$1" 2>/dev/null; do
		if [ $(($(date +%s) - t0)) -ge "$2" ]; then
			echo "$3 (pid $1): state $(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)," \
				"waiting in $(cat "/proc/$1/wchan" 2>/dev/null)"
			cat "/proc/$1/stack" 2>/dev/null
			dmesg_new
			fail "$3 still running after $2 s"
		fi
		sleep 1
	done
	wait "$1"
	rc=$?
	echo "$3: done in $(($(date +%s) - t0)) s, exit $rc"
	return $rc
}

# Print the kernel log lines added since the last call of this function.
dmesg_new() {
	local n
	n=$(dmesg | wc -l)
	dmesg | tail -n +"$((${_dmesg_seen:-0} + 1))"
	_dmesg_seen=$n
}

# The name of the netdev whose MAC is $1.
# two_hosts A B: the netdevs A and B in network namespaces host1 and host2,
# as 192.168.77.1/24 and 192.168.77.2/24, up (make run's demo, make shell).
two_hosts() {
	must ip netns add host1
	must ip netns add host2
	must ip link set "$1" netns host1
	must ip link set "$2" netns host2
	must ip -n host1 addr add 192.168.77.1/24 dev "$1"
	must ip -n host2 addr add 192.168.77.2/24 dev "$2"
	must ip -n host1 link set "$1" up
	must ip -n host2 link set "$2" up
}

netdev_by_mac() {
	ip -o link | grep -i "link/ether $1" | awk -F': ' '{print $2}' | cut -d@ -f1
}

# Writes /tmp/fabric.toml: vesw 1 (P_Key 0x8001, multicast DLID 0xf00001,
# MTU 1500) with one vport on each opasim port, LID 1 (MAC
# 02:00:00:00:01:00) and LID 2 (MAC 02:00:00:00:02:00).
two_vport_fabric() {
	cat >/tmp/fabric.toml <<'TOML'
[em]
fabric_id = 1

[[vesw]]
id = 1
name = "test"
pkey = 0x8001
eth_mtu = 1500
unknown_mcast_dlid = 0xf00001

[[vport]]
lid = 1
vport = 0
vesw = 1
port_num = 1
mac = "02:00:00:00:01:00"

[[vport]]
lid = 2
vport = 0
vesw = 1
port_num = 2
mac = "02:00:00:00:02:00"
TOML
}

# netns_host NS DEV ADDR/LEN: a network namespace NS holding DEV, up, with
# the address, and its loopback up.
netns_host() {
	must ip netns add "$1"
	must ip link set "$2" netns "$1"
	must ip -n "$1" addr add "$3" dev "$2"
	must ip -n "$1" link set "$2" up
	must ip -n "$1" link set lo up
}

# quiet_netns NS...: network namespaces whose IPv6 sends nothing of its own
# accord (router solicitations and DAD off before any netdev arrives: they
# would put frames on the wire at random times).
quiet_netns() {
	local ns
	for ns in "$@"; do
		must ip netns add "$ns"
		must ip netns exec "$ns" sh -c 'for k in router_solicitations dad_transmits; do
			echo 0 >/proc/sys/net/ipv6/conf/default/$k; echo 0 >/proc/sys/net/ipv6/conf/all/$k; done'
	done
}

# vlan10 NS DEV ADDR/LEN: a VLAN device vl10 on DEV in NS (VLAN 10, priority
# 0 sent as PCP 5), with the address, up.
vlan10() {
	must ip -n "$1" link add link "$2" name vl10 type vlan id 10 egress-qos-map 0:5
	must ip -n "$1" addr add "$3" dev vl10
	must ip -n "$1" link set vl10 up
}

# permanent_neigh NS DEV MAC ADDR...: permanent neighbours ADDR... at MAC on
# DEV in NS. The stack's own ARP and neighbour discovery go out when its
# timers say (a delayed probe can land in any later step, more so on a slow
# kernel), which would make runs differ by timing alone.
permanent_neigh() {
	local ns=$1 dev=$2 mac=$3 addr
	shift 3
	for addr in "$@"; do
		must ip -n "$ns" neigh replace "$addr" lladdr "$mac" dev "$dev" nud permanent
	done
}

# vl_mapping_drops: the VNIC packets every opasim port dropped so far
# because the SC of their header is not on the VL they were sent on.
vl_mapping_drops() {
	cat /sys/kernel/debug/opasim/opasim*/port*/vnic_drops 2>/dev/null |
		awk '$1 == "bad_vl_mapping" { n += $2 } END { print n + 0 }'
}

# echo_once DRV NS PING_ARGS...: one ICMP echo from NS answered, the VNIC
# driver DRV sending. The C opa_vnic takes the SC from the stale bytes in
# front of the frame (opa_vnic_rs.rst, "Real peers"): when they look like a
# VLAN tag, the SC comes from a PCP row, the VL does not follow, and the HFI
# drops the request or the reply. An echo C lost that way, and only that
# way, is said and tried again (three tries); opa_vnic_rs gets one. busybox
# ping cannot time out on the test kernel (no POSIX timers): timeout ends it.
echo_once() {
	local drv=$1 ns=$2 try v0
	shift 2
	for try in 1 2 3; do
		v0=$(vl_mapping_drops)
		timeout 5 /usr/bin/ip netns exec "$ns" ping -c 1 "$@" >/dev/null && return 0
		[ "$drv" = opa_vnic ] && [ "$(vl_mapping_drops)" -gt "$v0" ] || return 1
		echo "$drv: the echo ($*) lost to the VL mapping check (SC from stale bytes, a known C bug); again"
	done
	return 1
}

# load_vnic_stack DRV [OPASIM_PARAM...]: opasim (with its parameters), umad
# and the VNIC driver DRV (opa_vnic or opa_vnic_rs), the stack the VNIC
# scenarios run each driver on; unload_vnic_stack DRV takes it down again.
load_vnic_stack() {
	local drv=$1
	shift
	must modprobe opasim "$@"
	must modprobe ib_umad
	must modprobe "$drv"
}
unload_vnic_stack() {
	must rmmod "$1"
	must rmmod ib_umad
	must rmmod opasim
}

# stream_start FROM TO ADDR: a TCP stream (iperf3) from namespace FROM to
# ADDR, a server in namespace TO, in the background, flowing by the time it
# returns (a module is then removed under it); stream_stop ends it. Both
# ends have time limits of their own: a stream whose device went away
# ends anyway.
stream_start() {
	ip netns exec "$2" timeout 60 iperf3 -s -1 >/dev/null 2>&1 &
	_stream_pids=$!
	sleep 1
	ip netns exec "$1" timeout 40 iperf3 -c "$3" -t 20 >/dev/null 2>&1 &
	_stream_pids="$_stream_pids $!"
	sleep 3
}
stream_stop() {
	kill $_stream_pids 2>/dev/null
	wait $_stream_pids 2>/dev/null
	_stream_pids=
}

# reload_under_traffic DRV TOML FROM TO ADDR: the VNIC driver DRV removed
# while a TCP stream runs from namespace FROM to ADDR in TO, loaded again,
# and the vports of TOML configured again (vnic-em); the netdevs of the
# two vports (MACs 02:00:00:00:01:00 and 02:00:00:00:02:00) are then
# in $vport_a and $vport_b.
reload_under_traffic() {
	stream_start "$3" "$4" "$5"
	must rmmod "$1"
	stream_stop
	must modprobe "$1"
	must /opa/vnic-em -d umad0 apply "$2" >/dev/null
	vport_a=$(netdev_by_mac 02:00:00:00:01:00)
	vport_b=$(netdev_by_mac 02:00:00:00:02:00)
	[ -n "$vport_a" ] && [ -n "$vport_b" ] || fail "$1: no netdevs after reloading"
}

# The 16B headers (hex, entropy masked: it follows the flow hash) and VLs of the
# IPv4 frames in opasim's capture, each once.
capture_ipv4_headers() {
	awk '$2 == "vnic" && substr($17, 65, 4) == "0800" {
		h = substr($17, 1, 40); print substr(h, 1, 24) "xxxx" substr(h, 29) " vl " $16
	}' /sys/kernel/debug/opasim/capture | sort -u
}
