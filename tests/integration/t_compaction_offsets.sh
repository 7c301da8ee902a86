#!/usr/bin/env bash
# __consumer_offsets is compacted like any topic with cleanup.policy=compact: offsets are
# committed many times by 20 groups through the group coordinator (a failed commit fails the
# test); the cleaner compacts it and the last commit of every group survives a restart.
# timeout: 180
source "$(dirname "$0")/lib.sh"
start_broker --set log.cleaner.backoff.ms=200 --set log.retention.check.interval.ms=200 \
    --set log.roll.ms=1000
$PY "$ROOT/tests/integration/compaction.py" offsets "$BROKER" "$BROKER_LOG" ||
    fail "commits through the group coordinator, or their compaction, failed"
stop_broker
start_broker
$PY - "$BROKER" <<'PY' || fail "commits not intact after restart"
import sys
from confluent_kafka import Consumer, TopicPartition
for g in range(20):
    c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": "g-%d" % g, "enable.auto.commit": False})
    off = c.committed([TopicPartition("data", 0)], timeout=10)[0].offset
    c.close()
    assert off == 2980 + g, (g, off)
print("# commits intact after restart")
PY
stop_broker
