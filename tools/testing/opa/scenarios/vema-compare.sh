# SPDX-License-Identifier: GPL-2.0
# The C opa_vnic is the oracle: the same VEMA requests, sent by vnic-em from
# opasim0 (LID 1) to the agent on opasim1 (LID 2), must get byte-identical
# answers (MAD status and data) from opa_vnic and from opa_vnic_rs, except
# for the requests listed in ALLOWED, each with its reason.
. /opa/guest-lib.sh

# None so far. (Requests that create a vport are left out until opasim
# allocates VNIC netdevs: the C driver calls alloc_rdma_netdev without
# checking that the device has it.)
ALLOWED=" "

em() { /opa/vnic-em -d /dev/infiniband/umad0 raw -l 2 "$@"; }

# The class port info the EM sets: trap LID 1 (offset 60), trap P_Key 0xffff.
cpi=$(printf '%0120d' 0)00000001$(printf '%016d' 0)ffff$(printf '%012d' 0)

requests() {
	em --attr 0x0001                           # 1 Get ClassPortInfo
	em --attr 0x0001 --set --data "$cpi"       # 2 Set ClassPortInfo
	em --attr 0x0001                           # 3 Get ClassPortInfo
	em --attr 0x0011 --mod 0                   # 4 Get VESW port info, no vport
	em --attr 0x0012 --mod 0 --data 0000000a   # 5 Get MAC entries, no vport
	em --attr 0x0013 --mod 0                   # 6 Get unicast MACs, no vport
	em --attr 0x0014 --mod 1                   # 7 Get multicast MACs, no vport
	em --attr 0x0020 --mod 3                   # 8 Get summary counters, no vport
	em --attr 0x0022 --mod 3                   # 9 Get error counters, no vport
	em --attr 0x0099                           # 10 Get of an unknown attribute
	em --attr 0x0020 --set                     # 11 Set of a Get-only attribute
	em --attr 0x0015 --mod 5 --set             # 12 Delete vesw, no vport
}

run_with() {
	must modprobe opasim
	must modprobe ib_umad
	must modprobe "$1"
	requests >"/tmp/$1.out" 2>&1 || fail "$1: a request failed"
	must rmmod "$1"
	must rmmod ib_umad
	must rmmod opasim
}

run_with opa_vnic
run_with opa_vnic_rs

echo "== C opa_vnic"; cat /tmp/opa_vnic.out
echo "== opa_vnic_rs"; cat /tmp/opa_vnic_rs.out
n=$(grep -c '^status' /tmp/opa_vnic.out)
[ "$n" = 12 ] || fail "the C driver answered $n of 12 requests"
bad=0
i=0
paste -d'|' /tmp/opa_vnic.out /tmp/opa_vnic_rs.out | while IFS='|' read -r c r; do
	case "$c" in status*) i=$((i + 1)) ;; esac
	[ "$c" = "$r" ] && continue
	case "$ALLOWED" in
	*" $i "*) echo "request $i differs (allowed): C '$c', Rust '$r'" ;;
	*) echo "request $i differs: C '$c', Rust '$r'"; echo x >>/tmp/bad ;;
	esac
done
[ -e /tmp/bad ] && fail "opa_vnic_rs answers differently from the C opa_vnic (above)"
grep -c '^status' /tmp/opa_vnic_rs.out

# Both drivers at once: the second cannot register the agent, says so, and
# nothing breaks.
must modprobe opasim
must modprobe opa_vnic
dmesg_new >/dev/null
must modprobe opa_vnic_rs
log=$(dmesg_new)
echo "$log" | grep opa_vnic_rs
echo "$log" | grep -q 'opa_vnic_rs: opasim1: port 1: cannot register the VEMA agent' ||
	fail "no clear message about the port the C driver owns"
must rmmod opa_vnic_rs
must rmmod opa_vnic
must rmmod opasim
check_dmesg_clean
echo "vema-compare: ok"
