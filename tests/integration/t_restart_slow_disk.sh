#!/usr/bin/env bash
# A restart whose replicas are slow to open still starts. At tens of thousands of partitions on
# a cold page cache, opening every replica (each read its raft-hard-state file from disk) took
# longer than the node's 10 s bound on registering with its own controller, and the broker gave
# up: "the node did not register with its own controller within 10000 ms". The hard states now
# live in the node's kvstore, so a data directory an older release wrote (a raft-hard-state file
# in each partition, no kvstore) is where replicas still read a file each: here a shim
# (build/itest/slow_open.so) makes each read of raft-hard-state take 50 ms, so 220 partitions
# take 11 s to open; the bound must count from the end of that work, not from the start. The
# restart is also that upgrade: every partition keeps its record and takes new ones.
# timeout: 150
source "$(dirname "$0")/lib.sh"
SHIM=$ITEST_BIN/slow_open.so
[ -f "$SHIM" ] || fail "$SHIM is missing (make all builds it)"
N=220
start_broker --set admin.listener= --set schema.registry.listener=
"$SP" topic create wide --partitions $N -b "$BROKER" >/dev/null || fail "topic create wide"
echo one | kcat -P -b "$BROKER" -t wide -p $((N - 1)) || fail "produce before the restart"
stop_broker

# the older layout: a hard-state file per partition (one 32-byte record, as replication/
# hardstate.h describes it, in a term above any the log holds), no kvstore
[ -f "$DATA/kvstore" ] || fail "the broker kept no kvstore in $DATA"
$PY - "$DATA" "$N" <<'PYEOF' || fail "writing the older layout"
import os, struct, sys
def crc32c(b):
    crc = 0xFFFFFFFF
    for x in b:
        crc ^= x
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF
data, n = sys.argv[1], int(sys.argv[2])
rec = b"RHS1" + struct.pack(">qiqI", 1000, 1, -1, 0)
rec += struct.pack(">I", crc32c(rec))
for p in range(n):
    with open(os.path.join(data, "wide-%d" % p, "raft-hard-state"), "wb") as f:
        f.write(rec)
os.remove(os.path.join(data, "kvstore"))
PYEOF

START_WAIT_S=90 LD_PRELOAD=$SHIM SLOW_OPEN_NAME=raft-hard-state SLOW_OPEN_MS=50 \
    start_broker --set admin.listener= --set schema.registry.listener=
grep 'event=broker_started' "$BROKER_LOG" | tail -1 | grep -q "partitions=$N " ||
    fail "restart did not report $N partitions: $(grep broker_started "$BROKER_LOG" | tail -1)"
# the opens really were slow: the replicas took longer than the bound to open
first=$(grep 'event=cluster_started' "$BROKER_LOG" | tail -1 | sed -n 's/^ts=\([^ ]*\) .*/\1/p')
reopened=$(grep 'event=cluster_replicas_reopened' "$BROKER_LOG" | tail -1)
[[ $reopened == *" replicas=$N "* ]] || fail "not every replica reopened: $reopened"
last=$(sed -n 's/^ts=\([^ ]*\) .*/\1/p' <<<"$reopened")
took=$(($(date -d "$last" +%s%3N) - $(date -d "$first" +%s%3N)))
[ "$took" -gt 10000 ] || fail "replicas opened in $took ms: the shim did not slow them past the bound"
# every partition is led and serves: the record from before the restart, and a new one
deadline=$((SECONDS + 60))
until [ "$(kcat -L -b "$BROKER" -t wide 2>/dev/null | grep -c 'leader 1,')" -eq $N ]; do
    [ $SECONDS -lt $deadline ] || fail "not every partition of wide has a leader after 60 s"
    sleep 0.2
done
[ -f "$DATA/kvstore" ] || fail "the upgraded broker keeps no kvstore"
echo two | kcat -P -b "$BROKER" -t wide -p $((N - 1)) || fail "produce after the restart"
out=$(kcat -C -b "$BROKER" -t wide -p $((N - 1)) -e -q -f '%o %s\n')
[ "$out" = "0 one
1 two" ] || fail "partition $((N - 1)) holds: $out"
stop_broker
