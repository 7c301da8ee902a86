"""kafka-python (python3-kafka 2.0.2): admin create topic, produce with keys and headers,
consume them back; keys, values and headers must round-trip byte-identical.

usage: clients_kafka_python.py BROKER"""
import sys

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

broker = sys.argv[1]
TOPIC = "kpy-roundtrip"
N = 2000

admin = KafkaAdminClient(bootstrap_servers=broker, client_id="itest-admin")
admin.create_topics([NewTopic(TOPIC, num_partitions=3, replication_factor=1)])
assert TOPIC in admin.list_topics(), admin.list_topics()
admin.close()


def record(i):
    key = ("k%d" % (i % 17)).encode()
    value = bytes((i * 7 + j) % 256 for j in range(i % 300))
    headers = [("h-%d" % (i % 3), bytes([i % 256, 0, 255])), ("ünïcode", ("värde-%d" % i).encode())]
    if i % 5 == 0:
        headers.append(("empty", b""))
    return key, value, headers


producer = KafkaProducer(bootstrap_servers=broker, acks="all", linger_ms=5)
futures = []
for i in range(N):
    k, v, h = record(i)
    futures.append(producer.send(TOPIC, key=k, value=v, headers=h))
producer.flush()
metas = [f.get(timeout=30) for f in futures]
producer.close()
assert all(m.topic == TOPIC for m in metas)

consumer = KafkaConsumer(bootstrap_servers=broker, group_id=None, enable_auto_commit=False,
                         auto_offset_reset="earliest", consumer_timeout_ms=10000)
parts = [TopicPartition(TOPIC, p) for p in range(3)]
consumer.assign(parts)
consumer.seek_to_beginning(*parts)
got = {}
for msg in consumer:
    got[(msg.partition, msg.offset)] = (msg.key, msg.value, list(msg.headers))
    if len(got) == N:
        break
consumer.close()
assert len(got) == N, "consumed %d of %d" % (len(got), N)
for i, m in enumerate(metas):
    k, v, h = record(i)
    gk, gv, gh = got[(m.partition, m.offset)]
    assert gk == k and gv == v, "record %d differs" % i
    assert [(a, bytes(b)) for a, b in gh] == h, "headers of record %d differ: %r vs %r" % (i, gh, h)
print("ok: kafka-python %d records with keys and headers round-tripped" % N)
