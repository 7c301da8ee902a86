#!/usr/bin/env bash
# A client made to resend batches: kproxy.py cuts the connection each time the broker has
# answered every 25th Produce request (6 times), before the answer reaches the client.
# librdkafka (idempotent, lz4) resends those batches, and whatever else was in flight, on a new
# connection. Afterwards no record is in the log twice, every record is there in produced order,
# and each cut batch was answered as a duplicate with its original offset (every acknowledged
# offset holds the acknowledged record).
# timeout: 180
source "$(dirname "$0")/lib.sh"
COUNT=20000
CUTS=6
PPORT=$(free_port)
PROXY=127.0.0.1:$PPORT
start_broker --set "advertised.listeners=PLAINTEXT://$PROXY" --set log.level=debug
$PY "$ROOT/tests/integration/kproxy.py" "$PPORT" "$PORT" "$TMP/proxy.events" \
    --cut-every 25 --max-cuts $CUTS &
for _ in $(seq 100); do [ -f "$TMP/proxy.events" ] && break; sleep 0.05; done
"$SP" topic create resend -b "$PROXY" --partitions 2 >/dev/null
$PY "$ROOT/tests/integration/idem_producer.py" "$PROXY" resend $COUNT "$TMP/acked.txt" \
    --rate 5000 -X compression.type=lz4 >"$TMP/producer.out" 2>&1 ||
    fail "producer failed: $(tail -20 "$TMP/producer.out")"
tail -1 "$TMP/producer.out"
cuts=$(grep -c '^cut ' "$TMP/proxy.events" || true)
dups=$(grep -c 'event=produce_duplicate' "$BROKER_LOG" || true)
note "the proxy cut $cuts connections after the broker's answer; $dups batches came back as duplicates"
[ "$cuts" -eq $CUTS ] || fail "expected $CUTS cuts, the proxy made $cuts"
[ "$dups" -ge "$cuts" ] || fail "each cut batch should have been resent and recognised"
if grep -q 'event=produce_rejected' "$BROKER_LOG"; then
    grep 'event=produce_rejected' "$BROKER_LOG" | head -3
    fail "the broker rejected a resent batch"
fi
kcat -C -b "$PROXY" -t resend -e -q -f '%p %o %s\n' >"$TMP/stored.txt"
$PY "$ROOT/tests/integration/history.py" --acked "$TMP/acked.txt" --final "$TMP/stored.txt" \
    --values $COUNT --partitions 2 --idempotent --ordered --complete
stop_broker
