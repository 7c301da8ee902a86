#!/usr/bin/env bash
# Retention: with tiny segment.bytes and retention.ms, old segments go, the log start offset
# advances and ListOffsets earliest follows it; a consumer at a deleted offset gets
# OFFSET_OUT_OF_RANGE and resets as configured.
# timeout: 120
source "$(dirname "$0")/lib.sh"
start_broker --set log.retention.check.interval.ms=200
$PY - "$BROKER" <<'PY'
import sys, time
from confluent_kafka import Producer, Consumer, TopicPartition, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic
broker = sys.argv[1]
admin = AdminClient({"bootstrap.servers": broker})
fs = admin.create_topics([NewTopic("ret", 1, 1, config={"segment.bytes": "4096", "retention.ms": "1500"})])
fs["ret"].result(10)
p = Producer({"bootstrap.servers": broker, "linger.ms": 1, "batch.num.messages": 20})
for i in range(2000):
    p.produce("ret", value=b"r%05d" % i + b"." * 40)
    if i % 100 == 0:
        p.flush()
p.flush()
c = Consumer({"bootstrap.servers": broker, "group.id": "none", "enable.auto.commit": False})
low, high = c.get_watermark_offsets(TopicPartition("ret", 0), timeout=10)
assert (low, high) == (0, 2000), (low, high)
deadline = time.time() + 20
while time.time() < deadline:
    low, high = c.get_watermark_offsets(TopicPartition("ret", 0), timeout=10, cached=False)
    if low > 0:
        break
    time.sleep(0.2)
assert low > 0 and high == 2000, "log start did not advance: %r" % ((low, high),)
print("log start advanced to", low)
c.close()

def first_offset(reset):
    c = Consumer({"bootstrap.servers": broker, "group.id": "g-" + reset, "enable.auto.commit": False,
                  "auto.offset.reset": reset})
    c.assign([TopicPartition("ret", 0, 0)])  # offset 0 was deleted
    deadline = time.time() + 10
    try:
        while time.time() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                return ("error", m.error().code())
            return ("offset", m.offset())
        return ("nothing", None)
    finally:
        c.close()

kind, off = first_offset("earliest")
assert kind == "offset" and off >= low, (kind, off, low)
print("earliest reset -> offset", off)
kind, val = first_offset("error")
assert kind == "error", (kind, val)
print("auto.offset.reset=error ->", val)
PY
segs=$(ls "$DATA"/ret-0/*.log | wc -l)
note "$segs segment files left"
grep -q 'event=segment_deleted' "$BROKER_LOG" || fail "no segment deletion logged"
stop_broker
