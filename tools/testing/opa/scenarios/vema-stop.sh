# SPDX-License-Identifier: GPL-2.0
# opa_vnic_rs's agent answers every MAD that arrives while it is registered,
# while the driver stops too, as the C opa_vnic does: the EM reads vport 0 of
# LID 2 in a loop while the module unloads. The vports go first (their netdevs
# unregister, which takes a while with many of them), then the agent: a Get
# in between is answered with the vport gone ("exists": false). The driver
# used to drop every MAD from the moment it began to remove the vports (the
# agent's handler held the agent, a cycle it broke by hand), so that no Get
# ever saw the vport gone.
. /opa/guest-lib.sh

VPORTS=24
must modprobe opasim
must modprobe ib_umad
must modprobe opa_vnic_rs
em() { /opa/vnic-em -d /dev/infiniband/umad0 "$@"; }
for v in $(seq 0 $((VPORTS - 1))); do
	must em set -l 2 -v "$v" --enable --pkey 0x8001 \
		--mac "02:00:00:00:02:$(printf %02x "$v")"
done
em show -l 2 -v 0 --json --no-counters | grep -q '"exists": true' ||
	fail "vport 0 of LID 2 was not created"

# Gets without retries, each waiting 100 ms at most, until the unload is over.
rm -f /tmp/stop /tmp/gets
(
	while [ ! -e /tmp/stop ]; do
		em show -l 2 -v 0 --json --no-counters --retries 0 --timeout-ms 100 2>/dev/null |
			grep -o '"exists": [a-z]*' || echo "no answer"
	done >/tmp/gets
) &
loop=$!
sleep 2
must rmmod opa_vnic_rs
touch /tmp/stop
wait $loop
sort /tmp/gets | uniq -c
grep -q '"exists": true' /tmp/gets || fail "no Get was answered before the unload"
grep -q '"exists": false' /tmp/gets ||
	fail "no Get was answered between the vports' removal and the agent's"

must rmmod ib_umad
must rmmod opasim
check_dmesg_clean
echo "vema-stop: ok"
