# SPDX-License-Identifier: GPL-2.0
# opa_vnic_rs registers its VEMA agent on every opasim port and answers the
# EM: vnic-em on opasim0 (LID 1) reads and configures the vports of
# opasim1 (LID 2) over the fabric, and the MAD answers carry what was set.
. /opa/guest-lib.sh

must modprobe opasim
must modprobe ib_umad
dmesg_new >/dev/null
must modprobe opa_vnic_rs
log=$(dmesg_new)
echo "$log" | grep opa_vnic_rs
for d in 0 1; do
	echo "$log" | grep -q "opa_vnic_rs: opasim$d: VEMA agent on 1 of 1 ports" ||
		fail "no VEMA agent on opasim$d"
done

em() { /opa/vnic-em -d /dev/infiniband/umad0 "$@"; }
# Before any Set the agent answers the power-on defaults.
em show -l 2 --vport 0 --json --no-counters >/tmp/before.json || fail "show before set"
grep -q '"exists": false' /tmp/before.json || fail "vport 0 of LID 2 exists before any Set"
# A Set creates the vport; the answer and a later Get carry the new state.
must em set -l 2 --vport 0 --enable --eth-mtu 9000 --pkey 0x8001 --mac 02:00:00:00:02:00
must em set -l 2 --vport 0 --mac-entry 5=02:00:00:00:01:00,0x1
em show -l 2 --vport 0 --json --no-counters >/tmp/after.json || fail "show after set"
cat /tmp/after.json
grep -q '"exists": true' /tmp/after.json || fail "the Set did not create the vport"
grep -q '"config_state": "forwarding"' /tmp/after.json || fail "config_state is not forwarding"
grep -q '"eth_mtu": 9000' /tmp/after.json || fail "eth_mtu is not 9000"
grep -q '"pkey": 32769' /tmp/after.json || fail "pkey is not 0x8001"
grep -q '"mac": "02:00:00:00:02:00"' /tmp/after.json || fail "base MAC not set"
grep -q '02:00:00:00:01:00' /tmp/after.json || fail "the MAC table entry is not there"
# Unknown vports of the other node stay absent; a MAD status comes back as an error.
em show -l 2 --vport 7 --json --no-counters | grep -q '"exists": false' || fail "vport 7 exists"

# The sample fabric, applied by the EM; re-applying finds nothing to change
# (apply --check exits 5 when a field differs), so every field reads back
# as configured.
must em apply /opa/fabric.toml
out=$(em apply /opa/fabric.toml) || fail "re-apply failed"
echo "$out"
em apply --check /opa/fabric.toml || fail "the fabric differs from the applied config"
em show -c /opa/fabric.toml --no-counters

must rmmod opa_vnic_rs
must rmmod ib_umad
must rmmod opasim
check_dmesg_clean
echo "vema-agent: ok"
