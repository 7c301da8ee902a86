#!/usr/bin/env bash
# Preferred-leader balancing in cluster mode (auto.leader.rebalance.enable, default true, with
# leader.imbalance.check.interval.seconds=1): a topic's partition is led by its preferred
# replica (the first of its replicas); that leader killed (-9) during an idempotent acks=all
# produce run, another node leads; restarted, the preferred replica gets the leadership back
# within a few seconds (the handing leader logs the move) and history.py finds no anomaly. With
# auto.leader.rebalance.enable=false nothing moves back, until `streampulse leader-election`
# (ElectLeaders), asked through the third node, has the leader hand it back: Metadata of that node
# names the preferred replica right after; asked again: not needed; every partition: none listed;
# UNCLEAN: not needed; an unknown topic: UNKNOWN_TOPIC_OR_PARTITION; elect_raw.py checks v0-2 on
# the wire; with two nodes stopped UNCLEAN is ELIGIBLE_LEADERS_NOT_AVAILABLE. All stop cleanly.
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

# ---- streampulse leader-election (ElectLeaders) moves it back on demand ----
third=$(( 6 - pref - l ))
# elect NODE ARGS...: `streampulse leader-election` through NODE (output in $TMP/elect.out)
elect() {
    local n=$1
    shift
    "$SP" leader-election -b "127.0.0.1:${CL_PORT[$n]}" --timeout 5 "$@" >"$TMP/elect.out" 2>&1
}
# asked at node $third, which leads nothing: the question goes to node $l, which hands bal-0 to
# node $pref; the preferred replica must have caught up first (PREFERRED_LEADER_NOT_AVAILABLE
# until then, as Kafka answers for a replica out of the ISR)
elected=""
for _ in $(seq 1 100); do
    if elect "$third" --election-type preferred --topic bal --partition 0; then elected=1; break; fi
    grep -q 'PREFERRED_LEADER_NOT_AVAILABLE.*has not caught up' "$TMP/elect.out" ||
        fail "leader-election: $(cat "$TMP/elect.out")"
    sleep 0.1
done
[ -n "$elected" ] || fail "node $pref never caught up: $(cat "$TMP/elect.out")"
grep -qx 'Successfully completed leader election (PREFERRED) for partitions bal-0' \
    "$TMP/elect.out" || fail "leader-election said: $(cat "$TMP/elect.out")"
got=$(leader "$third" bal)
[ "$got" = "$pref" ] || fail "right after the election node $third's Metadata names $got, not $pref"
grep -q "event=elect_preferred topic=bal partition=0 from=$l to=$pref .*rc=0" "$TMP/node$l.log" ||
    fail "node $l did not log the transfer: $(grep elect_ "$TMP/node$l.log")"
note "leader-election through node $third: node $l handed bal-0 to its preferred replica $pref"
elect 1 --election-type preferred --topic bal --partition 0 ||
    fail "second election: $(cat "$TMP/elect.out")"
grep -qx 'Valid replica already elected for partitions bal-0' "$TMP/elect.out" ||
    fail "second election said: $(cat "$TMP/elect.out")"
elect 2 --election-type preferred --all-topic-partitions || fail "all: $(cat "$TMP/elect.out")"
[ ! -s "$TMP/elect.out" ] || fail "--all-topic-partitions listed: $(cat "$TMP/elect.out")"
elect 3 --election-type unclean --topic bal || fail "unclean: $(cat "$TMP/elect.out")"
grep -qx 'Valid replica already elected for partitions bal-0' "$TMP/elect.out" ||
    fail "unclean said: $(cat "$TMP/elect.out")"
if elect 1 --election-type preferred --topic nope --partition 0; then fail "nope-0 was elected"; fi
grep -qx 'Error completing leader election (PREFERRED) for partition: nope-0: UNKNOWN_TOPIC_OR_PARTITION: No such topic as nope' \
    "$TMP/elect.out" || fail "unknown topic said: $(cat "$TMP/elect.out")"
grep -q '1 replica(s) could not be elected' "$TMP/elect.out" || fail "$(cat "$TMP/elect.out")"
rc=0
elect 1 --all-topic-partitions || rc=$?
[ $rc -eq 2 ] && grep -q 'missing required option: --election-type' "$TMP/elect.out" ||
    fail "no --election-type: exit $rc, $(cat "$TMP/elect.out")"
note "again: valid replica already elected; every partition: none listed; UNCLEAN: not needed; nope-0: UNKNOWN_TOPIC_OR_PARTITION (exit 1); usage: exit 2"
$PY "$ROOT/tests/integration/elect_raw.py" "127.0.0.1:${CL_PORT[$l]}" bal ||
    fail "ElectLeaders on the wire"

# ---- no leader: an UNCLEAN election is refused, with the reason ----
stop_node "$pref"
stop_node "$l"
unclean_refused() {
    ! elect "$third" --election-type unclean --topic bal --partition 0 &&
        grep -q 'bal-0: ELIGIBLE_LEADERS_NOT_AVAILABLE: bal-0 has no leader, and none can be elected uncleanly' \
            "$TMP/elect.out"
}
WAIT_S=5 poll_until unclean_refused || fail "UNCLEAN without a leader said: $(cat "$TMP/elect.out")"
note "nodes $pref and $l stopped: UNCLEAN at node $third is ELIGIBLE_LEADERS_NOT_AVAILABLE"

stop_node "$third"
grep -h 'level=error' "$TMP"/node*.log && fail "errors logged"
note "all nodes stopped cleanly"
