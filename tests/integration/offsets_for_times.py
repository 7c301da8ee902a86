"""ListOffsets by timestamp looks inside batches (offsetsForTimes), as Kafka does.

For each codec, librdkafka (confluent-kafka) produces two records in one batch, with timestamps
1234 and 999999999999 (the pair of librdkafka's own test 0052); the batch as stored is read back
from the partition's log file to prove that it is one batch of that codec. Then both librdkafka's
offsets_for_times and kafka-python's must answer, for 999999999999, offset 1 (the second record,
not the batch's first offset) and, where the client reports it, that record's timestamp.

usage: offsets_for_times.py BROKER DATA_DIR"""
import os
import struct
import sys

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
import kafka

broker, data_dir = sys.argv[1], sys.argv[2]
CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
T_FIRST, T_SECOND = 1234, 999999999999

admin = AdminClient({"bootstrap.servers": broker})
topics = ["oft-" + c for c in CODECS]
for f in admin.create_topics([NewTopic(t, 1, 1) for t in topics]).values():
    f.result(15)


def stored_batches(topic):
    """(base offset, last offset delta, codec) of each batch in the partition's first segment."""
    path = os.path.join(data_dir, topic + "-0", "%020d.log" % 0)
    with open(path, "rb") as f:
        data = f.read()
    out, pos = [], 0
    while pos + 61 <= len(data):
        base, length = struct.unpack(">qi", data[pos:pos + 12])
        attributes, last_delta = struct.unpack(">hi", data[pos + 21:pos + 27])
        out.append((base, last_delta, attributes & 7))
        pos += 12 + length
    return out


for codec, code in CODECS.items():
    topic = "oft-" + codec
    delivered = []
    # one batch of both: the batch goes when it holds two records (or after 10 s), and the
    # partition's leader is known before the first record is queued
    producer = Producer({"bootstrap.servers": broker, "acks": "all", "linger.ms": 10000,
                         "batch.num.messages": 2, "compression.type": codec})
    producer.list_topics(topic, timeout=10)
    # values that compress (librdkafka sends a batch uncompressed when that is smaller)
    for value, ts in ((b"first " * 200, T_FIRST), (b"second " * 200, T_SECOND)):
        producer.produce(topic, value=value, partition=0, timestamp=ts,
                         on_delivery=lambda err, msg: delivered.append((err, msg.offset())))
    assert producer.flush(30) == 0
    assert delivered == [(None, 0), (None, 1)], delivered
    batches = stored_batches(topic)
    assert batches == [(0, 1, code)], (codec, "not one batch of two records", batches)

    # librdkafka: offsets_for_times
    c = Consumer({"bootstrap.servers": broker, "group.id": "oft", "enable.auto.commit": False})
    for ts, want in ((T_SECOND, 1), (T_FIRST + 1, 1), (T_FIRST, 0), (0, 0), (T_SECOND + 1, -1)):
        got = c.offsets_for_times([TopicPartition(topic, 0, ts)], timeout=10)
        assert got[0].error is None, got[0].error
        assert got[0].offset == want, (codec, "librdkafka", ts, got[0].offset, want)
    c.close()

    # kafka-python: offsets_for_times gives offset and timestamp
    kc = kafka.KafkaConsumer(bootstrap_servers=broker, request_timeout_ms=20000)
    tp = kafka.TopicPartition(topic, 0)
    got = kc.offsets_for_times({tp: T_SECOND})[tp]
    assert (got.offset, got.timestamp) == (1, T_SECOND), (codec, "kafka-python", got)
    got = kc.offsets_for_times({tp: T_FIRST + 1})[tp]
    assert (got.offset, got.timestamp) == (1, T_SECOND), (codec, "kafka-python", got)
    got = kc.offsets_for_times({tp: 0})[tp]
    assert (got.offset, got.timestamp) == (0, T_FIRST), (codec, "kafka-python", got)
    assert kc.offsets_for_times({tp: T_SECOND + 1})[tp] is None
    kc.close()
    print("ok", codec)
