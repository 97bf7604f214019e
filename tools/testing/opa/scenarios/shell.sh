# SPDX-License-Identifier: GPL-2.0
# make shell: the demo fabric up, then a root shell on the console for
# trying the driver by hand. opasim's two HFIs on a switch, opa_vnic_rs,
# the Ethernet Manager (vnic-em) applying the sample fabric, and the two
# VNICs of vesw 1 in network namespaces host1 (192.168.77.1) and host2
# (192.168.77.2). Leaving the shell (exit or Ctrl-D) powers the guest off.
. /opa/guest-lib.sh

must modprobe opasim
must modprobe ib_umad
must modprobe opa_vnic_rs
must /opa/vnic-em -d /dev/infiniband/umad0 apply /opa/fabric.toml >/dev/null
a=$(netdev_by_mac 02:00:00:00:01:00)
b=$(netdev_by_mac 02:00:00:00:02:00)
[ -n "$a" ] && [ -n "$b" ] || fail "the VNIC netdevs are missing"
two_hosts "$a" "$b"

# The tools by their names: busybox's shell would run its own "ip".
cat >/tmp/profile <<'PROFILE'
export PATH=/opa:/usr/bin:/bin:/sbin
export PS1='opa-guest# '
ip() { /usr/bin/ip "$@"; }
em() { /opa/vnic-em -d /dev/infiniband/umad0 "$@"; }
PROFILE
cat <<EOF2

  The demo fabric is up: opasim (2 HFIs, LIDs 1 and 2), opa_vnic_rs, and
  the sample fabric applied by the EM (/opa/fabric.toml).
  Try:
    ip -br link; ip -n host1 -br addr
    ip netns exec host1 ping -c 1 192.168.77.2
      (one packet a call: the test kernel has no interval timers, so
      ping would wait forever to send a second)
    ip netns exec host1 ethtool -S $a
    em show -c /opa/fabric.toml
    cat /sys/kernel/debug/opasim/opasim0/port1/vnic_drops
  Leave the shell (exit) to power the guest off.

EOF2
echo "OPA-SHELL-READY"
# A serial console has no size: the shell's line editor would take 80
# columns and wrap longer lines.
stty -F /dev/console cols 200 rows 50 2>/dev/null
# A session of its own with the console as its controlling terminal, so
# that Ctrl-C interrupts the command, not the guest.
ENV=/tmp/profile setsid cttyhack sh -i
echo "OPA-SHELL-DONE"
