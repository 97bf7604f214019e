# SPDX-License-Identifier: GPL-2.0
# The real fabric manager runs opasim's fabric: opasim with managed=1 is a switch node (48
# ports) and four HFIs whose ports come up in Init without a LID, as after a reset; opafmd,
# Debian's opa-fm unmodified (scripts/opa/opa-tools), sweeps it from opasim0's port: directed
# route through the switch, LIDs, P_Keys, the LFT, Armed, Active. Then SMPs from a umad agent
# find the switch and the HFIs behind it by directed route and by LID, and GSI MADs go between
# HFIs by the LFT the SM wrote. Needs the initramfs built with OPA_VERBS_ROOT and
# OPA_TOOLS_ROOT, and /opa/opasim-umad.
. /opa/guest-lib.sh
umad=/opa/opasim-umad
fm=/usr/lib/opa-fm/bin/opafmd
[ -x $fm ] || fail "$fm is missing (initramfs built without OPA_TOOLS_ROOT?)"
[ -x $umad ] || fail "$umad is missing"
ib=/sys/class/infiniband
sw_guid=0011750100ff0000

# field OUT OFFSET LEN: LEN bytes (hex) at OFFSET of the attribute data opasim-umad printed.
field() { sed -n 's/^data //p' "$1" | cut -c$(($2 * 2 + 1))-$((($2 + $3) * 2)); }
# smp OUT ARGS...: a directed-route Get through opasim0's port, answered without error.
smp() {
	local out=$1
	shift
	$umad smp umad0 "$@" >"$out" 2>&1 || { cat "$out"; fail "smp $*"; }
	grep -q "status 0x8000 " "$out" || { cat "$out"; fail "smp $*: an error status"; }
}

load_vnic_stack opa_vnic_rs managed=1 devices=4
must modprobe ib_uverbs

echo "== before the SM: every port Init, without a LID, with hfi1's P_Keys after reset"
for d in 0 1 2 3; do
	expect "opasim$d state" "$(cat $ib/opasim$d/ports/1/state)" "2: INIT"
	expect "opasim$d LID" "$(cat $ib/opasim$d/ports/1/lid)" "0x0"
	expect "opasim$d P_Keys" "$(cat $ib/opasim$d/ports/1/pkeys/* | grep -v '^0x0000$' | tr '\n' ' ')" "0x8001 0x7fff "
done

echo "== directed route to the switch, and through it"
# An HFI answers an SMP with the limited management P_Key, which only a full member takes
# (hfi1's ingress_pkey_matches_entry()): before any SM has programmed the tables, no port
# after reset would take the answers. The SM's port is made a full member of the
# management partition (0xffff), as opa-fm's SM programs its own port; the umad agent on
# opasim0 stands for it until opafmd starts.
must sh -c "echo '0x8001 0x7fff 0xffff' >/sys/kernel/debug/opasim/opasim0/port1/pkeys"
smp /tmp/sw 0x11 --path 1
expect "switch: node type" "$(field /tmp/sw 2 1)" 02
expect "switch: ports" "$(field /tmp/sw 3 1)" 30
expect "switch: node GUID" "$(field /tmp/sw 16 8)" $sw_guid
expect "switch: port the SMP came in on" "$(field /tmp/sw 40 1)" 01
smp /tmp/hfi 0x11 --path 1,3
expect "opasim2 behind switch port 3: node GUID" "$(field /tmp/hfi 16 8)" "$(tr -d : <$ib/opasim2/node_guid)"
# Ports 1 to 5: four linked (Init, LinkUp), the fifth down.
smp /tmp/pi 0x15 --path 1 --am 0x05000001
for p in 0 1 2 3; do
	expect "switch port $((p + 1)): states" "$(field /tmp/pi $((p * 242 + 19)) 1)" 52
done
expect "switch port 5: down" "$(field /tmp/pi $((4 * 242 + 19)) 1)" 21
expect "switch port 2: neighbour GUID" "$(field /tmp/pi $((242 + 208)) 8)" "$(tr -d : <$ib/opasim1/node_guid)"

echo "== opafmd"
# opa-fm keeps its state in /var/lib/opa-fm, which its package does not make; without it
# the SM exits (its configuration server finds no socket directory) and opafmd restarts it.
mkdir -p /var/log /var/run /var/lib/opa-fm
syslogd -O /var/log/messages
must $fm -D
wait_line /var/log/messages "DISCOVERY CYCLE END" 180 || {
	cat /var/log/messages
	fail "no sweep ended in 180 s"
}
grep -E "fm0_sm.*(DISCOVERY CYCLE|ERROR)" /var/log/messages | head -n 20
grep -q "DISCOVERY CYCLE END. 1 SWs, 4 HFIs, 4 end ports, 9 total ports, 1 SM(s)" /var/log/messages ||
	fail "the sweep did not find 1 switch and 4 HFIs"
echo "ok: opa-fm's sweep: 1 switch, 4 HFIs"
# Every SMP of the sweep was answered as the SM wanted (the congestion control attributes
# too, which opa-fm sets by default), and every HFI took the SM's directed routes.
sleep 5
if grep -E "fm0_sm.*ERROR" /var/log/messages; then
	fail "opa-fm logged errors (above)"
fi
echo "ok: no error in opa-fm's log"
# The SM activates the ports in the same sweep; the last ones may take a moment.
n=0
until [ "$(cat $ib/opasim*/ports/1/state | grep -c ACTIVE)" = 4 ]; do
	[ $n -ge 60 ] && { cat $ib/opasim*/ports/1/state; fail "not every port became Active"; }
	sleep 1
	n=$((n + 1))
done
lids=""
for d in 0 1 2 3; do
	lid=$(cat $ib/opasim$d/ports/1/lid)
	sm=$(cat $ib/opasim$d/ports/1/sm_lid)
	echo "opasim$d: $(cat $ib/opasim$d/ports/1/state) lid $lid sm_lid $sm"
	[ "$lid" != 0x0 ] || fail "opasim$d has no LID"
	expect "opasim$d: the SM's LID" "$sm" "$(cat $ib/opasim0/ports/1/lid)"
	lids="$lids $lid"
done
[ "$(echo $lids | tr ' ' '\n' | sort -u | wc -l)" = 4 ] || fail "LIDs not distinct:$lids"
for d in 0 1 2 3; do
	echo "opasim$d P_Keys: $(cat $ib/opasim$d/ports/1/pkeys/* | grep -v '^0x0000$' | tr '\n' ' ')"
done
echo "ok: four distinct LIDs:$lids"

echo "== a second sweep"
# Every sweep after the first checks what the switch reports of each port against the HFI
# behind it (_stl_authentic_node(): an Active switch port's LID is its HFI's, as the SM wrote
# it); an HFI that fails is bounced and leaves the fabric.
n=$(grep -c "DISCOVERY CYCLE END" /var/log/messages)
must /usr/lib/opa-fm/bin/fm_cmd smForceSweep
k=0
until [ "$(grep -c "DISCOVERY CYCLE END" /var/log/messages)" -gt "$n" ]; do
	[ $k -ge 60 ] && fail "no second sweep 60 s after smForceSweep"
	sleep 1
	k=$((k + 1))
done
grep "DISCOVERY CYCLE END" /var/log/messages | tail -n 1
grep "DISCOVERY CYCLE END" /var/log/messages | tail -n 1 | grep -q "1 SWs, 4 HFIs, 4 end ports" ||
	fail "the second sweep lost HFIs: $(grep -E 'quarantine|bounced|Disappearance' /var/log/messages | head -n 5)"
echo "ok: the second sweep finds the switch and the four HFIs again"

echo "== the switch as the SM left it"
smp /tmp/p0 0x15 --path 1 --am 0x01000000
sw_lid=$(field /tmp/p0 0 4)
[ "$sw_lid" != 00000000 ] || fail "the switch has no LID"
echo "switch LID 0x$sw_lid"
smp /tmp/pi 0x15 --path 1 --am 0x04000001
for p in 0 1 2 3; do
	expect "switch port $((p + 1)): Active" "$(field /tmp/pi $((p * 242 + 19)) 1)" 54
done
# The LFT sends each HFI's LID out of the switch port it is on.
smp /tmp/lft 0x19 --path 1 --am 0x01000000
for d in 0 1 2 3; do
	lid=$(($(cat $ib/opasim$d/ports/1/lid)))
	expect "LFT: LID $lid to port $((d + 1))" "$(field /tmp/lft $lid 1)" "0$((d + 1))"
done

echo "== LID routes through the switch"
# GSI MADs between HFIs (the SM's own LID-routed SMPs to the switch made the sweep).
must $umad ping umad0 umad3 "$(cat $ib/opasim3/ports/1/lid)"
must $umad ping umad2 umad1 "$(cat $ib/opasim1/ports/1/lid)"
# A LID the SM did not assign: the switch drops it.
must $umad ping umad0 umad1 0x99 --expect-timeout

echo "== congestion control as the SM set it"
export PATH=/usr/sbin:$PATH
for o in conginfo hficongset hficongcon hficonglog; do
	opasmaquery -o $o -l "$(cat $ib/opasim2/ports/1/lid)" >/tmp/cc-$o 2>&1 || { cat /tmp/cc-$o; fail "opasmaquery -o $o"; }
	head -n 12 /tmp/cc-$o
done

echo "== opa-fm's SA"
export PATH=/usr/sbin:$PATH
must opasaquery -o node >/tmp/sa-node 2>&1
for d in 0 1 2 3; do
	grep -q "0x$(tr -d : <$ib/opasim$d/node_guid)" /tmp/sa-node || { cat /tmp/sa-node; fail "no NodeRecord of opasim$d"; }
done
grep -q "0x$sw_guid" /tmp/sa-node || { cat /tmp/sa-node; fail "no NodeRecord of the switch"; }
echo "ok: NodeRecords of the switch and the four HFIs"
lid2=$(cat $ib/opasim2/ports/1/lid)
# cap3 LID: CapabilityMask3 of LID's PortInfoRecord, as opasaquery prints it.
cap3() {
	opasaquery -o portinfo -l "$1" >/tmp/sa-pi 2>&1
	sed -n 's/.*Capability3: *\(0x[0-9a-fA-F]*\).*/\1/p' /tmp/sa-pi | head -n 1
}
c=$(cap3 $lid2)
[ "$c" = 0x2000 ] || { cat /tmp/sa-pi; fail "PortInfoRecord of opasim2: CapabilityMask3 '$c', not IsEthOnFabric"; }
echo "ok: PortInfoRecord of opasim2: IsEthOnFabric with the VNIC driver"
echo "== PathRecords and McMemberRecords: at IB's versions only"
# opa-fm serves them only at InfiniBand's base and class versions (sa_PathRecord(),
# sa_McMemberRecord()), and answers BAD_CLASS at OPA's.
lid1=$(cat $ib/opasim1/ports/1/lid)
/opa/sa-query --umad umad3 path --get --slid "$lid1" --dlid "$lid2" >/tmp/q.out 2>&1 || {
	cat /tmp/q.out
	fail "sa-query path against opa-fm's SA"
}
cat /tmp/q.out
sed -n 2p /tmp/q.out | grep -q "^path slid $(printf '%#x' $((lid1))) dlid $(printf '%#x' $((lid2))) pkey " ||
	fail "opa-fm's PathRecord from opasim1 to opasim2"
/opa/sa-query --umad umad3 path --opa-versions --get --slid "$lid1" --dlid "$lid2" >/tmp/q.out 2>&1 &&
	fail "opa-fm answered a PathRecord at OPA's versions"
expect "PathRecord at OPA's versions" "$(head -n 1 /tmp/q.out | cut -d' ' -f1-2)" "status 0x0004"
/opa/sa-query --umad umad3 mcmember --mgid 0xff12401b80010000:0x00000000ffffffff >/tmp/q.out 2>&1 || {
	cat /tmp/q.out
	fail "sa-query mcmember against opa-fm's SA"
}
cat /tmp/q.out
sed -n 2p /tmp/q.out | grep -q "^mcmember mgid 0xff12401b80010000:0x00000000ffffffff mlid 0xc" ||
	fail "opa-fm's Default broadcast group, with a 16-bit MLID"
/opa/sa-query --umad umad3 mcmember --opa-versions --mgid 0xff12401b80010000:0x00000000ffffffff \
	>/tmp/q.out 2>&1 && fail "opa-fm answered a McMemberRecord at OPA's versions"
expect "McMemberRecord at OPA's versions" "$(head -n 1 /tmp/q.out | cut -d' ' -f1-2)" "status 0x0004"

echo "== vnic-em on opa-fm's SA"
# NodeRecords and PortInfoRecords with whole templates, on 0xffff and the SM's SL, switch
# records skipped: the four HFI ports, each served by the VNIC driver.
/opa/vnic-em -d umad0 discover >/tmp/d.out 2>&1 || { cat /tmp/d.out; fail "vnic-em discover against opa-fm's SA"; }
cat /tmp/d.out
grep -q "^4 port(s), 4 served by a VNIC driver$" /tmp/d.out || fail "vnic-em discover: not the four HFI ports"
echo "ok: vnic-em discover against opa-fm's SA: 4 ports, 4 served"

# cap3_gone DRV: after rmmod DRV, the port's trap 144 tells the SM, whose SA follows.
cap3_gone() {
	must rmmod "$1"
	n=0
	until c=$(cap3 $lid2) && [ -n "$c" ] && [ $((c & 0x2000)) = 0 ]; do
		[ $n -ge 30 ] && { cat /tmp/sa-pi; fail "opasim2's PortInfoRecord still has IsEthOnFabric ($c) 30 s after rmmod $1"; }
		sleep 1
		n=$((n + 1))
	done
	echo "ok: PortInfoRecord of opasim2 without IsEthOnFabric after rmmod $1 ($c)"
}
cap3_gone opa_vnic_rs

echo "== the C opa_vnic, as reference"
must modprobe opa_vnic
n=0
until [ "$(cap3 $lid2)" = 0x2000 ]; do
	[ $n -ge 30 ] && { cat /tmp/sa-pi; fail "the C opa_vnic: no IsEthOnFabric in opasim2's PortInfoRecord"; }
	sleep 1
	n=$((n + 1))
done
echo "ok: PortInfoRecord of opasim2: IsEthOnFabric with the C opa_vnic"
/opa/vnic-em -d umad0 discover >/tmp/d.out 2>&1 || { cat /tmp/d.out; fail "vnic-em discover under the C opa_vnic"; }
grep -q "^4 port(s), 4 served by a VNIC driver$" /tmp/d.out || { cat /tmp/d.out; fail "vnic-em discover under the C opa_vnic: not the four HFI ports"; }
echo "ok: vnic-em discover under the C opa_vnic: 4 ports, 4 served"
cap3_gone opa_vnic

echo "== opafmd stops"
$fm halt >/dev/null 2>&1
n=0
while pidof sm fe opafmd >/dev/null; do
	[ $n -ge 30 ] && kill -9 $(pidof sm fe opafmd) 2>/dev/null
	sleep 1
	n=$((n + 1))
done
killall syslogd 2>/dev/null
must rmmod ib_uverbs
must rmmod ib_umad
must rmmod opasim
check_dmesg_clean
echo "opafm: ok"
