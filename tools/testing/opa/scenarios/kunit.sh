# SPDX-License-Identifier: GPL-2.0
# The KUnit suites: the built-in ones ran at boot (the kernel crate's
# doctests); loading opa_vnic_rs runs the driver's suites. The host parses
# the KTAP output of the console.
. /opa/guest-lib.sh

must modprobe opa_vnic_rs
must rmmod opa_vnic_rs
echo "OPA-KUNIT-DONE"
check_dmesg_clean
