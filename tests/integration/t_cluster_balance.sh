#!/usr/bin/env bash
# Preferred-leader balancing in cluster mode (auto.leader.rebalance.enable, default true, with
# leader.imbalance.check.interval.seconds=1): a topic's partition is led by its preferred
# replica (the first of its replicas); that leader killed (-9) during an idempotent acks=all
# produce run, another node leads; restarted, the preferred replica gets the leadership back
# within a few seconds (the handing leader logs the move) and history.py finds no anomaly. With
# auto.leader.rebalance.enable=false nothing moves back. All stop cleanly.
# timeout: 60
source "$(dirname "$0")/lib.sh"

OPTS=(--set leader.imbalance.check.interval.seconds=1)
start_cluster 3 "${OPTS[@]}"
BOOT="127.0.0.1:${CL_PORT[1]},127.0.0.1:${CL_PORT[2]},127.0.0.1:${CL_PORT[3]}"

# leader NODE TOPIC: partition 0's leader as NODE's Metadata names it ("" if unknown)
leader() {
    kcat -L -b "127.0.0.1:${CL_PORT[$1]}" -t "$2" -m 2 2>/dev/null |
        sed -n 's/.*partition 0, leader \(-\{0,1\}[0-9]*\),.*/\1/p' | head -1
}
# preferred NODE TOPIC: the first of partition 0's replicas
preferred() {
    kcat -L -b "127.0.0.1:${CL_PORT[$1]}" -t "$2" -m 2 2>/dev/null |
        sed -n 's/.*partition 0, .*replicas: \([0-9]*\).*/\1/p' | head -1
}
create_topic() { # NODE NAME
    $PY - "127.0.0.1:${CL_PORT[$1]}" "$2" <<'PYEOF'
import sys
from confluent_kafka.admin import AdminClient, NewTopic
a = AdminClient({"bootstrap.servers": sys.argv[1]})
for t, f in a.create_topics([NewTopic(sys.argv[2], 1, 3)], request_timeout=10).items():
    f.result()
PYEOF
}
# wait_leader_is NODE TOPIC WANT SECONDS: until NODE's Metadata names WANT as leader
wait_leader_is() {
    local end=$(( $(date +%s%N) / 1000000 + $4 * 1000 ))
    while :; do
        [ "$(leader "$1" "$2")" = "$3" ] && return 0
        [ $(( $(date +%s%N) / 1000000 )) -lt $end ] || return 1
        sleep 0.05
    done
}

create_topic 1 bal || fail "CreateTopics bal"
pref=""
for _ in $(seq 1 100); do
    pref=$(preferred 1 bal)
    [ -n "$pref" ] && break
    sleep 0.05
done
[ -n "$pref" ] || fail "no replicas for bal"
wait_leader_is 1 bal "$pref" 8 || fail "leader of bal is $(leader 1 bal), not its preferred replica $pref"
note "bal: preferred replica $pref leads"

# ---- kill -9 the preferred leader during a produce run; it gets the leadership back ----
COUNT=12000
$PY "$ROOT/tests/integration/idem_producer.py" "$BOOT" bal $COUNT "$TMP/bal.acked" \
    --partitions 1 --rate 2000 -X acks=all >"$TMP/bal.out" 2>&1 &
PRODUCER=$!
for _ in $(seq 1 400); do
    [ -f "$TMP/bal.acked" ] && [ "$(wc -l <"$TMP/bal.acked")" -ge 2000 ] && break
    kill -0 $PRODUCER 2>/dev/null || fail "producer exited early: $(tail "$TMP/bal.out")"
    sleep 0.05
done
other=$(( pref % 3 + 1 ))
kill9_node "$pref"
new=""
for _ in $(seq 1 100); do
    new=$(leader "$other" bal)
    [ -n "$new" ] && [ "$new" -ge 0 ] && [ "$new" != "$pref" ] && break
    new=""
    sleep 0.05
done
[ -n "$new" ] || fail "no new leader after killing $pref"
note "killed preferred leader $pref at $(wc -l <"$TMP/bal.acked") acks; node $new leads"
sleep 1
start_node "$pref" "${OPTS[@]}"
t0=$(date +%s%N)
wait_leader_is "$other" bal "$pref" 15 || fail "leadership not back on $pref after 15 s: $(leader "$other" bal)"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
grep -q "event=leader_rebalance topic=bal partition=0 from=$new to=$pref .*rc=0" "$TMP/node$new.log" ||
    fail "node $new did not log the move: $(grep leader_rebalance "$TMP/node$new.log")"
note "restarted node $pref leads bal again $ms ms after its start (moved by node $new)"
[ "$ms" -le 10000 ] || fail "took $ms ms"

wait $PRODUCER || fail "producer failed: $(tail -20 "$TMP/bal.out")"
tail -1 "$TMP/bal.out"
timeout 30 kcat -C -b "$BOOT" -t bal -e -q -f '%p %o %s\n' >"$TMP/bal.read" || fail "kcat bal"
$PY "$ROOT/tests/integration/history.py" --acked "$TMP/bal.acked" --final "$TMP/bal.read" \
    --values $COUNT --partitions 1 --idempotent --ordered --complete ||
    fail "history of bal has anomalies"
note "no anomaly in the history of $COUNT records across the kill and the move back"

# ---- auto.leader.rebalance.enable=false: nothing moves back ----
for i in 1 2 3; do stop_node "$i"; done
n0=$(cat "$TMP"/node*.log | grep -c 'event=leader_rebalance' || true)
for i in 1 2 3; do
    start_node "$i" "${OPTS[@]}" --set auto.leader.rebalance.enable=false
done
wait_log "$pref" 'event=cluster_registered' 3 10 || fail "node $pref did not register"
l=""
for _ in $(seq 1 100); do
    l=$(leader "$pref" bal)
    [ -n "$l" ] && [ "$l" -ge 0 ] && break
    sleep 0.05
done
if [ "$l" = "$pref" ]; then
    # move it away by hand: stop the preferred leader (SIGTERM hands leadership over)
    stop_node "$pref"
    start_node "$pref" "${OPTS[@]}" --set auto.leader.rebalance.enable=false
    wait_log "$pref" 'event=cluster_registered' 4 10 || fail "node $pref did not register"
fi
sleep 3
l=$(leader "$other" bal)
[ "$l" != "$pref" ] || fail "leadership moved back to $pref with auto.leader.rebalance.enable=false"
n1=$(cat "$TMP"/node*.log | grep -c 'event=leader_rebalance' || true)
[ "$n1" = "$n0" ] || fail "moves logged with auto.leader.rebalance.enable=false"
note "auto.leader.rebalance.enable=false: node $l keeps leading, no move logged"

for i in 1 2 3; do stop_node "$i"; done
grep -h 'level=error' "$TMP"/node*.log && fail "errors logged"
note "all nodes stopped cleanly"
