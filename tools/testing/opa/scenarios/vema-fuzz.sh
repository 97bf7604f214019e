# SPDX-License-Identifier: GPL-2.0
# The differential VEMA fuzzer: vema-fuzz sends generated VEMA MADs (every
# attribute and method, sizes from 24 to 2048 bytes, base version 1, valid,
# boundary and malformed contents) from opasim0 (LID 1) to the agent on
# LID 2, one at a time, first under the C opa_vnic and then under
# opa_vnic_rs, each from a freshly loaded stack. The C driver is the
# oracle: every answer (answered or not, length, status, data) must be the
# same byte for byte.
#
# The kernel command line may change the run (make fuzz does, for its long
# campaign):
#   opa.fuzz_count=N      requests per seed and driver (default COUNT)
#   opa.fuzz_seeds=A,B,.. the seeds (default SEEDS)
#   opa.fuzz_timeout=MS   how long a request waits for its answer
. /opa/guest-lib.sh

# make check's run: about 35 s per driver (the requests no driver answers
# wait out their time-out; the others take about a millisecond each).
COUNT=5000
SEEDS=1
TIMEOUT=200
# On the debug kernel a Set that changes a netdev's state can take longer:
# the C driver once answered a DeleteVesw after its 200 ms, which the
# comparison counts as no answer. Four times the wait there (the 144 or so
# requests no driver answers then cost some 90 s more a driver).
debug_kernel && TIMEOUT=800
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	opa.fuzz_count=*) COUNT=${arg#*=} ;;
	opa.fuzz_seeds=*) SEEDS=$(echo "${arg#*=}" | tr ',' ' ') ;;
	opa.fuzz_timeout=*) TIMEOUT=${arg#*=} ;;
	esac
done

# Differences allowed, one rule a line (see "vema-fuzz compare --allow"),
# each with its reason after a '#'. None.
ALLOW=/tmp/vema-fuzz.allow
: >"$ALLOW"
# Requests not sent, in the same syntax (conditions on requests only).
SKIP=/tmp/vema-fuzz.skip
cat >"$SKIP" <<'EOF'
# A request of a foreign class version or OUI never reaches the agents: the
# MAD layer answers it itself, and then reposts that answer's buffer, a full
# copy of the request, as a receive buffer. A short request that lands in
# it is read by the C agent with the earlier request's bytes as its tail;
# opa_vnic_rs reads zeros there, as C does from every fresh buffer. Leaking
# another request's bytes into a Set is not behaviour to copy (see
# opa_vnic_rs.rst, "Real peers"), so these requests, whose answers both
# drivers leave to the MAD layer anyway, are not sent.
foreign=yes
EOF

# fuzz DRV SEED: the requests of SEED to DRV, from a fresh stack.
fuzz() {
	load_vnic_stack "$1"
	must /opa/vema-fuzz run -d umad0 --dlid 2 --seed "$2" --count "$COUNT" \
		--timeout-ms "$TIMEOUT" --skip "$SKIP" --out "/tmp/$1.$2.vfz"
	unload_vnic_stack "$1"
}

echo "vema-fuzz: seeds $SEEDS, $COUNT requests each, $TIMEOUT ms per request"
bad=
for seed in $SEEDS; do
	fuzz opa_vnic "$seed"
	fuzz opa_vnic_rs "$seed"
	/opa/vema-fuzz compare "/tmp/opa_vnic.$seed.vfz" "/tmp/opa_vnic_rs.$seed.vfz" \
		--allow "$ALLOW" --max 20
	case $? in
	0) ;;
	1) bad="$bad $seed" ;;
	*) fail "vema-fuzz compare could not compare the transcripts of seed $seed" ;;
	esac
	# The transcripts of a long campaign would fill the guest's memory.
	rm -f "/tmp/opa_vnic.$seed.vfz" "/tmp/opa_vnic_rs.$seed.vfz"
done
check_dmesg_clean
[ -z "$bad" ] || fail "opa_vnic_rs answers differently from the C opa_vnic (seeds:$bad; above)"
echo "vema-fuzz: ok"
