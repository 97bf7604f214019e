# SPDX-License-Identifier: GPL-2.0
# The KUnit suites: the built-in ones ran at boot (the kernel crate's
# doctests); loading hfi1, opasim and opa_vnic_rs runs theirs. The host parses
# the KTAP output of the console.
. /opa/guest-lib.sh

must modprobe hfi1
must rmmod hfi1
must modprobe opasim
must modprobe opa_vnic_rs
must rmmod opa_vnic_rs
must rmmod opasim
echo "OPA-KUNIT-DONE"
check_dmesg_clean
