"""confluent-kafka-python (librdkafka): admin create topic, produce with keys and headers,
consume them back; keys, values and headers must round-trip byte-identical.

usage: clients_confluent.py BROKER"""
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

broker = sys.argv[1]
TOPIC = "ck-roundtrip"
N = 2000

admin = AdminClient({"bootstrap.servers": broker})
admin.create_topics([NewTopic(TOPIC, 3, 1)])[TOPIC].result(15)
md = admin.list_topics(timeout=10)
assert TOPIC in md.topics and len(md.topics[TOPIC].partitions) == 3, md.topics


def record(i):
    key = ("k%d" % (i % 17)).encode()
    value = bytes((i * 11 + j) % 256 for j in range(i % 300))
    headers = [("h-%d" % (i % 3), bytes([i % 256, 0, 255])), ("ünïcode", ("värde-%d" % i).encode())]
    if i % 5 == 0:
        headers.append(("empty", b""))
    return key, value, headers


acked = {}


def on_delivery(err, msg, i=None):
    assert err is None, err


producer = Producer({"bootstrap.servers": broker, "acks": "all", "linger.ms": 5})
for i in range(N):
    k, v, h = record(i)
    producer.produce(TOPIC, key=k, value=v, headers=h,
                     on_delivery=lambda err, msg, i=i: acked.__setitem__(i, (err, msg.partition(), msg.offset())))
    producer.poll(0)
assert producer.flush(30) == 0
assert len(acked) == N and all(e is None for e, _, _ in acked.values())

consumer = Consumer({"bootstrap.servers": broker, "group.id": "unused", "enable.auto.commit": False})
consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(3)])
got = {}
deadline = time.time() + 30
while len(got) < N and time.time() < deadline:
    msg = consumer.poll(1.0)
    if msg is None:
        continue
    assert not msg.error(), msg.error()
    got[(msg.partition(), msg.offset())] = (msg.key(), msg.value(), msg.headers() or [])
consumer.close()
assert len(got) == N, "consumed %d of %d" % (len(got), N)
for i in range(N):
    k, v, h = record(i)
    _, p, o = acked[i]
    gk, gv, gh = got[(p, o)]
    assert gk == k and gv == v, "record %d differs" % i
    assert gh == h, "headers of record %d differ: %r vs %r" % (i, gh, h)
print("ok: confluent-kafka %d records with keys and headers round-tripped" % N)
