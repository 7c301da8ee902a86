#!/usr/bin/env bash
# @platformatic/kafka 1.35.0's admin calls: incrementalAlterConfigs, describeConfigs v4,
# describeLogDirs, and its DescribeCluster and OffsetForLeaderEpoch requests
# (tests/integration/node/platformatic_admin.mjs); then OffsetForLeaderEpoch's errors on the wire
# (leader_epoch_raw.py: that client misreads them).
# timeout: 120
source "$(dirname "$0")/lib.sh"
[ -d "$NODE_DIR/node_modules/@platformatic/kafka" ] || (cd "$NODE_DIR" && npm ci --no-audit --no-fund >/dev/null)
start_broker
(cd "$NODE_DIR" && node platformatic_admin.mjs "$BROKER") || fail "@platformatic/kafka admin test failed"
# a topic of one partition and three records, all of the partition's one epoch
$PY - "$BROKER" <<'PY'
import sys
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
a = AdminClient({"bootstrap.servers": sys.argv[1]})
a.create_topics([NewTopic("ofle-raw", 1, 1)])["ofle-raw"].result(15)
p = Producer({"bootstrap.servers": sys.argv[1]})
for i in range(3):
    p.produce("ofle-raw", value=b"v%d" % i, partition=0)
assert p.flush(30) == 0
PY
(cd "$ROOT/tests/integration" && $PY leader_epoch_raw.py "$BROKER" ofle-raw)
stop_broker
