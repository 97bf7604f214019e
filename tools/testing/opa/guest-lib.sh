# SPDX-License-Identifier: GPL-2.0
# Helpers of the guest scenarios; sourced.

export PATH=/usr/bin:/bin:/sbin

# busybox's shell runs its own applet for a bare "ip", whatever PATH says:
# use iproute2's (veth peers, netns, rdma-aware output).
ip() { /usr/bin/ip "$@"; }

fail() {
	echo "FAIL: $*"
	exit 1
}

# Run a command, failing the scenario (with its output) when it fails.
must() {
	"$@" || fail "'$*' exited $?"
}

# Fail when the kernel log has a warning, a BUG or an oops since boot.
check_dmesg_clean() {
	if dmesg | grep -E 'WARNING:|BUG:|Oops|general protection|Call Trace:|kernel BUG|UBSAN|KASAN|leak'; then
		fail "the kernel log has a warning or a crash (above)"
	fi
}

# Print the kernel log lines added since the last call of this function.
dmesg_new() {
	local n
	n=$(dmesg | wc -l)
	dmesg | tail -n +"$((${_dmesg_seen:-0} + 1))"
	_dmesg_seen=$n
}
