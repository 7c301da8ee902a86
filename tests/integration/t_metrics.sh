#!/usr/bin/env bash
# The HTTP admin listener: /metrics parses with a strict Prometheus text-format parser
# (metrics_check.py) and has every family with its type; request counts, errors and latency
# move as requests are made (a long-polling Fetch is measured with its wait); a paused group's
# lag in /metrics and /v1/groups equals `streampulse group describe`'s; label values with
# quotes, backslashes, line feeds and non-ASCII parse back; /v1/topics is valid JSON that
# agrees with /metrics; /healthz is 200 "ok", and 503 naming the partition fenced by an fsync
# error (its fsync error counter moves). Bad HTTP (garbage, a Kafka frame, TLS, oversized
# heads, bodies, unknown methods and paths, 40 slowloris connections) gets 4xx or a close while
# the broker keeps serving Kafka clients; admin.listener= turns the listener off.
# timeout: 180
source "$(dirname "$0")/lib.sh"
MC=$ROOT/tests/integration/metrics_check.py

start_broker
[ -n "$ADMIN" ] || fail "no admin=host:port in the startup line: $(grep broker_started "$BROKER_LOG")"
export STREAMPULSE_BROKERS=$BROKER
note "admin listener at $ADMIN"
$PY "$MC" health "$ADMIN" 200 ok || fail "/healthz"
# an admin.listener set explicitly must work: a busy one refuses startup, naming the key
rc=0
"$SP" serve --set "log.dirs=$TMP/other" --set listeners=PLAINTEXT://127.0.0.1:0 \
    --set "admin.listener=$ADMIN" >"$TMP/busy.out" 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -q "cannot listen on admin.listener" "$TMP/busy.out" ||
    fail "busy admin.listener: exit $rc, $(cat "$TMP/busy.out")"

# --- families, types, and requests with known outcomes ---
"$SP" topic create mt --partitions 3 --config retention.ms=3600000 >/dev/null
$PY "$MC" snapshot "$ADMIN" "$TMP/before.json"
seq -f "r%g" 1 300 | kcat -P -b "$BROKER" -t mt -X acks=all -X linger.ms=5
$PY "$MC" requests "$ADMIN" "$TMP/before.json" "$BROKER" || fail "request counters"
$PY "$MC" families "$ADMIN" || fail "families"
$PY "$MC" topics "$ADMIN" mt 3 300 || fail "/v1/topics"
"$SP" topic create idle --partitions 1 >/dev/null
$PY "$MC" longpoll "$ADMIN" "$BROKER" idle || fail "long-poll latency"

# --- a paused group: lag in /metrics == streampulse group describe ---
"$SP" topic create lagt --partitions 2 >/dev/null
seq -f "a%g" 1 60 | kcat -P -b "$BROKER" -t lagt -p 0
seq -f "b%g" 1 40 | kcat -P -b "$BROKER" -t lagt -p 1
"$ITEST_BIN/rdkafka_group" "$BROKER" lag-g lagt "$TMP/c" "$TMP/stop" --pause-after 100 2>"$TMP/c.err" &
C=$!
for _ in $(seq 1 200); do grep -q '^paused' "$TMP/c.events" 2>/dev/null && break; sleep 0.05; done
grep -q '^paused committed' "$TMP/c.events" || fail "consumer did not commit and pause: $(cat "$TMP/c.events" "$TMP/c.err")"
seq -f "a%g" 61 160 | kcat -P -b "$BROKER" -t lagt -p 0
seq -f "b%g" 41 90 | kcat -P -b "$BROKER" -t lagt -p 1
"$SP" group describe lag-g >"$TMP/describe" || fail "describe failed"
cat "$TMP/describe"
$PY "$MC" lag "$ADMIN" lag-g "$TMP/describe" || fail "lag differs from group describe"
touch "$TMP/stop"; wait $C || fail "consumer failed"

# --- label and JSON escaping of client-chosen group ids ---
"$SP" topic create esc --partitions 1 >/dev/null
$PY "$MC" escaping "$ADMIN" "$BROKER" || fail "escaping"

# --- bad HTTP, while Kafka clients are served ---
$PY "$MC" badhttp "$ADMIN" || fail "bad HTTP"
$PY "$MC" slowloris "$ADMIN" 40 13 >"$TMP/slow.out" 2>&1 &
SLOW=$!
sleep 1
seq -f "during-slowloris-%g" 1 100 | kcat -P -b "$BROKER" -t served -X acks=all
[ "$(kcat -C -b "$BROKER" -t served -e -q | wc -l)" -eq 100 ] || fail "Kafka not served during the slowloris"
wait $SLOW || { cat "$TMP/slow.out"; fail "slowloris"; }
cat "$TMP/slow.out"
$PY "$MC" health "$ADMIN" 200 ok || fail "/healthz after the slowloris"
$PY "$MC" families "$ADMIN" >/dev/null || fail "/metrics after the abuse"
kill -0 "$BROKER_PID" || fail "broker died"

# --- an fsync error fences a partition: /healthz says so, the counters move ---
echo warm | kcat -P -b "$BROKER" -t fsync-eio -X acks=all
strace -f -qq -o /dev/null -e trace=fdatasync -e inject=fdatasync:error=EIO -p "$BROKER_PID" &
STRACE=$!
sleep 1
$PY "$ROOT/tests/integration/faulty_producer.py" "$BROKER" fsync-eio 2 during "$TMP/during.txt"
kill "$STRACE"; wait "$STRACE" 2>/dev/null || true
grep -q '^err KAFKA_STORAGE_ERROR' "$TMP/during.txt" || fail "no storage error under injected EIO"
$PY "$MC" health "$ADMIN" 503 "fenced: partition fsync-eio-0" || fail "/healthz while fenced"
$PY - "$ADMIN" "$ROOT/tests/integration" <<'PY' || fail "fenced metrics"
import sys
sys.path.insert(0, sys.argv[2])
import metrics_check as m
f = m.scrape(sys.argv[1])
m.check(m.value(f, "streampulse_partition_fenced", topic="fsync-eio", partition="0") == 1, "fenced gauge is 1")
m.check(m.value(f, "streampulse_partition_fenced", topic="mt", partition="0") == 0, "others are not fenced")
m.check(m.value(f, "streampulse_storage_fsync_errors_total") >= 1, "fsync errors counted")
m.check(m.value(f, "streampulse_kafka_request_errors_total", api="Produce") >= 1, "failed produces are errors")
sys.exit(1 if m.failures else 0)
PY
stop_broker

# --- admin.listener= turns it off ---
start_broker --set admin.listener=
[ -z "$ADMIN" ] || fail "admin listener still on: $ADMIN"
grep broker_started "$BROKER_LOG" | tail -1 | grep -q ' admin=off ' || fail "startup line lacks admin=off"
echo still | kcat -P -b "$BROKER" -t served
stop_broker
