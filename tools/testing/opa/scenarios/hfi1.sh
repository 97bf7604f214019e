# SPDX-License-Identifier: GPL-2.0
# hfi1, the real OPA HFI driver, built in the same kernel as the Rust RDMA
# abstractions and both VNIC drivers, loads beside opasim and each VNIC
# driver: with no HFI on the bus it registers its PCI driver and stays
# idle. The VNICs on opasim still carry traffic, and everything unloads
# with a clean kernel log.
. /opa/guest-lib.sh

must modprobe hfi1
grep -q '^hfi1 ' /proc/modules || fail "hfi1 is not in /proc/modules"
[ -d /sys/bus/pci/drivers/hfi1 ] || fail "hfi1 registered no PCI driver"
echo "hfi1 loaded: PCI driver registered, $(ls /sys/bus/pci/drivers/hfi1 | grep -c ':') devices bound"
grep -E '^(hfi1|rdmavt|i2c_algo_bit) ' /proc/modules

two_vport_fabric
for drv in opa_vnic opa_vnic_rs; do
	echo "== $drv beside hfi1"
	load_vnic_stack "$drv"
	must /opa/vnic-em -d umad0 apply /tmp/fabric.toml
	a=$(netdev_by_mac 02:00:00:00:01:00)
	b=$(netdev_by_mac 02:00:00:00:02:00)
	[ -n "$a" ] && [ -n "$b" ] || fail "$drv: the VNIC netdevs are missing"
	netns_host h1 "$a" 192.168.78.1/24
	netns_host h2 "$b" 192.168.78.2/24
	ip netns exec h1 ping -c 1 -W 5 192.168.78.2 | grep 'bytes from' ||
		fail "$drv: no answer over the VNIC with hfi1 loaded"
	must ip netns del h1
	must ip netns del h2
	unload_vnic_stack "$drv"
	grep -q '^hfi1 ' /proc/modules || fail "hfi1 went away with $drv"
done

must rmmod hfi1
grep -q '^hfi1 ' /proc/modules && fail "hfi1 is still loaded"
[ -d /sys/bus/pci/drivers/hfi1 ] && fail "hfi1's PCI driver is still registered"
check_dmesg_clean
echo "hfi1: loaded and unloaded beside opasim, opa_vnic and opa_vnic_rs"
