# SPDX-License-Identifier: GPL-2.0
# The C opa_vnic is the oracle: the same VEMA requests, sent by vnic-em from
# opasim0 (LID 1) to the agent on opasim1 (LID 2), must get byte-identical
# answers (MAD status and data) from opa_vnic and from opa_vnic_rs, except
# for the requests listed in ALLOWED, each with its reason. The requests are
# sent twice: as whole 2048-byte MADs, and trimmed to their attribute as
# opa-fm sends them (the agent reads the rest as zeros); each size is
# compared with the same size of the other driver.
. /opa/guest-lib.sh

SIZES="full trimmed"
NREQ=24
# "SIZE:N" entries; none so far.
ALLOWED=" "

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

# req DESCRIPTION ARGS...: one request of size $size; prints one line,
# "N|DESCRIPTION|status 0xSSSS data HEX".
req() {
	local desc=$1 out
	shift
	n=$((n + 1))
	if out=$(/opa/vnic-em -d /dev/infiniband/umad0 --mad-size "$size" raw -l 2 "$@" 2>&1); then
		echo "$n|$desc|$(echo $out)"
	else
		echo "$n|$desc|vnic-em failed: $(echo $out)"
	fi
}

requests() {
	n=0
	req "Get ClassPortInfo" --attr 0x0001
	req "Set ClassPortInfo" --attr 0x0001 --set --data "$cpi"
	req "Get ClassPortInfo" --attr 0x0001
	req "Get VESW port info, no vport" --attr 0x0011 --mod 0
	req "Get MAC entries, no vport" --attr 0x0012 --mod 0 --data 0000000a
	req "Get unicast MACs, no vport" --attr 0x0013 --mod 0
	req "Get multicast MACs, no vport" --attr 0x0014 --mod 1
	req "Get summary counters, no vport" --attr 0x0020 --mod 3
	req "Get error counters, no vport" --attr 0x0022 --mod 3
	req "Get of an unknown attribute" --attr 0x0099
	req "Set of a Get-only attribute" --attr 0x0020 --set
	req "Delete vesw, no vport" --attr 0x0015 --mod 5 --set
	req "Set VESW port info: creates vport 0" --attr 0x0011 --mod 0 --set --data "$vpi"
	req "Get VESW port info" --attr 0x0011 --mod 0
	req "Set MAC entries" --attr 0x0012 --mod 0 --set --data "$mac"
	req "Get MAC entries 0-1" --attr 0x0012 --mod 0 --data 00000002
	req "Get unicast MACs" --attr 0x0013 --mod 0
	req "Get summary counters" --attr 0x0020 --mod 0
	req "Get error counters" --attr 0x0022 --mod 0
	req "Delete vesw" --attr 0x0015 --mod 0 --set
	req "Get VESW port info" --attr 0x0011 --mod 0
	req "Get MAC entries 0-1" --attr 0x0012 --mod 0 --data 00000002
	# Shorter than its attribute: the vesw half only. C reads the missing
	# per-port half as zeros and applies it.
	req "Set VESW port info cut to 192 bytes" --attr 0x0011 --mod 1 --set --data "$vpi" --len 192
	req "Get VESW port info of that vport" --attr 0x0011 --mod 1
}

# run_with DRIVER SIZE: the requests of that size to a freshly loaded
# driver, answers in /tmp/DRIVER-SIZE.out.
run_with() {
	size=$2
	must modprobe opasim
	must modprobe ib_umad
	must modprobe "$1"
	requests >"/tmp/$1-$size.out"
	must rmmod "$1"
	must rmmod ib_umad
	must rmmod opasim
	if grep '|vnic-em failed' "/tmp/$1-$size.out"; then
		fail "$1 ($size MADs): a request failed (above)"
	fi
	[ "$(grep -c '|status ' "/tmp/$1-$size.out")" = $NREQ ] ||
		fail "$1 ($size MADs): not $NREQ answers"
}

for size in $SIZES; do
	run_with opa_vnic "$size"
	run_with opa_vnic_rs "$size"
done

# Every request that differs, by size; the answers side by side.
differs=""
for size in $SIZES; do
	echo "== $size MADs: C opa_vnic"
	cat "/tmp/opa_vnic-$size.out"
	echo "== $size MADs: opa_vnic_rs"
	cat "/tmp/opa_vnic_rs-$size.out"
	bad=""
	i=1
	while [ $i -le $NREQ ]; do
		c=$(sed -n "${i}p" "/tmp/opa_vnic-$size.out")
		r=$(sed -n "${i}p" "/tmp/opa_vnic_rs-$size.out")
		if [ "$c" != "$r" ]; then
			case "$ALLOWED" in
			*" $size:$i "*) tag="differs (allowed)" ;;
			*) tag="differs"; bad="$bad $i" ;;
			esac
			echo "$size request $i ($(echo "$c" | cut -d'|' -f2)) $tag:"
			echo "  C:    $(echo "$c" | cut -d'|' -f3)"
			echo "  Rust: $(echo "$r" | cut -d'|' -f3)"
		fi
		i=$((i + 1))
	done
	echo "$size MADs: requests that differ:${bad:- none}"
	if [ -n "$bad" ]; then
		differs="$differs $size:$bad;"
	fi
done

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
if [ -n "$differs" ]; then
	fail "opa_vnic_rs answers differently from the C opa_vnic (above):$differs"
fi
echo "vema-compare: ok"
