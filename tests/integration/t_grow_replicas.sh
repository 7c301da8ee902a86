#!/usr/bin/env bash
# Growing a single node's partitions: node 1 alone takes records on topic early (rf 1) and a
# group's synchronous commits; nodes 2 and 3 join (controller.quorum.bootstrap.servers); while
# an idempotent acks=all producer keeps writing to orders and a consumer group (g2, synchronous
# commits every 50 records) reads it, `streampulse topic alter
# --replication-factor 3` moves orders, early and __consumer_offsets to three replicas each
# (AlterPartitionReassignments: the new replicas catch up as Raft learners, then become voters).
# Nodes 2 and 3 are made voters of the metadata quorum first (`cluster voters add`).
# Every replica's log is then byte-identical, Metadata lists 3 replicas in sync, and nothing is
# being reassigned (ListPartitionReassignments, through the CLI and @platformatic/kafka). Then
# node 1 is killed (-9): every partition of orders gets a new leader, a topic can still be
# created, the producer finishes, history.py finds nothing lost or duplicated, early reads
# whole, g1's committed offsets are intact on the survivors, and g2 read every record and
# committed the log end. Node 1 restarts, `cluster decommission 1` moves every replica off it
# and takes it out of the voters, and it is stopped: nodes 2 and 3 lead every partition (the
# topic created while node 1 was down included), take writes, and hold identical logs.
# Refusals: more replicas than brokers, an unknown topic, and (platformatic) an unknown broker,
# a duplicate replica, a cancel of nothing, an unknown partition, each with Kafka's code.
# timeout: 240
source "$(dirname "$0")/lib.sh"

start_first_node 3
"$SP" topic create early orders --partitions 2 --replication-factor 1 -b "$B1" >/dev/null ||
    fail "topic create on node 1"
EARLY=100000
seq 1 $EARLY | kcat -P -b "$B1" -t early -X acks=all -X batch.num.messages=1000 ||
    fail "kcat could not produce to node 1"
$PY "$ROOT/tests/integration/cluster_group.py" consume "$B1" early g1 "$TMP/g1.read" $EARLY \
    >"$TMP/g1.out" 2>&1 || fail "group g1 on node 1: $(tail -3 "$TMP/g1.out")"
# every commit's offsets merged: the last per partition
COMMITTED=$($PY -c 'import json,sys
d = {}
for line in open(sys.argv[1]):
    d.update(json.loads(line))
print(json.dumps(d, sort_keys=True))' "$TMP/g1.read.commits")
[ "$($PY -c 'import json,sys; print(sum(json.loads(sys.argv[1]).values()))' "$COMMITTED")" = $EARLY ] ||
    fail "g1 committed $COMMITTED, want $EARLY records' worth"
note "node 1 alone: $EARLY acks=all records on early, group g1 committed $COMMITTED synchronously"

BOOT="controller.quorum.bootstrap.servers=127.0.0.1:${CL_CPORT[1]}"
for i in 2 3; do start_node "$i" --set "cluster.listener=127.0.0.1:${CL_CPORT[$i]}" --set "$BOOT"; done
for i in 2 3; do wait_log "$i" 'event=cluster_registered' 1 15 || fail "node $i did not register"; done
brokers() { kcat -L -b "127.0.0.1:${CL_PORT[$1]}" -m 2 2>/dev/null | sed -n 's/^ *broker \([0-9]*\) at .*/\1/p' | sort -n | xargs; }
ok=""
for _ in $(seq 1 100); do
    [ "$(brokers 1)" = "1 2 3" ] && { ok=1; break; }
    sleep 0.05
done
[ -n "$ok" ] || fail "node 1 lists brokers '$(brokers 1)', want '1 2 3'"
note "nodes 2 and 3 joined"
for i in 2 3; do
    "$SP" cluster voters add $i -b "$B1" >"$TMP/voters.out" 2>&1 ||
        fail "cluster voters add $i: $(cat "$TMP/voters.out")"
done
note "nodes 2 and 3 are voters of the metadata quorum"

# ---- refusals, before anything moves ----
refuse() { # WHAT PATTERN ARGS...: the CLI must fail and say PATTERN
    local what=$1 pat=$2
    shift 2
    if "$SP" topic alter "$@" >"$TMP/refuse.out" 2>&1; then fail "topic alter accepted $what"; fi
    grep -q -- "$pat" "$TMP/refuse.out" || fail "refusal of $what: $(cat "$TMP/refuse.out")"
}
refuse "more replicas than brokers" "more than the 3 brokers" orders --replication-factor 4 -b "$B2"
refuse "an unknown topic" "does not exist" nosuch --replication-factor 2 -b "$B2"

# ---- grow while an idempotent producer writes ----
COUNT=6000
$PY "$ROOT/tests/integration/idem_producer.py" "$B2" orders $COUNT "$TMP/orders.acked" \
    --partitions 2 --rate 400 -X acks=all >"$TMP/orders.out" 2>&1 &
PROD=$!
$PY "$ROOT/tests/integration/cluster_group.py" consume "$B3" orders g2 "$TMP/g2.read" 1000000 \
    >"$TMP/g2.out" 2>&1 &
CONS=$!
wait_acked() { # N: until the producer has N acknowledgements (30 s)
    for _ in $(seq 1 600); do
        [ -f "$TMP/orders.acked" ] && [ "$(wc -l <"$TMP/orders.acked")" -ge "$1" ] && return 0
        sleep 0.05
    done
    return 1
}
wait_acked 500 || fail "the producer got no 500 acknowledgements: $(tail -3 "$TMP/orders.out")"
for t in orders early __consumer_offsets; do
    "$SP" topic alter "$t" --replication-factor 3 -b "$B2" --timeout 30 >"$TMP/alter-$t.out" 2>&1 ||
        fail "topic alter $t --replication-factor 3: $(cat "$TMP/alter-$t.out")"
    grep -q "now has replication factor 3" "$TMP/alter-$t.out" || fail "alter $t: $(cat "$TMP/alter-$t.out")"
done
"$SP" topic alter orders --replication-factor 3 -b "$B2" >"$TMP/again.out" 2>&1
grep -q "already has replication factor 3" "$TMP/again.out" ||
    fail "a second alter to 3 is not a no-op: $(cat "$TMP/again.out")"
note "orders, early and __consumer_offsets grew to 3 replicas while the producer ran"

# every partition: 3 replicas, all in sync, in every node's Metadata
for t in orders early; do
    for i in 1 2 3; do
        ok=""
        for _ in $(seq 1 200); do
            kcat -L -b "127.0.0.1:${CL_PORT[$i]}" -t $t -m 2 2>/dev/null |
                sed -n 's/.*partition \([0-9]*\), leader \([0-9-]*\), replicas: \([0-9,]*\), isrs: \([0-9,]*\).*/\1 \2 \3 \4/p' >"$TMP/layout"
            [ "$(awk '$2 >= 1 && split($3, a, ",") == 3 && split($4, b, ",") == 3' "$TMP/layout" | wc -l)" = 2 ] &&
                { ok=1; break; }
            sleep 0.05
        done
        [ -n "$ok" ] || fail "node $i's Metadata for $t: $(cat "$TMP/layout")"
    done
done
node "$NODE_DIR/platformatic_reassign.mjs" "$B3" >"$TMP/plt.out" 2>&1 ||
    fail "@platformatic/kafka reassignment calls: $(tail -20 "$TMP/plt.out")"
sed 's/^/#   /' "$TMP/plt.out"

# ---- node 1 killed: new leaders, nothing lost ----
wait_acked 2500 || fail "the producer stalled before node 1's kill: $(tail -3 "$TMP/orders.out")"
kill9_node 1
T0=$(date +%s%N)
for p in 0 1; do
    ok=""
    for _ in $(seq 1 200); do
        l=$(kcat -L -b "$B2" -t orders -m 2 2>/dev/null | sed -n "s/.*partition $p, leader \([0-9-]*\),.*/\1/p")
        [ "$l" = 2 ] || [ "$l" = 3 ] && { ok=1; break; }
        sleep 0.02
    done
    [ -n "$ok" ] || fail "orders-$p has no leader on nodes 2 and 3 after node 1's kill (leader '$l')"
done
note "node 1 killed: both partitions of orders led by node 2 or 3 within $(( ($(date +%s%N) - T0) / 1000000 )) ms"
# the metadata quorum (nodes 2 and 3 of three voters) still decides
create_topic_retrying "$B2" late --partitions 2 --replication-factor 1 ||
    fail "no topic could be created with node 1 down: $(cat "$TMP/create.out")"
wait $PROD || fail "producer: $(tail -5 "$TMP/orders.out")"
timeout 60 kcat -C -b "$B3" -t orders -e -q -f '%p %o %s\n' >"$TMP/orders.read" || fail "kcat orders via node 3"
$PY "$ROOT/tests/integration/history.py" --acked "$TMP/orders.acked" --final "$TMP/orders.read" \
    --values $COUNT --partitions 2 --idempotent --ordered --complete || fail "history of orders"
[ "$(timeout 30 kcat -C -b "$B2" -t early -e -q | sort -n | md5sum)" = "$(seq 1 $EARLY | md5sum)" ] ||
    fail "early does not read whole through node 2"
GOT=$($PY "$ROOT/tests/integration/cluster_group.py" committed "$B2" early g1 2) ||
    fail "committed offsets of g1 via node 2: $GOT"
# (a partition g1 never committed reads back as -1001, "no offset")
[ "$($PY -c 'import json,sys
got = {p: o for p, o in json.loads(sys.argv[1]).items() if o >= 0}
print(sorted(got.items()) == sorted(json.loads(sys.argv[2]).items()))' "$GOT" "$COMMITTED")" = True ] ||
    fail "g1's committed offsets on the survivors are $GOT, were $COMMITTED"
identical23() { # TOPIC-PARTITION: nodes 2 and 3 hold the same log bytes (within 10 s)
    for _ in $(seq 1 200); do
        [ "$(cat "$TMP"/data2/$1/*.log | md5sum)" = "$(cat "$TMP"/data3/$1/*.log | md5sum)" ] &&
            return 0
        sleep 0.05
    done
    return 1
}
for t in orders early; do
    for p in 0 1; do
        identical23 $t-$p || fail "$t-$p differs between nodes 2 and 3"
    done
done
# g2 stops 10 s after its last record, committing what it read
wait $CONS || fail "consumer group g2: $(tail -5 "$TMP/g2.out")"
$PY - "$TMP/g2.read" "$TMP/orders.read" $COUNT <<'PYEOF' || fail "g2 did not read every record of orders"
import sys
seen = {line.split()[2] for line in open(sys.argv[1])}
missing = [v for v in range(int(sys.argv[3])) if str(v) not in seen]
if missing:
    sys.exit("g2 never saw %d values, e.g. %s" % (len(missing), missing[:5]))
PYEOF
END=$($PY -c 'import json,sys
end = {}
for line in open(sys.argv[1]):
    p, o, _ = line.split()
    end[p] = max(end.get(p, 0), int(o) + 1)
print(json.dumps(end, sort_keys=True))' "$TMP/orders.read")
GOT2=$($PY "$ROOT/tests/integration/cluster_group.py" committed "$B2" orders g2 2) || fail "committed g2: $GOT2"
[ "$GOT2" = "$END" ] || fail "g2 committed $GOT2, the log ends at $END"
note "$COUNT idempotent records: nothing lost or duplicated; early whole; g1's offsets intact; g2 read all and committed $GOT2; replicas identical"

# ---- node 1 comes back, is decommissioned and stopped ----
start_node 1 --set "cluster.listener=127.0.0.1:${CL_CPORT[1]}"
wait_log 1 'event=cluster_registered' 2 15 || fail "restarted node 1 did not register"
"$SP" cluster decommission 1 -b "$B2" --timeout 60 >"$TMP/decom.out" 2>&1 ||
    fail "cluster decommission 1: $(cat "$TMP/decom.out")"
grep -q "node 1 holds no replica and is no longer a voter" "$TMP/decom.out" ||
    fail "decommission says: $(cat "$TMP/decom.out")"
wait_log 1 'event=ctl_became_observer node=1' 1 10 || fail "node 1 still votes"
stop_node 1
for t in orders early late __consumer_offsets; do
    kcat -L -b "$B2" -t $t -m 2 2>/dev/null |
        sed -n 's/.*partition \([0-9]*\), leader \([0-9-]*\), replicas: \([0-9,]*\), isrs: .*/\1 \2 \3/p' >"$TMP/layout"
    [ -s "$TMP/layout" ] || fail "no partitions of $t"
    awk '$2 != 2 && $2 != 3 || $3 ~ /1/ {exit 1}' "$TMP/layout" ||
        fail "$t after node 1's decommission: $(cat "$TMP/layout")"
done
for t in orders early late; do
    seq 1 100 | sed "s/^/after-/" | kcat -P -b "$B3" -t $t -X acks=all ||
        fail "kcat could not write $t after node 1 left"
done
[ "$(timeout 30 kcat -C -b "$B2" -t early -e -q | grep -c .)" = $((EARLY + 100)) ] ||
    fail "early after the decommission does not hold $((EARLY + 100)) records"
[ "$(timeout 30 kcat -C -b "$B2" -t late -e -q | grep -c .)" = 100 ] || fail "late lost records"
for p in 0 1; do
    identical23 early-$p || fail "early-$p differs between nodes 2 and 3 after the decommission"
done
note "node 1 restarted, decommissioned (replicas and vote moved off) and stopped: nodes 2 and 3 serve and take writes"

for i in 3 2; do stop_node "$i"; done
grep -h 'level=error' "$TMP"/node*.log && fail "errors logged"
note "nodes 2 and 3 stopped cleanly"
