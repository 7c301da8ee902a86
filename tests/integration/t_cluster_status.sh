#!/usr/bin/env bash
# `streampulse cluster status` and GET /v1/cluster on a three-node cluster: every node's admin
# listener answers JSON naming the controller and the three registered brokers; a topic with
# replication factor 3 and 2000 acks=all records shows, through the CLI given every admin
# address, its leader, replicas 1,2,3, HW >= 2001 (the records and the leader's no-op entry)
# and lag 0 for both followers. The Raft,
# controller and transport metric families parse (metrics_check.py cluster) at the leader and a
# follower. Asked at a follower only, the row shows without lags. With a follower killed (-9)
# the CLI names it on stderr and still prints the rest; with no listener reachable it fails in
# words with exit 1; an unknown sub-command exits 2. A single node answers as a cluster of one.
# timeout: 120
source "$(dirname "$0")/lib.sh"
MC=$ROOT/tests/integration/metrics_check.py

init_cluster 3
declare -a CL_ADMIN=()
for i in 1 2 3; do
    start_node "$i" --set admin.listener=127.0.0.1:0
    CL_ADMIN[$i]=$(grep broker_started "$TMP/node$i.log" | tail -1 | sed -n 's/.* admin=\([^ ]*:[0-9]*\) .*/\1/p')
    [ -n "${CL_ADMIN[$i]}" ] || fail "node $i reports no admin address"
done
for i in 1 2 3; do
    wait_log "$i" 'event=cluster_registered' 1 10 || fail "node $i did not register within 10 s"
done
ALL="${CL_ADMIN[1]},${CL_ADMIN[2]},${CL_ADMIN[3]}"

# /v1/cluster: the same cluster id and controller leader everywhere, three brokers
for _ in $(seq 1 100); do
    ok=1
    for i in 1 2 3; do
        curl -sf "http://${CL_ADMIN[$i]}/v1/cluster" >"$TMP/c$i.json" || ok=0
    done
    [ $ok = 1 ] && $PY - "$TMP"/c1.json "$TMP"/c2.json "$TMP"/c3.json <<'PYEOF' && break
import json, sys
docs = [json.load(open(f)) for f in sys.argv[1:]]
assert [d["node_id"] for d in docs] == [1, 2, 3], docs
assert len({d["cluster_id"] for d in docs}) == 1
assert len({d["controller"]["leader"] for d in docs}) == 1 and docs[0]["controller"]["leader"] in (1, 2, 3)
for d in docs:
    assert [b["id"] for b in d["brokers"]] == [1, 2, 3] and not any(b["fenced"] for b in d["brokers"]), d
PYEOF
    ok=0
    sleep 0.1
done
[ $ok = 1 ] || fail "/v1/cluster answers disagree: $(cat "$TMP"/c*.json)"
ctl=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["controller"]["leader"])' "$TMP/c1.json")
note "every node's /v1/cluster names controller $ctl and brokers 1 2 3"

BOOT="127.0.0.1:${CL_PORT[1]},127.0.0.1:${CL_PORT[2]},127.0.0.1:${CL_PORT[3]}"
$PY - "127.0.0.1:${CL_PORT[$ctl]}" st <<'PYEOF' || fail "CreateTopics st"
import sys
from confluent_kafka.admin import AdminClient, NewTopic
a = AdminClient({"bootstrap.servers": sys.argv[1]})
for t, f in a.create_topics([NewTopic(sys.argv[2], 1, 3)], request_timeout=10).items():
    f.result()
PYEOF
for i in 1 2 3; do
    wait_log "$i" 'event=cluster_replica_added topic=st partition=0 replicas=3' 1 5 ||
        fail "node $i has no replica of st"
done
seq 1 2000 | "$SP" produce -b "$BOOT" -t st --acks all >"$TMP/produce.out" 2>&1 ||
    fail "produce: $(tail -5 "$TMP/produce.out")"

# the CLI, given every node: leader, replicas 1,2,3, HW >= 2001, both followers at lag 0
for _ in $(seq 1 100); do
    "$SP" cluster status --admin "$ALL" >"$TMP/status.out" 2>"$TMP/status.err" ||
        fail "cluster status failed: $(cat "$TMP/status.err")"
    row=$(grep -E '^  st +0 ' "$TMP/status.out" || true)
    # TOPIC PART LEADER TERM REPLICAS HW lags...
    set -- $row
    if [ $# -eq 8 ] && [ "$5" = "1,2,3" ] && [ "$6" -ge 2001 ] && [ "${7#*:}" = 0 ] && [ "${8#*:}" = 0 ]; then
        break
    fi
    sleep 0.1
done
cat "$TMP/status.out"
[ $# -eq 8 ] && [ "$5" = "1,2,3" ] && [ "$6" -ge 2001 ] || fail "status row for st-0: '$row'"
lead=$3
[ "$lead" -ge 1 ] && [ "$lead" -le 3 ] || fail "no leader in '$row'"
[ "${7#*:}" = 0 ] && [ "${8#*:}" = 0 ] || fail "followers lag in '$row'"
grep -q "^controller: leader $ctl, term" "$TMP/status.out" || fail "controller line"
[ "$(grep -cE '^  [123] +127\.0\.0\.1:[0-9]+ +127\.0\.0\.1:[0-9]+ +live$' "$TMP/status.out")" = 3 ] ||
    fail "three live brokers expected"
note "cluster status: st-0 led by $lead, replicas 1,2,3, HW $6, followers at lag 0"

# metrics: the cluster families at the leader and at a follower
follower=$(( lead % 3 + 1 ))
$PY "$MC" cluster "${CL_ADMIN[$lead]}" st 3 >"$TMP/mc.out" 2>&1 || { cat "$TMP/mc.out"; fail "metrics at the leader"; }
$PY "$MC" cluster "${CL_ADMIN[$follower]}" st 3 >"$TMP/mc.out" 2>&1 || { cat "$TMP/mc.out"; fail "metrics at follower $follower"; }
note "Raft, controller and transport metric families parse and agree with /v1/cluster"

# only one node asked, a follower: the partition shows, but no lag (only the leader knows)
"$SP" cluster status --admin "${CL_ADMIN[$follower]}" >"$TMP/one.out" 2>&1 || fail "status at a follower"
grep -E '^  st +0 ' "$TMP/one.out" | grep -q 'no leader answered' || fail "follower-only status: $(cat "$TMP/one.out")"

# a follower killed: still answers through the others; its lag grows unknown or it is fenced
kill9_node "$follower"
"$SP" cluster status --admin "${CL_ADMIN[$follower]},${CL_ADMIN[$lead]}" >"$TMP/k.out" 2>"$TMP/k.err" ||
    fail "status with one node down: $(cat "$TMP/k.err")"
grep -q "cannot connect to the admin listener at ${CL_ADMIN[$follower]}" "$TMP/k.err" ||
    fail "the dead node is not reported: $(cat "$TMP/k.err")"
grep -qE '^  st +0 ' "$TMP/k.out" || fail "no st row with one node down"
note "node $follower down: reported on stderr, status still printed"

# nothing reachable: exit 1 in words; bad usage: exit 2
rc=0
"$SP" cluster status --admin "${CL_ADMIN[$follower]}" >/dev/null 2>"$TMP/none.err" || rc=$?
[ $rc = 1 ] && grep -q 'no admin listener answered' "$TMP/none.err" || fail "unreachable: rc=$rc $(cat "$TMP/none.err")"
rc=0
"$SP" cluster frobnicate >/dev/null 2>&1 || rc=$?
[ $rc = 2 ] || fail "unknown sub-command: rc=$rc"
"$SP" help cluster | grep -q 'status' || fail "help cluster"
"$SP" cluster status --help | grep -q -- '--admin' || fail "cluster status --help"

for i in 1 2 3; do [ -n "${CL_PID[$i]}" ] && stop_node "$i"; done

# hostile answers: a listener that sends each of these bodies once; broken JSON fails in words,
# absurd values print without crashing
fake() { # BODY: serves one HTTP answer with BODY on a free port, prints the port
    local port
    port=$(free_port)
    rm -f "$TMP/fake.ready"
    $PY - "$port" "$1" "$TMP/fake.ready" >/dev/null 2>&1 <<'PYEOF' &
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); s.settimeout(10)
open(sys.argv[3], "w").close()
c, _ = s.accept(); c.recv(4096)
c.sendall(b"HTTP/1.0 200 OK\r\n\r\n" + sys.argv[2].encode()); c.close()
PYEOF
    for _ in $(seq 100); do
        [ -e "$TMP/fake.ready" ] && break
        sleep 0.05
    done
    echo "$port"
}
rc=0
"$SP" cluster status --admin "127.0.0.1:$(fake '{"mode":"cluster","brokers":[{"id":1')" >/dev/null 2>"$TMP/h.err" || rc=$?
[ $rc = 1 ] && grep -q 'not a JSON object' "$TMP/h.err" || fail "truncated JSON: rc=$rc $(cat "$TMP/h.err")"
"$SP" cluster status --admin "127.0.0.1:$(fake '{"mode":"cluster","controller":{"leader":1e999,"term":-1e300},"brokers":[{"id":"x","fenced":3}],"partitions":[{"topic":"t","partition":1e300,"replicas":[1e999,-1e999,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30],"role":"leader","followers":[{"id":2,"lag":1e40},{}]},{"x":[[[[[[]]]]]]}]}')" \
    >"$TMP/h.out" 2>"$TMP/h.err" || fail "absurd values: $(cat "$TMP/h.err")"
grep -qE '^  t ' "$TMP/h.out" || fail "absurd values: no row for t: $(cat "$TMP/h.out")"
note "hostile answers: truncated JSON refused in words, absurd values printed"

# a single node is a cluster of one: its own controller, its only broker, its partitions
start_broker
echo x | kcat -P -b "$BROKER" -t solo
curl -sf "http://$ADMIN/v1/cluster" >"$TMP/solo.json" || fail "single-node /v1/cluster"
$PY - "$TMP/solo.json" <<'PYEOF' || fail "single-node /v1/cluster: $(cat "$TMP/solo.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["mode"] == "cluster" and j["registered"] is True, j
assert j["controller"]["leader"] == j["node_id"] == 1, j
assert [b["id"] for b in j["brokers"]] == [1] and not j["brokers"][0]["fenced"], j
solo = [p for p in j["partitions"] if p["topic"] == "solo"]
assert len(solo) == 1 and solo[0]["leader"] == 1 and solo[0]["replicas"] == [1], solo
assert solo[0]["high_watermark"] == 1, solo
PYEOF
"$SP" cluster status --admin "$ADMIN" >"$TMP/solo.out" || fail "single-node CLI"
grep -q 'controller: leader 1' "$TMP/solo.out" || fail "single-node CLI: $(cat "$TMP/solo.out")"
grep -qE '^  solo +0 +1 ' "$TMP/solo.out" || fail "single-node CLI: no row for solo: $(cat "$TMP/solo.out")"
note "a single node answers as a cluster of one: controller 1, broker 1, solo led by 1"
echo "PASS"
