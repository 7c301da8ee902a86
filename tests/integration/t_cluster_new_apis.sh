#!/usr/bin/env bash
# A three-node cluster through @platformatic/kafka (node/platformatic_cluster.mjs): Metadata v12
# gives every node's clients the one topic id of the metadata image, Fetch v13 by that id reads
# what was produced, DescribeCluster v1 lists the three brokers; IncrementalAlterConfigs through
# node 2 (APPEND to cleanup.policy, SET retention.ms) is then described by every node and applied
# by every node's local topic, with the keys it did not name left as they were.
# timeout: 120
source "$(dirname "$0")/lib.sh"
[ -d "$NODE_DIR/node_modules/@platformatic/kafka" ] || (cd "$NODE_DIR" && npm ci --no-audit --no-fund >/dev/null)
CFG="$PY $ROOT/tests/integration/cluster_configs.py"
start_cluster 3
B() { echo "127.0.0.1:${CL_PORT[$1]}"; }
$CFG create "$(B 1)" nat 2 3 segment.bytes=1048576 || fail "CreateTopics nat"
for i in 1 2 3; do
    wait_log "$i" 'event=cluster_replica_added topic=nat partition=1 replicas=3' 1 10 ||
        fail "node $i has no replica of nat-1"
done
(cd "$NODE_DIR" && node platformatic_cluster.mjs nat "$(B 1)" "$(B 2)" "$(B 3)") ||
    fail "@platformatic/kafka against the cluster"
for i in 1 2 3; do
    $CFG wait "$(B "$i")" nat 10 cleanup.policy=delete,compact:DYNAMIC_TOPIC_CONFIG \
        retention.ms=5400000:DYNAMIC_TOPIC_CONFIG segment.bytes=1048576:DYNAMIC_TOPIC_CONFIG ||
        fail "node $i does not describe the incremental change"
    wait_log "$i" 'event=cluster_topic_configs_applied topic=nat overrides=3 .*retention_ms=5400000 .*compact=1 delete=1' 1 10 ||
        fail "node $i did not apply it: $(grep cluster_topic_configs "$TMP/node$i.log")"
done
note "IncrementalAlterConfigs through node 2: described and applied on every node"
for i in 1 2 3; do stop_node "$i"; done
