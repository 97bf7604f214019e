# SPDX-License-Identifier: GPL-2.0
# 64 vports on one host: the EM creates vports 0-63 on LID 2 (two vesws,
# 32 each), each gets its netdev and reads back as configured; deleting a
# vesw resets its vport; the module unloads with all of them registered.
. /opa/guest-lib.sh

must modprobe opasim
must modprobe ib_umad
must modprobe opa_vnic_rs
em() { /opa/vnic-em -d umad0 "$@"; }
n=0
while [ $n -lt 64 ]; do
	vesw=$((n % 2 + 1))
	mac=$(printf '02:00:00:02:%02x:%02x' $vesw $n)
	em set -l 2 --vport $n --vesw $vesw --pkey 0x800$vesw --mac "$mac" --enable >/dev/null ||
		fail "vport $n not created"
	n=$((n + 1))
done
count=$(ip -o link | grep -c 'link/ether 02:00:00:02:')
echo "$count VNIC netdevs"
[ "$count" = 64 ] || fail "$count netdevs for 64 vports"
em show -l 2 --vport 63 --json --no-counters >/tmp/v63.json || fail "show vport 63"
grep -q '"mac": "02:00:00:02:02:3f"' /tmp/v63.json || fail "vport 63 has another MAC"
grep -q '"config_state": "forwarding"' /tmp/v63.json || fail "vport 63 is not forwarding"
em set -l 2 --vport 17 --delete >/dev/null || fail "delete vesw of vport 17"
em show -l 2 --vport 17 --json --no-counters | grep -q '"config_state": "drop-all"' ||
	fail "vport 17 not reset by the delete"
must rmmod opa_vnic_rs
[ "$(ip -o link | grep -c 'link/ether 02:00:00:02:')" = 0 ] || fail "netdevs left after rmmod"
must rmmod ib_umad
must rmmod opasim
check_dmesg_clean
echo "vnic-scale: ok"
