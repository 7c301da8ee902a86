"""CreateTopics and CreatePartitions answer once the new partitions are served (t_topic_create_ready).

Run with a broker whose flushes to disk are slow (slow_sync.so): a new partition's first
election waits for its Raft hard state to be durable, so for that long it has no leader. The
answer to CreateTopics (confluent-kafka's AdminClient, librdkafka's default operation timeout)
must come after that: every Metadata answer from then on names a leader for every partition,
and a producer with no retries and no wait for metadata delivers to each partition at once.
The same for the partitions CreatePartitions adds.

argv: bootstrap, topic, partitions at creation, partitions after growing."""
import sys
import time

from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

bootstrap, topic, n0, n1 = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
admin = AdminClient({"bootstrap.servers": bootstrap})


def check_led(first, end, what):
    """Metadata, asked again and again for 1 s after the answer: every partition has a leader."""
    looks = 0
    until = time.monotonic() + 1.0
    while time.monotonic() < until and looks < 200:
        md = admin.list_topics(topic=topic, timeout=5)
        t = md.topics[topic]
        assert t.error is None, f"{what}: topic error {t.error} at look {looks}"
        assert len(t.partitions) == end, f"{what}: {len(t.partitions)} partitions, want {end}"
        bad = [(p, t.partitions[p].leader, t.partitions[p].error)
               for p in range(first, end) if t.partitions[p].leader < 0 or t.partitions[p].error]
        assert not bad, f"{what}: partitions without a leader at look {looks} after the answer: {bad}"
        looks += 1
    print(f"# {what}: {looks} Metadata answers after it, each with a leader for partitions "
          f"{first}..{end - 1}")


def produce_each(first, end, what):
    """One record to each partition; no retries, so a partition that cannot take it fails it."""
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "retries": 0,
                  "enable.idempotence": False, "linger.ms": 0, "message.timeout.ms": 10000})
    errors = []
    p.list_topics(topic=topic, timeout=5)
    for i in range(first, end):
        p.produce(topic, value=b"v%d" % i, partition=i,
                  on_delivery=lambda err, msg: errors.append((msg.partition(), err)) if err else None)
    left = p.flush(15)
    assert left == 0, f"{what}: {left} records not delivered in 15 s"
    assert not errors, f"{what}: delivery failed: {errors}"
    print(f"# {what}: one record delivered to each of partitions {first}..{end - 1}, no retry")


t0 = time.monotonic()
fs = admin.create_topics([NewTopic(topic, num_partitions=n0, replication_factor=1)])
fs[topic].result(30)
print(f"# CreateTopics answered in {(time.monotonic() - t0) * 1000:.0f} ms")
check_led(0, n0, "after CreateTopics")
produce_each(0, n0, "after CreateTopics")

t0 = time.monotonic()
fs = admin.create_partitions([NewPartitions(topic, n1)])
fs[topic].result(30)
print(f"# CreatePartitions answered in {(time.monotonic() - t0) * 1000:.0f} ms")
check_led(n0, n1, "after CreatePartitions")
produce_each(n0, n1, "after CreatePartitions")
