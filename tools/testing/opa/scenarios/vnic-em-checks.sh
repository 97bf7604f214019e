# SPDX-License-Identifier: GPL-2.0
# What vnic-em checks before it sends, and what it shows, on opa_vnic_rs
# and opasim (two HFIs of one port, LIDs 1 and 2):
#  - a vport whose SC/VL pair the port's SC-to-VL table drops is refused
#    with its line, and nothing is sent;
#  - declared with [em] sc2vl, it is applied, and the HFI drops its frames
#    until the port's table is what the config says (opasim's vnic_drops,
#    bad_vl_mapping), then they arrive;
#  - apply --diff lists the Sets apply then sends, old -> new;
#  - counters --prometheus -o FILE writes the counters, and show --json
#    has its documented fields;
#  - two vesws on one node port with ids equal modulo 256 get a warning,
#    and hfi1's demultiplexing by the low 8 bits refuses the second open.
. /opa/guest-lib.sh

[ -x /opa/vnic-em ] || fail "/opa/vnic-em is missing"
EM="/opa/vnic-em -d umad0"
DBG=/sys/kernel/debug/opasim
load_vnic_stack opa_vnic_rs
two_vport_fabric

echo "== a pair the HFI drops is refused"
# The last table of the file is LID 2's vport: SC5 with the default VL 0.
{ cat /tmp/fabric.toml; echo "non_vlan_sc_uc = 5"; } >/tmp/bad.toml
line=$(wc -l </tmp/bad.toml)
/opa/vnic-em validate /tmp/bad.toml 2>/tmp/err && fail "validate took SC5 on VL0"
cat /tmp/err
grep -q "^/tmp/bad.toml:$line:18: error: non_vlan_sc_uc = 5 with non_vlan_vl_uc = 0: the SC-to-VL table maps SC5 to VL5" /tmp/err ||
	fail "validate does not name the pair and its line"
$EM apply /tmp/bad.toml >/dev/null 2>&1
rc=$?
[ $rc = 1 ] || fail "apply of a refused config exited $rc, not 1"
$EM show -l 2 --vport 0 --json --no-counters | grep -q '"exists": false' ||
	fail "apply of a refused config sent something"

echo "== declared, applied, and dropped until the port's table agrees"
awk '{ print } /^\[em\]$/ { print "sc2vl = \"5:0\"" }' /tmp/bad.toml >/tmp/sc.toml
must /opa/vnic-em validate /tmp/sc.toml
must $EM apply /tmp/sc.toml >/dev/null
a=$(netdev_by_mac 02:00:00:00:01:00)
b=$(netdev_by_mac 02:00:00:00:02:00)
[ -n "$a" ] && [ -n "$b" ] || fail "the VNIC netdevs are missing"
netns_host na "$a" 10.12.0.1/24
netns_host nb "$b" 10.12.0.2/24
sleep 1
drops() { awk '$1 == "bad_vl_mapping" { print $2 }' $DBG/opasim1/port1/vnic_drops; }
d0=$(drops)
# LID 2 answers (ARP, echo reply) in untagged unicast: SC5 on VL0.
ip netns exec na ping -c 1 -W 2 10.12.0.2 >/dev/null && fail "SC5 on VL0 got through opasim's checks"
d1=$(drops)
echo "bad_vl_mapping on LID 2's port: $d0 -> $d1"
[ "$d1" -gt "$d0" ] || fail "opasim did not count the dropped frames"
# What the fabric manager would do to match the declared table.
for d in 0 1; do echo "5:0" >$DBG/opasim$d/port1/sc2vl || fail "cannot write opasim$d sc2vl"; done
cat $DBG/opasim1/port1/sc2vl
ok=0
for i in 1 2 3; do ip netns exec na ping -c 1 -W 2 10.12.0.2 >/dev/null && { ok=1; break; }; done
[ $ok = 1 ] || fail "no ping from LID 1 to LID 2 once the table agrees"
d2=$(drops)
ip netns exec na ping -c 1 -W 2 10.12.0.2 >/dev/null || fail "no second ping"
ip netns exec nb ping -c 1 -W 2 10.12.0.1 >/dev/null || fail "no ping from LID 2 to LID 1"
[ "$(drops)" = "$d2" ] || fail "frames dropped after the table agrees: $d2 -> $(drops)"

echo "== apply --diff"
sed 's/^eth_mtu = 1500$/eth_mtu = 9000/' /tmp/sc.toml >/tmp/mtu.toml
mtu1500=$($EM show -c /tmp/mtu.toml --json --no-counters | grep -c '"eth_mtu": 1500')
$EM apply --diff /tmp/mtu.toml >/tmp/diff || fail "apply --diff exited $?"
cat /tmp/diff
[ "$(grep -c '^Set ' /tmp/diff)" = 2 ] || fail "apply --diff does not list 2 Sets"
grep -q '^Set VESWPortInfo LID 0x0001 vport 0 \[vesw 1 test\]$' /tmp/diff || fail "no Set of LID 1"
grep -q '^Set VESWPortInfo LID 0x0002 vport 0 \[vesw 1 test\]$' /tmp/diff || fail "no Set of LID 2"
[ "$(grep -c '^    eth_mtu  *1500 -> 9000$' /tmp/diff)" = 2 ] || fail "apply --diff does not show eth_mtu 1500 -> 9000"
[ "$($EM show -c /tmp/mtu.toml --json --no-counters | grep -c '"eth_mtu": 1500')" = "$mtu1500" ] ||
	fail "apply --diff changed the fabric"
$EM apply /tmp/mtu.toml | tee /tmp/apply
grep -q "applied 2 of 2 Set(s)" /tmp/apply || fail "apply did not send the 2 Sets --diff listed"
$EM apply --diff /tmp/mtu.toml | grep -qx "nothing to do" || fail "apply --diff after apply is not empty"

echo "== counters --prometheus, show --json"
must $EM counters -c /tmp/mtu.toml --prometheus -o /tmp/vnic.prom
head -4 /tmp/vnic.prom
[ "$(grep -c '^# TYPE opa_vnic_vport_tx_packets_total counter$' /tmp/vnic.prom)" = 1 ] ||
	fail "no single TYPE line of tx_packets"
tx=$(awk -F'} ' '/^opa_vnic_vport_tx_packets_total\{lid="0x0001",vport="0",vesw="1",mac="02:00:00:00:01:00"\} / { print $2 }' /tmp/vnic.prom)
[ -n "$tx" ] && [ "$tx" -gt 0 ] || fail "tx_packets of LID 1 vport 0 is '$tx'"
grep -qx 'opa_vnic_em_read_errors 0' /tmp/vnic.prom || fail "read errors in the exposition"
ls -a /tmp | grep -q '^\.vnic\.prom\.' && fail "a temporary file was left beside the output"
$EM counters -c /tmp/mtu.toml --json | grep -q '"tx_packets": ' || fail "counters --json"
$EM show -c /tmp/mtu.toml --json >/tmp/show.json || fail "show --json"
for f in '"lid"' '"exists"' '"vesw"' '"eth_mtu"' '"routing_control"' '"mac_tbl_digest"' \
	'"mac_table"' '"iface_ucast_macs"' '"summary_counters"' '"error_counters"' '"pcp_sc_uc"'; do
	grep -q "$f: " /tmp/show.json || fail "show --json has no $f"
done

echo "== vesw ids equal modulo 256 on one node port"
cat /tmp/mtu.toml - >/tmp/alias.toml <<'TOML'

[[vesw]]
id = 257
name = "alias"
pkey = 0x8001
unknown_mcast_dlid = 0xf00001

[[vport]]
lid = 1
vport = 1
vesw = 257
port_num = 3
mac = "02:00:00:01:01:01"
TOML
/opa/vnic-em validate /tmp/alias.toml 2>/tmp/err || { cat /tmp/err; fail "validate refused a warning"; }
cat /tmp/err
grep -q "warning: vesw 257 (0x101) and vesw 1 (0x1, line [0-9]*) both have vports on LID 0x0001" /tmp/err ||
	fail "no warning for vesws 1 and 257 on LID 1"
must $EM apply /tmp/alias.toml >/dev/null 2>&1
c=$(netdev_by_mac 02:00:00:01:01:01)
[ -n "$c" ] || fail "no netdev for vesw 257"
ip link set "$c" up 2>/tmp/up && fail "vesw 257 opened beside vesw 1 on the same port"
cat /tmp/up

ip netns del na
ip netns del nb
unload_vnic_stack opa_vnic_rs
check_dmesg_clean
echo "vnic-em-checks: ok"
