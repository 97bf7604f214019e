# SPDX-License-Identifier: GPL-2.0
# GSI MADs through /dev/infiniband/umad* between opasim ports: port A (opasim0, LID 1) asks
# port B (opasim1, LID 2) and gets the answer, B asks A, A asks itself (its own LID); a MAD
# to an unknown LID is dropped by the switch, counted, and the request times out. Needs the
# opasim-umad program (tools/opa/opasim-tests) in /opa.
. /opa/guest-lib.sh

umad=/opa/opasim-umad
[ -x $umad ] || fail "$umad is missing"
must modprobe opasim
must modprobe ib_umad
[ "$(cat /sys/class/infiniband_mad/umad0/ibdev)" = opasim0 ] || fail "umad0 is not opasim0"
[ "$(cat /sys/class/infiniband_mad/umad1/ibdev)" = opasim1 ] || fail "umad1 is not opasim1"

# counter DEV NAME: a per-port counter of port 1.
counter() { cat /sys/class/infiniband/$1/ports/1/hw_counters/$2; }

echo "== A (LID 1) to B (LID 2)"
tx0=$(counter opasim0 xmit_packets)
rx1=$(counter opasim1 rcv_packets)
must $umad ping umad0 umad1 2
[ "$(counter opasim0 xmit_packets)" -ge $((tx0 + 1)) ] || fail "opasim0 xmit_packets did not count"
[ "$(counter opasim1 rcv_packets)" -ge $((rx1 + 1)) ] || fail "opasim1 rcv_packets did not count"

echo "== B (LID 2) to A (LID 1)"
must $umad ping umad1 umad0 1

echo "== A to its own LID"
must $umad ping umad0 umad0 1

echo "== A to the unknown LID 99: dropped and counted"
drop=$(counter opasim0 xmit_unknown_dlid)
must $umad ping umad0 umad1 99 --expect-timeout
got=$(counter opasim0 xmit_unknown_dlid)
echo "xmit_unknown_dlid: $drop -> $got"
[ "$got" = $((drop + 1)) ] || fail "the unknown-LID drop was not counted once"
ls /sys/class/infiniband/opasim0/ports/1/hw_counters/
rdma statistic show link opasim0/1

echo "== A with its link down: the write is taken, the send fails to leave, nothing comes back"
# As on hfi1, whose stopped send contexts complete the request with IB_WC_GENERAL_ERR: the
# post is not refused (a refusal would fail the write, and make ib_core's response agent log
# "ib_post_send_mad error" for an answer caught by a link going down).
P1=/sys/kernel/debug/opasim/opasim0/port1
tx0=$(counter opasim0 xmit_packets)
must sh -c "echo down >$P1/state"
must $umad ping umad0 umad1 2 --expect-send-error
must sh -c "echo active >$P1/state"
[ "$(counter opasim0 xmit_packets)" = "$tx0" ] || fail "a send counted on a port that is down"
must $umad ping umad0 umad1 2

echo "== rmmod opasim with a umad file open"
exec 3<>/dev/infiniband/umad0
must rmmod opasim
[ -e /sys/class/infiniband/opasim0 ] && fail "opasim0 still exists"
exec 3<&-
must rmmod ib_umad
dmesg_new | grep -i 'opasim\|umad'
check_dmesg_clean
echo "opasim-umad: ok"
