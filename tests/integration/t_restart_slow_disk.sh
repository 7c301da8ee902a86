#!/usr/bin/env bash
# A restart whose replicas are slow to open still starts. At tens of thousands of partitions on
# a cold page cache, opening every replica (each reads its raft-hard-state from disk) took longer
# than the node's 10 s bound on registering with its own controller, and the broker gave up:
# "the node did not register with its own controller within 10000 ms". Here a shim
# (build/itest/slow_open.so) makes each read of raft-hard-state take 50 ms, so 220 partitions
# take 11 s to open; the bound must count from the end of that work, not from the start.
# timeout: 150
source "$(dirname "$0")/lib.sh"
SHIM=$ITEST_BIN/slow_open.so
[ -f "$SHIM" ] || fail "$SHIM is missing (make all builds it)"
N=220
start_broker --set admin.listener= --set schema.registry.listener=
"$SP" topic create wide --partitions $N -b "$BROKER" >/dev/null || fail "topic create wide"
echo one | kcat -P -b "$BROKER" -t wide -p $((N - 1)) || fail "produce before the restart"
stop_broker

START_WAIT_S=90 LD_PRELOAD=$SHIM SLOW_OPEN_NAME=raft-hard-state SLOW_OPEN_MS=50 \
    start_broker --set admin.listener= --set schema.registry.listener=
grep 'event=broker_started' "$BROKER_LOG" | tail -1 | grep -q "partitions=$N " ||
    fail "restart did not report $N partitions: $(grep broker_started "$BROKER_LOG" | tail -1)"
# the opens really were slow: the replicas took longer than the bound to open
first=$(grep 'event=cluster_started' "$BROKER_LOG" | tail -1 | sed -n 's/^ts=\([^ ]*\) .*/\1/p')
last=$(grep 'event=cluster_replica_added' "$BROKER_LOG" | tail -1 | sed -n 's/^ts=\([^ ]*\) .*/\1/p')
took=$(($(date -d "$last" +%s%3N) - $(date -d "$first" +%s%3N)))
[ "$took" -gt 10000 ] || fail "replicas opened in $took ms: the shim did not slow them past the bound"
# every partition is led and serves: the record from before the restart, and a new one
deadline=$((SECONDS + 60))
until [ "$(kcat -L -b "$BROKER" -t wide 2>/dev/null | grep -c 'leader 1,')" -eq $N ]; do
    [ $SECONDS -lt $deadline ] || fail "not every partition of wide has a leader after 60 s"
    sleep 0.2
done
echo two | kcat -P -b "$BROKER" -t wide -p $((N - 1)) || fail "produce after the restart"
out=$(kcat -C -b "$BROKER" -t wide -p $((N - 1)) -e -q -f '%o %s\n')
[ "$out" = "0 one
1 two" ] || fail "partition $((N - 1)) holds: $out"
stop_broker
