# SPDX-License-Identifier: GPL-2.0
# The demo of 'make run': an RDMA device, the driver loaded, what it saw.
. /opa/guest-lib.sh

echo "== an RDMA device: soft-RoCE (rdma_rxe) over a veth pair"
must ip link add v0 type veth peer name v1
must ip link set v0 up
must ip link set v1 up
must modprobe rdma_rxe
must rdma link add rxe0 type rxe netdev v0
rdma link show
dmesg_new >/dev/null

echo "== modprobe opa_vnic_rs"
must modprobe opa_vnic_rs
dmesg_new | grep -v 'KTAP\|^ *#\|^ *ok\|^ *1\.\.' | grep opa_vnic_rs
grep opa_vnic_rs /proc/modules

echo "== rmmod opa_vnic_rs"
must rmmod opa_vnic_rs
dmesg_new | grep opa_vnic_rs
check_dmesg_clean
echo "== demo done"
