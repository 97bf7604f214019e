# SPDX-License-Identifier: GPL-2.0
# The demo of 'make run': a software OPA fabric (opasim: two HFIs on a
# switch), the Rust VNIC driver's VEMA agents on it, the Ethernet Manager
# (vnic-em) configuring the sample fabric over VEMA MADs, and two VNICs of
# the same virtual Ethernet switch pinging each other from two network
# namespaces.
. /opa/guest-lib.sh

echo "== the fabric: opasim"
must modprobe opasim
must modprobe ib_umad
rdma link show
dmesg_new >/dev/null

echo "== modprobe opa_vnic_rs"
must modprobe opa_vnic_rs
dmesg_new | grep 'opa_vnic_rs:'

echo "== vnic-em apply /opa/fabric.toml (the EM on LID 1)"
em() { /opa/vnic-em -d /dev/infiniband/umad0 "$@"; }
must em apply /opa/fabric.toml
dmesg_new | grep 'opa_vnic_rs:'
echo "== vnic-em show"
must em show -c /opa/fabric.toml --no-counters

echo "== the VNICs of vesw 1 (tenant-a) ping each other"
netdev() { ip -o link | grep -i "link/ether $1" | awk -F': ' '{print $2}' | cut -d@ -f1; }
a=$(netdev 02:00:00:00:01:00)
b=$(netdev 02:00:00:00:02:00)
[ -n "$a" ] && [ -n "$b" ] || fail "the VNIC netdevs are missing"
ip -br link
two_hosts "$a" "$b"
sleep 1
for i in 1 2 3; do
	ip netns exec host1 ping -c 1 -W 2 192.168.77.2 | grep 'bytes from' ||
		fail "no answer from host2"
done
ip -n host1 -s link show "$a"

echo "== rmmod"
must rmmod opasim
must rmmod opa_vnic_rs
dmesg_new | grep 'opa_vnic_rs:'
must rmmod ib_umad
check_dmesg_clean
echo "== demo done"
