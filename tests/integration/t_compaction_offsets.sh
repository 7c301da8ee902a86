#!/usr/bin/env bash
# __consumer_offsets is compacted like any topic with cleanup.policy=compact: offsets are
# committed many times by 20 groups (or, on a broker without a group coordinator, keyed
# records are written to a compacted __consumer_offsets directly); the cleaner compacts it
# and the last commit of every group survives a restart.
# timeout: 180
source "$(dirname "$0")/lib.sh"
start_broker --set log.cleaner.backoff.ms=200 --set log.retention.check.interval.ms=200 \
    --set log.roll.ms=1000
mode=$($PY "$ROOT/tests/integration/compaction.py" offsets "$BROKER" "$BROKER_LOG" | tee /dev/stderr | tail -1)
stop_broker
start_broker
if [ "$mode" = coordinator ]; then
    $PY - "$BROKER" <<'PY'
import sys
from confluent_kafka import Consumer, TopicPartition
for g in range(20):
    c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": "g-%d" % g, "enable.auto.commit": False})
    off = c.committed([TopicPartition("data", 0)], timeout=10)[0].offset
    c.close()
    assert off == 2980 + g, (g, off)
print("# commits intact after restart")
PY
else
    n=$(kcat -C -b "$BROKER" -t __consumer_offsets -e -q -f '%k\n' | sort -u | wc -l)
    [ "$n" -eq 20 ] || fail "$n keys after restart"
fi
stop_broker
