"""Topic compression.type as Kafka has it: batches are stored in the topic's codec whatever the
producer sent, and every consumer reads the same records back.

For each (topic codec, producer codec) below: a topic created with compression.type (confluent
AdminClient), 300 records from an idempotent librdkafka producer in the producer's codec, read
back by a confluent-kafka consumer equal and in order; the partition's log file (parsed here:
baseOffset, batchLength, attributes of each batch) holds data batches in the topic's codec only.
Then compression.type changed with kafka-python's AlterConfigs: later batches take the new codec,
the earlier ones keep theirs; DescribeConfigs reports the value.

usage: compression_type.py BOOTSTRAP DATA_DIR"""
import os
import struct
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient

BOOT, DATA = sys.argv[1], sys.argv[2]
CODES = {"uncompressed": 0, "none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
CASES = [("lz4", "none"), ("zstd", "snappy"), ("uncompressed", "gzip"), ("gzip", "lz4"),
         ("snappy", "zstd"), ("producer", "lz4")]
N = 300


def log_codecs(topic):
    """the codec of each data batch in the partition's log files, in order"""
    d = os.path.join(DATA, topic + "-0")
    out = []
    for name in sorted(f for f in os.listdir(d) if f.endswith(".log")):
        data = open(os.path.join(d, name), "rb").read()
        at = 0
        while at + 61 <= len(data):
            blen = struct.unpack(">i", data[at + 8:at + 12])[0]
            attrs = struct.unpack(">h", data[at + 21:at + 23])[0]
            if not attrs & 0x20:  # control batches (Raft's) are the broker's own
                out.append(attrs & 7)
            at += 12 + blen
    return out


def produce(topic, codec, start):
    p = Producer({"bootstrap.servers": BOOT, "enable.idempotence": True, "acks": "all",
                  "compression.codec": codec, "linger.ms": 20})
    errs = []
    for i in range(start, start + N):
        p.produce(topic, value=b"record-%06d " % i + b"x" * (i % 50),
                  on_delivery=lambda e, m: errs.append(e) if e else None)
    assert p.flush(20) == 0 and not errs, errs


def consume(topic, want):
    c = Consumer({"bootstrap.servers": BOOT, "group.id": "ct-" + topic,
                  "enable.auto.commit": False})
    c.assign([TopicPartition(topic, 0, 0)])
    got = []
    deadline = time.time() + 20
    while len(got) < want and time.time() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        assert not m.error(), m.error()
        got.append(m.value())
    c.close()
    assert got == [b"record-%06d " % i + b"x" * (i % 50) for i in range(want)], \
        "read back %d of %d, or different bytes" % (len(got), want)


admin = AdminClient({"bootstrap.servers": BOOT})
for stored, sent in CASES:
    topic = "ct-%s-from-%s" % (stored, sent)
    fs = admin.create_topics([NewTopic(topic, 1, 1, config={"compression.type": stored})])
    fs[topic].result(15)
    produce(topic, sent, 0)
    consume(topic, N)
    codecs = set(log_codecs(topic))
    want = CODES[sent] if stored == "producer" else CODES[stored]
    assert codecs == {want}, (topic, codecs)
    print("%s: %d records sent as %s, stored as %s, read back equal" %
          (topic, N, sent, sorted(codecs)))

topic = "ct-lz4-from-none"
ka = KafkaAdminClient(bootstrap_servers=BOOT)
res = ka.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic,
                                       configs={"compression.type": "gzip"})])
assert [r[0] for r in res.resources] == [0], res
before = len(log_codecs(topic))
produce(topic, "none", N)
consume(topic, 2 * N)
codecs = log_codecs(topic)
assert set(codecs[:before]) == {CODES["lz4"]} and set(codecs[before:]) == {CODES["gzip"]}, codecs
desc = ka.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
entries = {e[0]: e[1] for e in desc[0].resources[0][4]}
assert entries.get("compression.type") == "gzip", entries
ka.close()
print("%s: altered to gzip: the next batches are gzip, the earlier stay lz4; DescribeConfigs "
      "says gzip" % topic)
