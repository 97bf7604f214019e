# SPDX-License-Identifier: GPL-2.0
# Benchmark (make bench, not make check): UDP packets per second through a
# VNIC on opasim, 64-byte and 1514-byte frames, for the C opa_vnic and for
# opa_vnic_rs in the same boot. Prints one line per run:
#   BENCH <driver> <frame bytes> <datagrams received> <seconds>
. /opa/guest-lib.sh

two_vport_fabric

SECS=${SECS:-4}

run_with() {
	drv=$1
	must modprobe opasim
	must modprobe ib_umad
	must modprobe "$drv"
	must /opa/vnic-em -d umad0 apply /tmp/fabric.toml >/dev/null
	a=$(netdev_by_mac 02:00:00:00:01:00)
	b=$(netdev_by_mac 02:00:00:00:02:00)
	netns_host na "$a" 10.11.0.1/24
	netns_host nb "$b" 10.11.0.2/24
	sleep 1
	must ip netns exec na ping -c 1 -W 2 10.11.0.2 >/dev/null
	# UDP payloads giving 64-byte frames (18 + 8 + 20 + 14, padded to 60,
	# plus the FCS the wire would add) and 1514-byte frames.
	for payload in 18 1472; do
		frame=$((payload + 42 < 60 ? 64 : payload + 42))
		ip netns exec nb iperf3 -s -1 -D >/dev/null
		sleep 1
		ip netns exec na iperf3 -u -b 0 -l "$payload" -t "$SECS" -c 10.11.0.2 >/tmp/iperf.out 2>&1 ||
			{ cat /tmp/iperf.out; fail "$drv: iperf3"; }
		# The receiver's line: "... lost/total (..%)  receiver".
		line=$(grep receiver /tmp/iperf.out)
		got=$(echo "$line" | sed -n 's|.* \([0-9]*\)/\([0-9]*\) .*|\1 \2|p')
		lost=${got% *}
		total=${got#* }
		secs=$(echo "$line" | sed -n 's|.*-\([0-9.]*\) *sec.*|\1|p')
		echo "BENCH $drv $frame $((total - lost)) $secs"
	done
	must rmmod opasim
	must rmmod "$drv"
	must rmmod ib_umad
	ip netns del na
	ip netns del nb
}

run_with opa_vnic
run_with opa_vnic_rs
echo "bench-vnic: done"
