# SPDX-License-Identifier: GPL-2.0
# The VEMA agent answers MADs while the driver stops: the EM reads vport 0 of
# LID 2 in a loop while the module unloads, under the C opa_vnic and then
# opa_vnic_rs. The vports go first (their netdevs unregister, which takes a
# while with many of them), then the agent.
#
# opa_vnic_rs answers a Get in between with the vport gone ("exists":
# false). It used to drop every MAD from the moment it began to remove the
# vports (the agent's handler held the agent, a cycle it broke by hand), so
# that no Get ever saw the vport gone.
#
# The C driver removes its vports under the port's lock, which a Get waits
# for; it used to leave the freed vports in its xarray, so that the Get read
# a freed adapter once the lock was released (KASAN: slab-use-after-free in
# opa_vnic_get_vesw_info(), freed by vema_unregister(); patch 0034). The
# kernel log check below finds that on the debug kernel.
. /opa/guest-lib.sh

VPORTS=24
em() { /opa/vnic-em -d /dev/infiniband/umad0 "$@"; }

# stop_under_gets DRIVER
stop_under_gets() {
	local v
	echo "=== $1"
	must modprobe "$1"
	for v in $(seq 0 $((VPORTS - 1))); do
		must em set -l 2 --vport "$v" --enable --pkey 0x8001 \
			--mac "02:00:00:00:02:$(printf %02x "$v")"
	done
	em show -l 2 --vport 0 --json --no-counters | grep -q '"exists": true' ||
		fail "$1: vport 0 of LID 2 was not created"

	# Gets without retries, each waiting 100 ms at most, until the unload is
	# over.
	rm -f /tmp/stop /tmp/gets
	(
		while [ ! -e /tmp/stop ]; do
			em show -l 2 --vport 0 --json --no-counters --retries 0 --timeout-ms 100 2>/dev/null |
				grep -o '"exists": [a-z]*' || echo "no answer"
		done >/tmp/gets
	) &
	loop=$!
	sleep 2
	must rmmod "$1"
	touch /tmp/stop
	wait $loop
	sort /tmp/gets | uniq -c
	grep -q '"exists": true' /tmp/gets || fail "$1: no Get was answered before the unload"
	# The C driver holds the port's lock while it removes the vports: a Get
	# sent then is answered only after the EM stopped waiting, so it may
	# never see the vport gone.
	if [ "$1" = opa_vnic_rs ]; then
		grep -q '"exists": false' /tmp/gets ||
			fail "$1: no Get was answered between the vports' removal and the agent's"
	fi
}

must modprobe opasim
must modprobe ib_umad
stop_under_gets opa_vnic
stop_under_gets opa_vnic_rs
must rmmod ib_umad
must rmmod opasim
check_dmesg_clean
echo "vema-stop: ok"
