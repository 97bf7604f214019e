# SPDX-License-Identifier: GPL-2.0
# The C opa_vnic is the oracle: the same VEMA requests, sent by vnic-em from
# opasim0 (LID 1) to the agent on opasim1 (LID 2), must get byte-identical
# answers (MAD status and data) from opa_vnic and from opa_vnic_rs, except
# for the requests listed in ALLOWED, each with its reason.
. /opa/guest-lib.sh

# None so far.
ALLOWED=" "

em() { /opa/vnic-em -d /dev/infiniband/umad0 raw -l 2 "$@"; }

# The class port info the EM sets: trap LID 1 (offset 60), trap P_Key 0xffff.
# A VESW port info: vesw 1 (fabric 1), P_Key 0x8001, multicast DLID
# 0xf00001, MTU 1500; vesw port 2, MAC 02:00:00:00:02:00, forwarding,
# encap SLID 2.
vpi=0001000100000000000000000000800100000000
vpi=${vpi}00f00001$(printf '%0248d' 0)05dc0000
vpi=${vpi}0000000200000000020000000200030000000000000000000000000000000002
vpi=${vpi}$(printf '%0192d' 0)
# One MAC entry at index 0 (02:00:00:00:01:00 -> LID 1), digest 0x1234.
mac=000000010000123402000000010000000000000000000100
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
	em --attr 0x0011 --mod 0 --set --data "$vpi" # 13 Set VESW port info: creates vport 0
	em --attr 0x0011 --mod 0                   # 14 Get VESW port info
	em --attr 0x0012 --mod 0 --set --data "$mac" # 15 Set MAC entries
	em --attr 0x0012 --mod 0 --data 00000002   # 16 Get MAC entries 0-1
	em --attr 0x0013 --mod 0                   # 17 Get unicast MACs
	em --attr 0x0020 --mod 0                   # 18 Get summary counters
	em --attr 0x0022 --mod 0                   # 19 Get error counters
	em --attr 0x0015 --mod 0 --set             # 20 Delete vesw
	em --attr 0x0011 --mod 0                   # 21 Get VESW port info
	em --attr 0x0012 --mod 0 --data 00000002   # 22 Get MAC entries 0-1
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
[ "$n" = 22 ] || fail "the C driver answered $n of 22 requests"
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
