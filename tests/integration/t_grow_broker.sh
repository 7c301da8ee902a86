#!/usr/bin/env bash
# A single node grows: node 1 starts alone (no controller.quorum.voters; cluster.listener at a
# fixed port) and takes records; node 2, started with only controller.quorum.bootstrap.servers
# pointing at node 1, learns the cluster from it, registers and becomes a broker of it: both
# nodes list two live brokers, a topic of replication factor 2 spreads over both, an idempotent
# acks=all producer through node 2 loses and repeats nothing, node 1's old topic reads through
# node 2, and the replicas are byte-identical, also after node 2 is killed (-9) and restarts
# into the same cluster from its quorum.state (not asking the bootstrap server again). Bad
# bootstrap settings are refused with the reason: both voters and bootstrap servers, no
# cluster.listener, a node.id the quorum's voter has, and nobody answering.
# timeout: 90
source "$(dirname "$0")/lib.sh"

init_cluster 3
CL_VOTERS="" # node 1 is standalone: the only voter of a quorum of its own
start_node 1 --set "cluster.listener=127.0.0.1:${CL_CPORT[1]}"
wait_log 1 'event=cluster_registered' 1 10 || fail "node 1 did not register with itself"
grep -q 'event=cluster_started node=1 .*role=standalone' "$TMP/node1.log" ||
    fail "node 1 is not standalone: $(grep cluster_started "$TMP/node1.log")"
seq 1 300 | kcat -P -b "127.0.0.1:${CL_PORT[1]}" -t before -X acks=all ||
    fail "kcat could not produce to node 1"
note "node 1 alone took 300 records on topic before"

# ---- bad settings, each refused with its reason, nothing started ----
BOOT="controller.quorum.bootstrap.servers=127.0.0.1:${CL_CPORT[1]}"
refused() { # WHAT PATTERN ARGS...: serve must exit non-zero and say PATTERN
    local what=$1 pat=$2
    shift 2
    if timeout 20 "$SP" serve --set "log.dirs=$TMP/bad" --set "listeners=PLAINTEXT://127.0.0.1:0" \
        --set admin.listener= "$@" >"$TMP/bad.log" 2>&1; then
        fail "serve started with $what"
    fi
    grep -q -- "$pat" "$TMP/bad.log" || fail "refusal of $what: $(cat "$TMP/bad.log")"
}
refused "voters and bootstrap servers" "not both" --set node.id=7 --set "$BOOT" \
    --set "controller.quorum.voters=7@127.0.0.1:$(free_port)"
refused "bootstrap servers without cluster.listener" "needs cluster.listener" \
    --set node.id=7 --set "$BOOT"
refused "a wildcard cluster.listener" "needs cluster.listener" --set node.id=7 --set "$BOOT" \
    --set "cluster.listener=0.0.0.0:$(free_port)"
refused "a malformed bootstrap list" "is not host:port" --set node.id=7 \
    --set "controller.quorum.bootstrap.servers=127.0.0.1:${CL_CPORT[1]},nowhere" \
    --set "cluster.listener=127.0.0.1:$(free_port)"
refused "node.id 1, the voter's" "is already voter 1" --set node.id=1 --set "$BOOT" \
    --set "cluster.listener=127.0.0.1:$(free_port)"
DEAD=$(free_port)
refused "nobody at the bootstrap address" "no answer from controller.quorum.bootstrap.servers=127.0.0.1:$DEAD" \
    --set node.id=7 --set "controller.quorum.bootstrap.servers=127.0.0.1:$DEAD" \
    --set controller.quorum.bootstrap.timeout.ms=500 --set "cluster.listener=127.0.0.1:$(free_port)"
refused "a Kafka listener as bootstrap server" "not a StreamPulse cluster listener" \
    --set node.id=7 --set "controller.quorum.bootstrap.servers=127.0.0.1:${CL_PORT[1]}" \
    --set controller.quorum.bootstrap.timeout.ms=500 --set "cluster.listener=127.0.0.1:$(free_port)"
kill -0 "${CL_PID[1]}" || fail "node 1 died answering the bad bootstraps"
note "bad bootstrap settings refused with their reasons"

# ---- node 2 joins through node 1's cluster listener ----
start_node 2 --set "cluster.listener=127.0.0.1:${CL_CPORT[2]}" --set "$BOOT"
wait_log 2 'event=cluster_registered' 1 15 || fail "node 2 did not register"
grep -q "event=cluster_bootstrapped node=2 .*voters=1 leader=1" "$TMP/node2.log" ||
    fail "node 2 did not learn the quorum from node 1: $(grep -E 'cluster_(bootstrapped|started)' "$TMP/node2.log")"
grep -q 'event=cluster_started node=2 .*role=observer' "$TMP/node2.log" || fail "node 2 is not a broker (observer)"
cluster_id() { # NODE: the cluster id its Metadata gives (librdkafka)
    $PY -c 'import sys; from confluent_kafka.admin import AdminClient
print(AdminClient({"bootstrap.servers": sys.argv[1]}).list_topics(timeout=10).cluster_id or "")' \
        "127.0.0.1:${CL_PORT[$1]}" 2>/dev/null || true
}
brokers() {
    kcat -L -b "127.0.0.1:${CL_PORT[$1]}" -m 2 2>/dev/null |
        sed -n 's/^ *broker \([0-9]*\) at .*/\1/p' | sort -n | xargs
}
for i in 1 2; do
    ok=""
    for _ in $(seq 1 100); do
        [ "$(brokers "$i")" = "1 2" ] && { ok=1; break; }
        sleep 0.05
    done
    [ -n "$ok" ] || fail "node $i lists brokers '$(brokers "$i")', want '1 2'"
done
[ -n "$(cluster_id 1)" ] && [ "$(cluster_id 1)" = "$(cluster_id 2)" ] ||
    fail "the nodes give different cluster ids: '$(cluster_id 1)' / '$(cluster_id 2)'"
note "node 2 bootstrapped from node 1: both list brokers 1 2, one cluster id"

# ---- a topic over both brokers ----
"$SP" topic create spread --partitions 2 --replication-factor 2 -b "127.0.0.1:${CL_PORT[2]}" ||
    fail "topic create spread (rf 2) through node 2"
layout() {
    kcat -L -b "127.0.0.1:${CL_PORT[$1]}" -t spread -m 2 2>/dev/null |
        sed -n 's/.*partition \([0-9]*\), leader \(-\{0,1\}[0-9]*\), replicas: \([0-9,]*\),.*/\1 \2 \3/p' | sort -n
}
ok=""
for _ in $(seq 1 100); do
    layout 2 >"$TMP/layout"
    [ "$(awk '$2 >= 0 && ($3 == "1,2" || $3 == "2,1")' "$TMP/layout" | wc -l)" = 2 ] && { ok=1; break; }
    sleep 0.05
done
[ -n "$ok" ] || fail "spread is not on both brokers with leaders: $(cat "$TMP/layout")"
COUNT=3000
$PY "$ROOT/tests/integration/idem_producer.py" "127.0.0.1:${CL_PORT[2]}" spread $COUNT "$TMP/spread.acked" \
    --partitions 2 -X acks=all >"$TMP/spread.out" 2>&1 || fail "producer via node 2: $(tail "$TMP/spread.out")"
timeout 30 kcat -C -b "127.0.0.1:${CL_PORT[1]}" -t spread -e -q -f '%p %o %s\n' >"$TMP/spread.read" ||
    fail "kcat spread through node 1"
$PY "$ROOT/tests/integration/history.py" --acked "$TMP/spread.acked" --final "$TMP/spread.read" \
    --values $COUNT --partitions 2 --idempotent --ordered --complete || fail "history of spread"
[ "$(timeout 30 kcat -C -b "127.0.0.1:${CL_PORT[2]}" -t before -e -q | xargs)" = "$(seq 1 300 | xargs)" ] ||
    fail "node 1's topic before does not read whole through node 2"
identical() { # PARTITIONS...: every replica of spread-P holds the same bytes
    local p same
    for _ in $(seq 1 200); do
        same=1
        for p in "$@"; do
            [ "$(cat "$TMP"/data1/spread-$p/*.log | md5sum)" = "$(cat "$TMP"/data2/spread-$p/*.log | md5sum)" ] ||
                { same=0; break; }
        done
        [ $same = 1 ] && return 0
        sleep 0.05
    done
    return 1
}
identical 0 1 || { ls -l "$TMP"/data*/spread-*/; fail "the replicas of spread differ"; }
note "$COUNT acks=all idempotent records through node 2 on rf 2, read through node 1; identical replicas"

# ---- node 2 killed: it restarts into the same cluster and catches up ----
kill9_node 2
# node 1 is the metadata quorum on its own: its own topics go on without node 2 (spread, with two
# voters per partition, waits for it: a Raft group of two needs both)
seq 301 400 | kcat -P -b "127.0.0.1:${CL_PORT[1]}" -t before -X acks=all ||
    fail "node 1 refused records on its own topic while node 2 is down"
start_node 2 --set "cluster.listener=127.0.0.1:${CL_CPORT[2]}" --set "$BOOT"
# it finds its cluster in its quorum.state, without asking the bootstrap server again
wait_log 2 'event=cluster_registered' 2 15 || fail "node 2 did not register again"
[ "$(grep -c 'event=cluster_bootstrapped' "$TMP/node2.log")" = 1 ] ||
    fail "node 2 asked the bootstrap servers again instead of reading its quorum.state"
grep -q '^cluster.id=' "$TMP/data2/quorum.state" || fail "node 2 has no quorum.state"
wait_log 2 'event=cluster_registered' 2 15 || fail "node 2 did not register again"
$PY "$ROOT/tests/integration/idem_producer.py" "127.0.0.1:${CL_PORT[1]}" spread 500 "$TMP/spread2.acked" \
    --partitions 2 -X acks=all >"$TMP/spread2.out" 2>&1 || fail "producer via node 1 after node 2's restart"
identical 0 1 || { ls -l "$TMP"/data*/spread-*/; fail "node 2 did not catch up after its restart"; }
[ "$(timeout 30 kcat -C -b "127.0.0.1:${CL_PORT[2]}" -t before -e -q | xargs)" = "$(seq 1 400 | xargs)" ] ||
    fail "before does not read whole through node 2 after its restart"
note "node 2 killed (node 1 went on alone), restarted: bootstrapped again and caught up, replicas identical"

for i in 2 1; do stop_node "$i"; done
grep -h 'level=error' "$TMP"/node*.log && fail "errors logged"
note "both nodes stopped cleanly"
