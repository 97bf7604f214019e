# SPDX-License-Identifier: GPL-2.0
# opa_vnic_rs loads, sees the RDMA devices, unloads, and the kernel log has
# no warning or crash. The device is a soft-RoCE (rxe) port over a veth: an
# RDMA device that is not OPA, which the driver must see and decline.
. /opa/guest-lib.sh

must ip link add v0 type veth peer name v1
must ip link set v0 up
must ip link set v1 up
must modprobe rdma_rxe
must rdma link add rxe0 type rxe netdev v0
dmesg_new >/dev/null

must modprobe opa_vnic_rs
grep -q '^opa_vnic_rs ' /proc/modules || fail "opa_vnic_rs is not in /proc/modules"
log=$(dmesg_new)
echo "$log"
echo "$log" | grep -q 'opa_vnic_rs: rxe0: ports 1-1, OPA VNIC capable: no' ||
	fail "the driver did not report rxe0 as a non-VNIC device"

# A device that appears while the driver is loaded is seen too.
must rdma link add rxe1 type rxe netdev v1
log=$(dmesg_new)
echo "$log"
echo "$log" | grep -q 'opa_vnic_rs: rxe1: ports 1-1, OPA VNIC capable: no' ||
	fail "the driver did not see rxe1, added after it loaded"

must rmmod opa_vnic_rs
grep -q '^opa_vnic_rs ' /proc/modules && fail "opa_vnic_rs is still loaded"
# Loading again works (the client's registration was released).
must modprobe opa_vnic_rs
must rmmod opa_vnic_rs
must rdma link delete rxe1
must rdma link delete rxe0
must rmmod rdma_rxe
check_dmesg_clean
echo "load-unload: ok"
