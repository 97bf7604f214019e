# SPDX-License-Identifier: GPL-2.0
# RMPP-active requests to the VEMA agent of opa_vnic_rs (the C opa_vnic,
# whose agent takes RMPP too, is left out: its rmmod hangs after them).
# VEMA has no multi-segment attribute, so the agent must not take part in
# RMPP: each segment is a plain MAD to it, answered with an inactive RMPP
# header or not at all. An agent registered with an RMPP version instead
# makes the MAD layer reassemble the request and answer the requester with
# RMPP ACKs, and a later rmmod of the driver waited for ever.
#
# mad-rmpp sends, from LID 1 to the agent of LID 2: a Get of VESW port info
# as one RMPP DATA segment (Active|First|Last); the same Get of 3000 data
# bytes, as two segments; then a plain Get, which must still be answered
# (status 0). rmmod opa_vnic_rs must then finish within 60 s.
. /opa/guest-lib.sh

rmpp=/opa/mad-rmpp
[ -x $rmpp ] || fail "$rmpp is missing"
RMMOD_LIMIT=60

load_vnic_stack opa_vnic_rs
dmesg_new >/dev/null
bad=

# rmpp_case CASE: sends it and says whether anything RMPP came back.
rmpp_case() {
	$rmpp -d umad0 --dlid 2 "$1" >"/tmp/rmpp-$1.out" 2>&1
	rc=$?
	cat "/tmp/rmpp-$1.out"
	case $rc in
	0) echo "PASS: $1: no RMPP ACK and no RMPP-active answer" ;;
	1)
		echo "FAIL: $1: the agent's side took part in RMPP: $(grep 'result:' "/tmp/rmpp-$1.out")"
		bad="$bad $1" ;;
	*) fail "$1: mad-rmpp exited $rc" ;;
	esac
}

echo "== one RMPP DATA segment"
rmpp_case single
echo "== two RMPP DATA segments"
rmpp_case two-segments

echo "== a plain Get afterwards"
$rmpp -d umad0 --dlid 2 plain >/tmp/rmpp-plain.out 2>&1
rc=$?
cat /tmp/rmpp-plain.out
if [ $rc = 0 ] && grep -q 'got answer: method 0x81 status 0x0000 attr 0x0011' /tmp/rmpp-plain.out; then
	echo "PASS: plain Get answered with status 0"
else
	echo "FAIL: plain Get not answered with status 0 (mad-rmpp exited $rc)"
	bad="$bad plain"
fi
dmesg_new

echo "== rmmod opa_vnic_rs, at most ${RMMOD_LIMIT} s"
t0=$(date +%s)
rmmod opa_vnic_rs &
if ! wait_limit $! $RMMOD_LIMIT "rmmod opa_vnic_rs"; then
	fail "rmmod opa_vnic_rs failed"
fi
echo "PASS: rmmod opa_vnic_rs finished in $(($(date +%s) - t0)) s"
must rmmod ib_umad
must rmmod opasim
dmesg_new
[ -z "$bad" ] || fail "RMPP requests:$bad (above)"
check_dmesg_clean
echo "vema-rmpp: ok"
