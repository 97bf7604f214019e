# SPDX-License-Identifier: GPL-2.0
# The run-time interface of opasim (/sys/kernel/debug/opasim): add and remove devices, change
# LIDs, P_Keys and port states; bad values are refused and change nothing. Needs
# /opa/opasim-umad.
. /opa/guest-lib.sh

umad=/opa/opasim-umad
[ -x $umad ] || fail "$umad is missing"
must modprobe opasim
must modprobe ib_umad
ctl=/sys/kernel/debug/opasim
cat $ctl/devices
# refuse FILE VALUE: writing VALUE to FILE fails and FILE keeps its content.
refuse() {
	[ -f "$1" ] || fail "no $1"
	before=$(cat "$1")
	if sh -c "echo '$2' >'$1'" 2>/dev/null; then fail "'$2' > $1 was accepted"; fi
	[ "$(cat "$1")" = "$before" ] || fail "'$2' > $1 changed it to '$(cat "$1")'"
	echo "refused: '$2' > ${1#$ctl/}"
}

echo "== bad values"
refuse $ctl/opasim0/port1/lid 0
refuse $ctl/opasim0/port1/lid 0xc000
refuse $ctl/opasim0/port1/lid 2
refuse $ctl/opasim0/port1/lid abc
refuse $ctl/opasim0/port1/pkeys "0x8000"
refuse $ctl/opasim0/port1/pkeys "0x10000"
refuse $ctl/opasim0/port1/pkeys ""
refuse $ctl/opasim0/port1/pkeys "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17"
refuse $ctl/opasim0/port1/state sleeping
refuse $ctl/devices "add 0"
refuse $ctl/devices "add 9"
refuse $ctl/devices "add 1 2"
refuse $ctl/devices "del opasim9"
refuse $ctl/devices "frobnicate"
dmesg_new | grep opasim

echo "== change a LID"
must sh -c "echo 7 >$ctl/opasim1/port1/lid"
sleep 1
[ "$(cat /sys/class/infiniband/opasim1/ports/1/lid)" = 0x7 ] || fail "sysfs does not show LID 7"
must $umad ping umad0 umad1 7
must $umad ping umad0 umad1 2 --expect-timeout

echo "== a port down neither sends nor receives"
must sh -c "echo down >$ctl/opasim1/port1/state"
sleep 1
cat /sys/class/infiniband/opasim1/ports/1/state
grep -q DOWN /sys/class/infiniband/opasim1/ports/1/state || fail "opasim1 port 1 is not DOWN"
must $umad ping umad0 umad1 7 --expect-timeout
must sh -c "echo active >$ctl/opasim1/port1/state"
sleep 1
grep -q ACTIVE /sys/class/infiniband/opasim1/ports/1/state || fail "opasim1 port 1 is not ACTIVE again"
must $umad ping umad0 umad1 7

echo "== add a device of 2 ports, LIDs 20 and 21"
must sh -c "echo 'add 2 20 21' >$ctl/devices"
cat $ctl/devices
grep -q '^opasim2 index 2 lids 20 21$' $ctl/devices || fail "opasim2 is not listed"
rdma link show | grep opasim2
rdma link show | grep -q 'opasim2/2 .*lid 21 .*state ACTIVE' || fail "opasim2/2 is not ACTIVE with LID 21"
n=$(ls /sys/class/infiniband_mad | grep -c '^umad')
[ "$n" = 4 ] || fail "expected 4 umad ports, got $n"
u=$(for d in /sys/class/infiniband_mad/umad*; do
	[ "$(cat $d/ibdev) $(cat $d/port)" = "opasim2 2" ] && basename $d
done)
must $umad ping umad0 "$u" 21
must $umad ping "$u" umad0 1

echo "== add one with free LIDs, remove both"
must sh -c "echo add >$ctl/devices"
cat $ctl/devices
grep -q '^opasim3 index 3 lids 2$' $ctl/devices || fail "opasim3 did not get the free LID 2"
must sh -c "echo 'del opasim2' >$ctl/devices"
must sh -c "echo 'del opasim3' >$ctl/devices"
[ -e /sys/class/infiniband/opasim2 ] && fail "opasim2 still exists"
[ -e $ctl/opasim2 ] && fail "debugfs opasim2 still exists"
cat $ctl/devices
must $umad ping umad0 umad1 7

echo "== an open debugfs file holds the module"
exec 3<$ctl/capture
rmmod opasim 2>/dev/null && fail "opasim unloaded under an open file"
exec 3<&-
must rmmod ib_umad
must rmmod opasim
[ -e $ctl ] && fail "$ctl still exists"
dmesg_new | grep opasim
check_dmesg_clean
echo "opasim-config: ok"
