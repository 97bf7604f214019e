# SPDX-License-Identifier: GPL-2.0
# The P_Key rule on receive, with P_Key tables set at run time: limited to limited is
# dropped and counted in the receiver's bad P_Key counter, full to limited is delivered
# (and the answer, limited to full, too). Needs /opa/opasim-umad.
. /opa/guest-lib.sh

umad=/opa/opasim-umad
[ -x $umad ] || fail "$umad is missing"
must modprobe opasim
must modprobe ib_umad
ctl=/sys/kernel/debug/opasim
counter() { cat /sys/class/infiniband/$1/ports/1/hw_counters/$2; }
setkeys() { echo "$2" >$ctl/$1/port1/pkeys || fail "cannot set the P_Keys of $1 to '$2'"; }

echo "== both ports limited members of partition 1 (index 1)"
setkeys opasim0 "0xffff 0x0001"
setkeys opasim1 "0xffff 0x0001"
cat $ctl/opasim0/port1/pkeys
[ "$(cat $ctl/opasim1/port1/pkeys)" = "0xffff 0x0001" ] || fail "opasim1 P_Keys read back wrong"
bad=$(counter opasim1 rcv_bad_pkey)
must $umad ping umad0 umad1 2 --pkey-index 1 --expect-timeout
got=$(counter opasim1 rcv_bad_pkey)
echo "opasim1 rcv_bad_pkey: $bad -> $got"
[ "$got" = $((bad + 1)) ] || fail "limited to limited was not counted as a bad P_Key"

echo "== opasim0 full member (0x8001), opasim1 limited (0x0001)"
setkeys opasim0 "0xffff 0x8001"
bad0=$(counter opasim0 rcv_bad_pkey)
bad1=$(counter opasim1 rcv_bad_pkey)
out=$(must $umad ping umad0 umad1 2 --pkey-index 1) || fail "full to limited: $out"
echo "$out"
echo "$out" | grep -q 'umad1: got method 0x01 .* P_Key index 1 ' || fail "the limited port did not receive on its index 1"
[ "$(counter opasim0 rcv_bad_pkey)" = "$bad0" ] || fail "opasim0 counted a bad P_Key"
[ "$(counter opasim1 rcv_bad_pkey)" = "$bad1" ] || fail "opasim1 counted a bad P_Key"

echo "== the default partition still works"
must $umad ping umad1 umad0 1
rdma statistic show link opasim1/1
check_dmesg_clean
echo "opasim-pkey: ok"
