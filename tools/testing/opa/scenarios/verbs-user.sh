# SPDX-License-Identifier: GPL-2.0
# User verbs on opasim: rdma-core's libibverbs with opasim's provider lists and opens the
# devices (ib_uverbs), ibv_query_port (ibv_devinfo -v) shows the port state, LID and SM LID
# that opasim's debugfs knobs set, and the port events those knobs raise (port down and
# up, LID, P_Key and SM changes) reach ibv_get_async_event (ibv_asyncwatch). Needs the
# initramfs built with OPA_VERBS_ROOT (scripts/opa/rdma-core).
. /opa/guest-lib.sh

for t in ibv_devices ibv_devinfo ibv_asyncwatch stdbuf; do
	[ -x /usr/bin/$t ] || fail "/usr/bin/$t is missing (initramfs built without OPA_VERBS_ROOT?)"
done
must modprobe opasim
must modprobe ib_uverbs
ctl=/sys/kernel/debug/opasim
cat $ctl/devices
ls -l /dev/infiniband
for d in /sys/class/infiniband_verbs/uverbs*; do
	echo "$(basename $d): ibdev $(cat $d/ibdev) abi_version $(cat $d/abi_version)"
done

echo "== ibv_devices"
ibv_devices >/tmp/devices 2>&1
cat /tmp/devices
for d in 0 1; do
	guid=$(tr -d : </sys/class/infiniband/opasim$d/node_guid)
	grep -Eq "^[[:space:]]+opasim$d[[:space:]]+$guid\$" /tmp/devices || fail "ibv_devices does not list opasim$d with GUID $guid"
done
grep -qi warning /tmp/devices && fail "libibverbs warned (above)"

# field FILE NAME: the value of ibv_devinfo's "NAME:" line in FILE.
field() {
	sed -n "s/^[[:space:]]*$2:[[:space:]]*//p" "$1" | head -n 1
}
# devinfo DEV STATE LID SMLID: ibv_devinfo -v of DEV's port 1 shows them, as sysfs does.
devinfo() {
	ibv_devinfo -v -d "$1" >/tmp/devinfo 2>&1 || { cat /tmp/devinfo; fail "ibv_devinfo -d $1 exited $?"; }
	s=$(field /tmp/devinfo state) l=$(field /tmp/devinfo port_lid) sm=$(field /tmp/devinfo sm_lid)
	echo "$1 port 1: state '$s' port_lid $l sm_lid $sm"
	[ "$s" = "$2" ] || fail "$1: ibv_devinfo state '$s', expected '$2'"
	[ "$l" = "$3" ] || fail "$1: ibv_devinfo port_lid $l, expected $3"
	[ "$sm" = "$4" ] || fail "$1: ibv_devinfo sm_lid $sm, expected $4"
	[ "$(($(cat /sys/class/infiniband/$1/ports/1/lid)))" = "$3" ] || fail "$1: sysfs LID differs"
	[ "$(($(cat /sys/class/infiniband/$1/ports/1/sm_lid)))" = "$4" ] || fail "$1: sysfs SM LID differs"
}

echo "== ibv_devinfo -v"
must sh -c "echo 'opasim1 1' >$ctl/sm"
cat $ctl/sm
ibv_devinfo -v -d opasim0
devinfo opasim0 "PORT_ACTIVE (4)" 1 2
devinfo opasim1 "PORT_ACTIVE (4)" 2 2
[ "$(field /tmp/devinfo link_layer)" = InfiniBand ] || fail "link_layer is not InfiniBand"

echo "== async events"
stdbuf -oL ibv_asyncwatch -d opasim0 >/tmp/aw0 2>&1 &
aw0=$!
stdbuf -oL ibv_asyncwatch -d opasim1 >/tmp/aw1 2>&1 &
aw1=$!
sleep 1
grep -q '^opasim0: async event FD' /tmp/aw0 || { cat /tmp/aw0; fail "ibv_asyncwatch did not open opasim0"; }
must sh -c "echo down >$ctl/opasim0/port1/state"
sleep 1
devinfo opasim0 "PORT_DOWN (1)" 1 2
must sh -c "echo active >$ctl/opasim0/port1/state"
# A write that changes nothing raises no event (hfi1 raises them on a link change).
must sh -c "echo active >$ctl/opasim0/port1/state"
must sh -c "echo 9 >$ctl/opasim0/port1/lid"
must sh -c "echo '0xffff 0x8001 0x8002' >$ctl/opasim0/port1/pkeys"
# The SM moves to opasim0's port: the SM LID every port sees goes from 2 to 9.
must sh -c "echo 'opasim0 1' >$ctl/sm"
sleep 1
devinfo opasim0 "PORT_ACTIVE (4)" 9 9
devinfo opasim1 "PORT_ACTIVE (4)" 2 9
# The SM's port goes down: no SM LID any more (0), on every port.
must sh -c "echo down >$ctl/opasim0/port1/state"
sleep 1
devinfo opasim1 "PORT_ACTIVE (4)" 2 0
kill $aw0 $aw1
wait
echo "-- opasim0:"
cat /tmp/aw0
echo "-- opasim1:"
cat /tmp/aw1
events() {
	sed -n 's/^  event_type \([A-Z_]*\) ([0-9]*), port \([0-9]*\)$/\1 \2/p' "$1" | tr '\n' ' '
}
want0="IBV_EVENT_PORT_ERR 1 IBV_EVENT_PORT_ACTIVE 1 IBV_EVENT_LID_CHANGE 1 IBV_EVENT_PKEY_CHANGE 1 IBV_EVENT_SM_CHANGE 1 IBV_EVENT_PORT_ERR 1 IBV_EVENT_SM_CHANGE 1 "
want1="IBV_EVENT_SM_CHANGE 1 IBV_EVENT_SM_CHANGE 1 "
[ "$(events /tmp/aw0)" = "$want0" ] || fail "opasim0's events: '$(events /tmp/aw0)', expected '$want0'"
[ "$(events /tmp/aw1)" = "$want1" ] || fail "opasim1's events: '$(events /tmp/aw1)', expected '$want1'"

echo "== removing a device in use does not wait for its users"
must sh -c "echo active >$ctl/opasim0/port1/state"
must sh -c "echo none >$ctl/sm"
stdbuf -oL ibv_asyncwatch -d opasim1 >/tmp/aw1 2>&1 &
aw1=$!
sleep 1
must sh -c "echo 'del opasim1' >$ctl/devices"
sleep 1
cat /tmp/aw1
grep -q 'IBV_EVENT_DEVICE_FATAL' /tmp/aw1 || fail "ibv_asyncwatch did not see opasim1 go (DEVICE_FATAL)"
# The async fd stays readable for its owner (it blocks for more events): stop it.
kill $aw1
wait
[ -e /sys/class/infiniband/opasim1 ] && fail "opasim1 still exists"
ibv_devices
must rmmod ib_uverbs
must rmmod opasim
dmesg_new | grep -E 'opasim|uverbs'
check_dmesg_clean
echo "verbs-user: ok"
