#!/usr/bin/env bash
# A broker that is not a controller voter (an observer of the metadata log, node 4 with
# cluster.listener) next to three voters: it registers, every node lists four brokers; a topic of
# 4 partitions, replication factor 3, created through node 4 places replicas (and leaders) on
# it; 4000 idempotent acks=all records produced through a bootstrap at node 4 only are read back
# through node 1; node 4 killed (-9) and restarted registers again, refetches the metadata and
# catches up: every partition's replicas hold identical logs. A second observer (node 5) joins;
# a topic replicated on all five brokers takes records through it. All stop cleanly.
# timeout: 60
source "$(dirname "$0")/lib.sh"

init_cluster 3
CL_PORT[4]=$(free_port)
CL_CPORT[4]=$(free_port)
for i in 1 2 3; do start_node "$i"; done
start_node 4 --set "cluster.listener=127.0.0.1:${CL_CPORT[4]}" --set admin.listener=127.0.0.1:0
# an observer must give an address the others can dial
if "$SP" serve --set node.id=9 --set "log.dirs=$TMP/data9" --set "listeners=PLAINTEXT://127.0.0.1:0" \
    --set "controller.quorum.voters=$CL_VOTERS" --set "cluster.listener=0.0.0.0:$(free_port)" \
    --set admin.listener= >"$TMP/bad.log" 2>&1; then
    fail "node 9 started with a wildcard cluster.listener"
fi
grep -q "cluster.listener must be an address" "$TMP/bad.log" || fail "refusal: $(cat "$TMP/bad.log")"
ADMIN4=$(grep broker_started "$TMP/node4.log" | tail -1 | sed -n 's/.* admin=\([^ ]*:[0-9]*\) .*/\1/p')
[ -n "$ADMIN4" ] || fail "node 4 reports no admin address"
for i in 1 2 3 4; do
    wait_log "$i" 'event=cluster_registered' 1 15 || fail "node $i did not register within 15 s"
done
grep -q 'event=cluster_started node=4 .*role=observer' "$TMP/node4.log" || fail "node 4 is not an observer"
note "three voters and observer node 4 registered"

# brokers NODE: the broker ids NODE's Metadata lists, sorted
brokers() {
    kcat -L -b "127.0.0.1:${CL_PORT[$1]}" -m 2 2>/dev/null |
        sed -n 's/^ *broker \([0-9]*\) at .*/\1/p' | sort -n | xargs
}
for i in 1 2 3 4; do
    ok=""
    for _ in $(seq 1 100); do
        [ "$(brokers "$i")" = "1 2 3 4" ] && { ok=1; break; }
        sleep 0.05
    done
    [ -n "$ok" ] || fail "node $i lists brokers '$(brokers "$i")', want '1 2 3 4'"
done
ok=""
for _ in $(seq 1 100); do
    n=$(curl -sf "http://$ADMIN4/v1/cluster" | $PY -c 'import json,sys; d=json.load(sys.stdin); print(len([b for b in d["brokers"] if not b["fenced"]]))' 2>/dev/null || true)
    [ "$n" = 4 ] && { ok=1; break; }
    sleep 0.1
done
[ -n "$ok" ] || fail "GET /v1/cluster at node 4 does not list 4 live brokers: $(curl -s "http://$ADMIN4/v1/cluster")"
"$SP" cluster status --admin "$ADMIN4" >"$TMP/status.out" 2>&1 || fail "cluster status at node 4"
[ "$(grep -cE '^  [1234] +127\.0\.0\.1:[0-9]+ +127\.0\.0\.1:[0-9]+ +live$' "$TMP/status.out")" = 4 ] ||
    fail "cluster status at node 4 does not list 4 live brokers: $(cat "$TMP/status.out")"
grep -q "^  4 +127.0.0.1:${CL_PORT[4]} +127.0.0.1:${CL_CPORT[4]} +live$" "$TMP/status.out" ||
    grep -qE "^  4 +127\.0\.0\.1:${CL_PORT[4]} +127\.0\.0\.1:${CL_CPORT[4]} +live$" "$TMP/status.out" ||
    fail "node 4's row in cluster status: $(cat "$TMP/status.out")"
grep -q '^controller: leader [123],' "$TMP/status.out" || fail "controller line at node 4: $(cat "$TMP/status.out")"
note "every node lists brokers 1 2 3 4; cluster status at node 4 shows 4 live brokers"

# ---- a topic created through the observer ----
$PY - "127.0.0.1:${CL_PORT[4]}" <<'PYEOF' || fail "CreateTopics through node 4 failed"
import sys, time
from confluent_kafka.admin import AdminClient, NewTopic
a = AdminClient({"bootstrap.servers": sys.argv[1]})
for t, f in a.create_topics([NewTopic("obs", 4, 3)], request_timeout=15).items():
    f.result()
PYEOF
wait_log 4 'event=cluster_replica_added topic=obs' 1 10 || fail "node 4 holds no replica of obs"
# layout NODE: "partition leader replicas" per partition of obs, as NODE's Metadata gives them
layout() {
    kcat -L -b "127.0.0.1:${CL_PORT[$1]}" -t obs -m 2 2>/dev/null |
        sed -n 's/.*partition \([0-9]*\), leader \(-\{0,1\}[0-9]*\), replicas: \([0-9,]*\),.*/\1 \2 \3/p' | sort -n
}
ok=""
for _ in $(seq 1 100); do
    layout 1 >"$TMP/layout"
    if [ "$(wc -l <"$TMP/layout")" = 4 ] && ! awk '$2 < 0' "$TMP/layout" | grep -q .; then ok=1; break; fi
    sleep 0.05
done
[ -n "$ok" ] || fail "obs has no leader everywhere: $(cat "$TMP/layout")"
cat "$TMP/layout" | sed 's/^/#   /'
on4=$(awk '$3 ~ /(^|,)4(,|$)/' "$TMP/layout" | wc -l)
pref4=$(awk '$3 ~ /^4(,|$)/' "$TMP/layout" | wc -l)
led4=$(awk '$2 == 4' "$TMP/layout" | wc -l)
[ "$on4" -ge 2 ] || fail "node 4 holds $on4 replicas of obs (want >= 2 of 4 partitions, rf 3 over 4 brokers)"
# placement makes it the preferred leader (replicas[0]) of one partition; who leads is Raft's
# election (the first replica to time out), so node 4 may or may not lead now
[ "$pref4" -ge 1 ] || fail "node 4 is the preferred leader of no partition of obs"
note "node 4 holds $on4 replicas of obs, is the preferred leader of $pref4, leads $led4 now"

# ---- produce through node 4 only, read back through node 1 ----
COUNT=4000
$PY "$ROOT/tests/integration/idem_producer.py" "127.0.0.1:${CL_PORT[4]}" obs $COUNT "$TMP/obs.acked" \
    --partitions 4 -X acks=all >"$TMP/obs.out" 2>&1 || fail "producer via node 4: $(tail "$TMP/obs.out")"
timeout 30 kcat -C -b "127.0.0.1:${CL_PORT[1]}" -t obs -e -q -f '%p %o %s\n' >"$TMP/obs.read" ||
    fail "kcat through node 1 failed"
$PY "$ROOT/tests/integration/history.py" --acked "$TMP/obs.acked" --final "$TMP/obs.read" \
    --values $COUNT --partitions 4 --idempotent --ordered --complete ||
    fail "history of obs has anomalies"
note "$COUNT acks=all records through node 4, read back through node 1"

# ---- node 4 killed and restarted: registers again, catches up, identical replicas ----
kill9_node 4
start_node 4 --set "cluster.listener=127.0.0.1:${CL_CPORT[4]}"
wait_log 4 'event=cluster_registered' 2 15 || fail "node 4 did not register again"
# more records while it is back, through a voter
$PY "$ROOT/tests/integration/idem_producer.py" "127.0.0.1:${CL_PORT[2]}" obs 400 "$TMP/obs2.acked" \
    --partitions 4 -X acks=all >"$TMP/obs2.out" 2>&1 || fail "producer via node 2: $(tail "$TMP/obs2.out")"
same=0
for _ in $(seq 1 200); do
    same=1
    while read -r p _l reps; do
        sums=$(for r in ${reps//,/ }; do cat "$TMP"/data$r/obs-$p/*.log 2>/dev/null | md5sum; done | sort -u | wc -l)
        [ "$sums" = 1 ] || { same=0; break; }
    done <"$TMP/layout"
    [ $same = 1 ] && break
    sleep 0.05
done
[ $same = 1 ] || { ls -l "$TMP"/data*/obs-*/; fail "replicas of obs differ after node 4's restart"; }
grep -q 'event=ctl_observer_open' "$TMP/node4.log" || fail "node 4 did not run as an observer"
[ -d "$TMP/data4/__cluster_metadata-0" ] && fail "observer node 4 keeps a metadata log"
note "node 4 restarted, registered again and caught up: every partition's replicas are identical"

# ---- a second observer: node 5; a topic replicated on all five brokers (observer to observer) ----
CL_PORT[5]=$(free_port)
CL_CPORT[5]=$(free_port)
start_node 5 --set "cluster.listener=127.0.0.1:${CL_CPORT[5]}"
wait_log 5 'event=cluster_registered' 1 15 || fail "node 5 did not register"
ok=""
for _ in $(seq 1 100); do
    [ "$(brokers 4)" = "1 2 3 4 5" ] && [ "$(brokers 5)" = "1 2 3 4 5" ] && { ok=1; break; }
    sleep 0.05
done
[ -n "$ok" ] || fail "nodes 4 and 5 list brokers '$(brokers 4)' / '$(brokers 5)'"
$PY - "127.0.0.1:${CL_PORT[5]}" <<'PYEOF' || fail "CreateTopics five (rf 5) through node 5 failed"
import sys
from confluent_kafka.admin import AdminClient, NewTopic
a = AdminClient({"bootstrap.servers": sys.argv[1]})
for t, f in a.create_topics([NewTopic("five", 1, 5)], request_timeout=15).items():
    f.result()
PYEOF
$PY "$ROOT/tests/integration/idem_producer.py" "127.0.0.1:${CL_PORT[5]}" five 500 "$TMP/five.acked" \
    --partitions 1 -X acks=all >"$TMP/five.out" 2>&1 || fail "producer via node 5: $(tail "$TMP/five.out")"
# node 4 learns of five from its metadata fetch (the controller answers it once five commits):
# a read through it before then is refused with UNKNOWN_TOPIC_OR_PARTITION, as a Kafka broker
# that has not caught up with the metadata log refuses it
ok=""
for _ in $(seq 1 100); do
    kcat -L -b "127.0.0.1:${CL_PORT[4]}" -t five -m 2 2>/dev/null |
        grep -q 'partition 0, leader [1-5],' && { ok=1; break; }
    sleep 0.05
done
[ -n "$ok" ] || fail "node 4's Metadata gives no leader for five within 5 s"
timeout 30 kcat -C -b "127.0.0.1:${CL_PORT[4]}" -t five -e -q -f '%p %o %s\n' >"$TMP/five.read" ||
    fail "kcat five through node 4 failed"
$PY "$ROOT/tests/integration/history.py" --acked "$TMP/five.acked" --final "$TMP/five.read" \
    --values 500 --partitions 1 --idempotent --ordered --complete || fail "history of five has anomalies"
same=0
for _ in $(seq 1 200); do
    sums=$(for i in 1 2 3 4 5; do cat "$TMP"/data$i/five-0/*.log 2>/dev/null | md5sum; done | sort -u | wc -l)
    [ "$sums" = 1 ] && { same=1; break; }
    sleep 0.05
done
[ $same = 1 ] || { ls -l "$TMP"/data*/five-0/; fail "the five replicas of five differ"; }
note "observer node 5 joined: 500 acks=all records through it on a topic of rf 5, five identical replicas"

for i in 5 4 1 2 3; do stop_node "$i"; done
grep -h 'level=error' "$TMP"/node*.log && fail "errors logged"
note "all nodes stopped cleanly"
