# SPDX-License-Identifier: GPL-2.0
# The demo of 'make run': a software OPA fabric (opasim: two HFIs on a
# switch), the Rust VNIC driver's VEMA agents on it, and the Ethernet
# Manager (vnic-em) configuring the sample fabric over VEMA MADs.
. /opa/guest-lib.sh

echo "== the fabric: opasim"
must modprobe opasim
must modprobe ib_umad
rdma link show
dmesg_new >/dev/null

echo "== modprobe opa_vnic_rs"
must modprobe opa_vnic_rs
dmesg_new | grep 'opa_vnic_rs:'

echo "== vnic-em apply /opa/fabric.toml (from LID 1)"
em() { /opa/vnic-em -d /dev/infiniband/umad0 "$@"; }
must em apply /opa/fabric.toml
echo "== vnic-em show"
must em show -c /opa/fabric.toml --no-counters

echo "== rmmod"
must rmmod opa_vnic_rs
dmesg_new | grep 'opa_vnic_rs:'
must rmmod ib_umad
must rmmod opasim
check_dmesg_clean
echo "== demo done"
