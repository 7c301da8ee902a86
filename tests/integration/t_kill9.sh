#!/usr/bin/env bash
# kill -9 during an acks=all produce loop, three times in a row: after each restart the broker
# starts without manual repair, and every acknowledged record is at its acknowledged offset.
# timeout: 240
source "$(dirname "$0")/lib.sh"
start_broker --set num.partitions=3
kcat -L -b "$BROKER" -t crash >/dev/null   # auto-create
$PY "$ROOT/tests/integration/acked_producer.py" "$BROKER" crash "$TMP/acked.txt" "$TMP/stop" \
    >"$TMP/producer.out" 2>&1 &
PRODUCER=$!
for round in 1 2 3; do
    sleep "1.$((round * 3 % 9))" # a different moment each round, the same each run
    before=$(wc -l <"$TMP/acked.txt" 2>/dev/null || echo 0)
    kill9_broker
    note "round $round: killed the broker with $before records acknowledged so far"
    sleep 0.3
    start_broker
    grep 'event=broker_started' "$BROKER_LOG" | tail -1 | grep -q 'clean_shutdown=false' ||
        fail "restart after kill -9 not seen as unclean"
done
sleep 1.5
touch "$TMP/stop"
wait $PRODUCER || fail "producer failed: $(cat "$TMP/producer.out")"
cat "$TMP/producer.out"
kcat -C -b "$BROKER" -t crash -e -q -f '%p %o %s\n' >"$TMP/log.txt"
n=$(wc -l <"$TMP/acked.txt")
[ "$n" -gt 1000 ] || fail "too few acknowledged records ($n) to mean anything"
$PY "$ROOT/tests/integration/history.py" --acked "$TMP/acked.txt" --final "$TMP/log.txt"
stop_broker
