#!/usr/bin/env bash
# Idempotent producer (librdkafka 2.0.2 through python3-confluent-kafka, enable.idempotence=true)
# writes 60,000 records over 2 partitions while the broker is killed with kill -9 and restarted
# twice. Afterwards every record is in the log exactly once, in produced order per partition,
# and every offset the client was given holds its record.
#
# The client reaches the broker through kproxy.py. Just before each kill the proxy freezes:
# it holds the broker's responses until it has held at least one Produce response, so the
# broker dies having appended (and fsynced) batches that the client never heard of. The
# client resends them to the restarted broker, which must answer them as duplicates from the
# producer state it recovered (checked in its debug log, per run).
# timeout: 240
source "$(dirname "$0")/lib.sh"
COUNT=60000
PPORT=$(free_port)
PROXY=127.0.0.1:$PPORT
FREEZE=$TMP/freeze
BOPTS=(--set "advertised.listeners=PLAINTEXT://$PROXY" --set log.level=debug
       --set log.segment.bytes=262144)
start_broker --set num.partitions=2 "${BOPTS[@]}"
$PY "$ROOT/tests/integration/kproxy.py" "$PPORT" "$PORT" "$TMP/proxy.events" \
    --freeze-file "$FREEZE" &
for _ in $(seq 100); do [ -f "$TMP/proxy.events" ] && break; sleep 0.05; done
"$SP" topic create idem -b "$PROXY" --partitions 2 >/dev/null
$PY "$ROOT/tests/integration/idem_producer.py" "$PROXY" idem $COUNT "$TMP/acked.txt" \
    --rate 4000 >"$TMP/producer.out" 2>&1 &
PRODUCER=$!

acked() { if [ -f "$TMP/acked.txt" ]; then wc -l <"$TMP/acked.txt"; else echo 0; fi; }
wait_for() { # DESCRIPTION COMMAND...: polls COMMAND for up to 30 s
    local what=$1
    shift
    for _ in $(seq 1 600); do
        "$@" && return 0
        kill -0 $PRODUCER 2>/dev/null || fail "producer exited early: $(cat "$TMP/producer.out")"
        sleep 0.05
    done
    fail "timed out waiting for $what"
}
acked_at_least() { [ "$(acked)" -ge "$1" ]; }
holding() { [ "$(grep -c '^holding produce' "$TMP/proxy.events")" -ge "$1" ]; }

round=0
for at in 15000 35000; do
    round=$((round + 1))
    wait_for "$at acknowledged records" acked_at_least $at
    touch "$FREEZE"
    wait_for "a held Produce response" holding $round
    kill9_broker
    note "killed the broker at $(acked) acknowledged records, holding a Produce response"
    rm -f "$FREEZE"
    sleep 0.3
    start_broker "${BOPTS[@]}"
    grep 'event=broker_started' "$BROKER_LOG" | tail -1 | grep -q 'clean_shutdown=false' ||
        fail "restart after kill -9 not seen as unclean"
done
wait $PRODUCER || fail "producer failed: $(tail -20 "$TMP/producer.out")"
tail -1 "$TMP/producer.out"
grep -q 'event=producer_state_loaded' "$BROKER_LOG" || fail "no producer state was recovered"
# duplicates answered by each run of the broker: a run starts when its Kafka listener opens
# (clients may be served before the run logs broker_started, which waits for its registration)
dups=$(awk '/event=listener_open name=PLAINTEXT / { run++ } /event=produce_duplicate/ { n[run]++ }
            END { printf "%d %d %d", n[1], n[2], n[3] }' "$BROKER_LOG")
note "resent batches answered as duplicates by the first, second and third run: $dups"
read -r _ d2 d3 <<<"$dups"
[ "$d2" -ge 1 ] && [ "$d3" -ge 1 ] ||
    fail "each restarted broker should have answered resent batches from its recovered state"
kcat -C -b "$PROXY" -t idem -e -q -f '%p %o %s\n' >"$TMP/stored.txt"
$PY "$ROOT/tests/integration/history.py" --acked "$TMP/acked.txt" --final "$TMP/stored.txt" \
    --values $COUNT --partitions 2 --idempotent --ordered --complete
stop_broker
