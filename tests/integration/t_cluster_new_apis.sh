#!/usr/bin/env bash
# A three-node cluster through @platformatic/kafka (node/platformatic_cluster.mjs): Metadata v12
# gives every node's clients the one topic id of the metadata image, Fetch v13 by that id reads
# what was produced, DescribeCluster v1 lists the three brokers; IncrementalAlterConfigs through
# node 2 (APPEND to cleanup.policy, SET retention.ms) is then described by every node and applied
# by every node's local topic, with the keys it did not name left as they were. Every node's
# GET /v1/topics gives its local topic that same id.
# timeout: 120
source "$(dirname "$0")/lib.sh"
[ -d "$NODE_DIR/node_modules/@platformatic/kafka" ] || (cd "$NODE_DIR" && npm ci --no-audit --no-fund >/dev/null)
CFG="$PY $ROOT/tests/integration/cluster_configs.py"
start_cluster 3 --set admin.listener=127.0.0.1:0
B() { echo "127.0.0.1:${CL_PORT[$1]}"; }
$CFG create "$(B 1)" nat 2 3 segment.bytes=1048576 || fail "CreateTopics nat"
for i in 1 2 3; do
    wait_log "$i" 'event=cluster_replica_added topic=nat partition=1 replicas=3' 1 10 ||
        fail "node $i has no replica of nat-1"
done
(cd "$NODE_DIR" && node platformatic_cluster.mjs nat "$(B 1)" "$(B 2)" "$(B 3)") >"$TMP/plt.out" ||
    fail "@platformatic/kafka against the cluster: $(cat "$TMP/plt.out")"
id=$(sed -n 's/^ok: .* topic id \([0-9a-f-]*\)$/\1/p' "$TMP/plt.out")
[ -n "$id" ] || fail "no topic id in: $(cat "$TMP/plt.out")"
for i in 1 2 3; do
    admin=$(grep broker_started "$TMP/node$i.log" | tail -1 | sed -n 's/.* admin=\([^ ]*:[0-9]*\) .*/\1/p')
    curl -sf "http://$admin/v1/topics" >"$TMP/topics$i.json" || fail "node $i: no /v1/topics"
    local_id=$($PY -c '
import base64, json, sys
for t in json.load(open(sys.argv[1]))["topics"]:
    if t["name"] == "nat":
        raw = base64.urlsafe_b64decode(t["id"] + "==")
        h = raw.hex()
        print("%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:]))
' "$TMP/topics$i.json")
    [ "$local_id" = "$id" ] || fail "node $i's /v1/topics gives nat the id '$local_id', Metadata '$id'"
done
note "Metadata and every node's /v1/topics give nat the id $id"
for i in 1 2 3; do
    $CFG wait "$(B "$i")" nat 10 cleanup.policy=delete,compact:DYNAMIC_TOPIC_CONFIG \
        retention.ms=5400000:DYNAMIC_TOPIC_CONFIG segment.bytes=1048576:DYNAMIC_TOPIC_CONFIG ||
        fail "node $i does not describe the incremental change"
    wait_log "$i" 'event=cluster_topic_configs_applied topic=nat overrides=3 .*retention_ms=5400000 .*compact=1 delete=1' 1 10 ||
        fail "node $i did not apply it: $(grep cluster_topic_configs "$TMP/node$i.log")"
done
note "IncrementalAlterConfigs through node 2: described and applied on every node"
for i in 1 2 3; do stop_node "$i"; done
