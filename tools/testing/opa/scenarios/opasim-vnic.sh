# SPDX-License-Identifier: GPL-2.0
# The C opa_vnic on opasim: vnic-em configures one vport on each of the two ports (LIDs 1
# and 2) in vESW 1 (P_Key 0x8001) through VEMA Sets over umad; the two VNIC netdevs, each
# in its own network namespace, ping each other (ARP included: broadcasts go to a multicast
# DLID, which the switch floods); the capture holds correct 16B frames both ways. Needs
# /opa/vnic-em and /opa/opasim-capture.
. /opa/guest-lib.sh

for b in vnic-em opasim-capture; do [ -x /opa/$b ] || fail "/opa/$b is missing"; done
must modprobe opasim
must modprobe ib_umad
must modprobe opa_vnic
two_vport_fabric
must /opa/vnic-em validate /tmp/fabric.toml
must /opa/vnic-em -d umad0 apply /tmp/fabric.toml
dmesg_new | grep -i 'vnic\|opasim'
ip -o link

a=$(netdev_by_mac 02:00:00:00:01:00)
b=$(netdev_by_mac 02:00:00:00:02:00)
[ -n "$a" ] && [ -n "$b" ] || fail "the VNIC netdevs are missing"
echo "vport of LID 1: $a, vport of LID 2: $b"
netns_host na "$a" 10.11.0.1/24
netns_host nb "$b" 10.11.0.2/24
sleep 1
ip -n na link show "$a"
ip -n nb link show "$b"
echo clear >/sys/kernel/debug/opasim/capture

echo "== ping"
# One echo per ping: the test kernel has no POSIX timers, so busybox ping cannot pace a
# series (alarm() fails).
for i in 1 2 3; do
	ip netns exec na ping -c 1 -W 2 10.11.0.2 || fail "no ping from LID 1 to LID 2"
	ip netns exec nb ping -c 1 -W 2 10.11.0.1 || fail "no ping from LID 2 to LID 1"
done
ip -n na -s link show "$a"
ip -n nb neigh

echo "== the frames on the wire"
head -c 2000 /sys/kernel/debug/opasim/capture
must /opa/opasim-capture --slid 1 --dlid 2 --pkey 0x8001 --vesw 1 --ethertype 0x0800 --min 3
must /opa/opasim-capture --slid 2 --dlid 1 --pkey 0x8001 --vesw 1 --ethertype 0x0800 --min 3
rdma statistic show link opasim0/1

echo "== the netdev statistics (hfi1's: frames plus FCS)"
rx=$(ip netns exec na cat /sys/class/net/"$a"/statistics/rx_packets)
echo "$a received $rx frames"
[ "$rx" -ge 3 ] || fail "$a counted $rx received frames"

echo "== a P_Key the receiver does not have: dropped and counted"
echo 0xffff >/sys/kernel/debug/opasim/opasim1/port1/pkeys || fail "cannot set the P_Keys of opasim1"
bad=$(cat /sys/class/infiniband/opasim1/ports/1/hw_counters/rcv_bad_pkey)
# busybox ping cannot time out here (no POSIX timers): timeout kills it.
timeout 3 /usr/bin/ip netns exec na ping -c 1 10.11.0.2 && fail "a ping crossed partitions"
got=$(cat /sys/class/infiniband/opasim1/ports/1/hw_counters/rcv_bad_pkey)
echo "opasim1 rcv_bad_pkey: $bad -> $got"
[ "$got" -gt "$bad" ] || fail "the partition drop was not counted"
echo "0xffff 0x8001" >/sys/kernel/debug/opasim/opasim1/port1/pkeys || fail "cannot restore the P_Keys"
must ip netns exec na ping -c 1 -W 2 10.11.0.2

echo "== teardown with the netdevs up: one device removed at run time, then the module"
must sh -c "echo 'del opasim1' >/sys/kernel/debug/opasim/devices"
ip -n nb link show | grep -q "$b" && fail "$b survived the removal of its device"
ip -n na link show "$a" >/dev/null || fail "$a went with the other device"
must rmmod opasim
ip -n na link show | grep -q "$a" && fail "$a survived the removal of its device"
must rmmod opa_vnic
must rmmod ib_umad
dmesg_new | grep -i 'vnic\|opasim'
check_dmesg_clean
echo "opasim-vnic: ok"
