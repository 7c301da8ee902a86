"""Topic configs that tools built for Kafka 3.x set and StreamPulse accepts with no effect:
message.format.version (Kafka 3.x ignores it: only the v2 record format is written).

Through librdkafka (confluent-kafka: CreateTopics, AlterConfigs, DescribeConfigs) and kafka-python
(CreateTopics, AlterConfigs): creating a topic with it and altering it both succeed, the value is
kept as the topic's own (DescribeConfigs: DYNAMIC_TOPIC_CONFIG), and records still go through.
A value of another key next to it still takes effect, and an unknown key is still refused.

usage: topic_config_compat.py BROKER"""
import sys

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, NewTopic
import kafka.admin

broker = sys.argv[1]
a = AdminClient({"bootstrap.servers": broker})


def describe(topic):
    res = ConfigResource(ConfigResource.Type.TOPIC, topic)
    for _r, f in a.describe_configs([res], request_timeout=10).items():
        return {k: (e.value, ConfigSource(e.source).name) for k, e in f.result().items()}


# librdkafka: CreateTopics with it, then AlterConfigs (which replaces the topic's overrides)
nt = NewTopic("mfv-rdkafka", 1, 1, config={"message.format.version": "2.8-IV1",
                                              "retention.ms": "3600000"})
a.create_topics([nt], request_timeout=10)["mfv-rdkafka"].result()
got = describe("mfv-rdkafka")
assert got["message.format.version"] == ("2.8-IV1", "DYNAMIC_TOPIC_CONFIG"), got["message.format.version"]
assert got["retention.ms"] == ("3600000", "DYNAMIC_TOPIC_CONFIG"), got["retention.ms"]
res = ConfigResource(ConfigResource.Type.TOPIC, "mfv-rdkafka",
                     set_config={"message.format.version": "3.0-IV1", "retention.ms": "7200000"})
for _r, f in a.alter_configs([res], request_timeout=10).items():
    f.result()
got = describe("mfv-rdkafka")
assert got["message.format.version"] == ("3.0-IV1", "DYNAMIC_TOPIC_CONFIG"), got["message.format.version"]
assert got["retention.ms"] == ("7200000", "DYNAMIC_TOPIC_CONFIG"), got["retention.ms"]

# an unknown key is still refused
bad = NewTopic("mfv-bad", 1, 1, config={"message.format.versio": "3.0"})
try:
    a.create_topics([bad], request_timeout=10)["mfv-bad"].result()
    raise AssertionError("an unknown topic config was accepted")
except KafkaException as e:
    assert "Unknown topic config" in str(e), e

# records still go through
p = Producer({"bootstrap.servers": broker, "acks": "all"})
p.produce("mfv-rdkafka", value=b"v", partition=0)
assert p.flush(30) == 0
c = Consumer({"bootstrap.servers": broker, "group.id": "mfv", "enable.auto.commit": False})
c.assign([TopicPartition("mfv-rdkafka", 0, 0)])
m = None
for _ in range(100):
    m = c.poll(0.2)
    if m is not None and not m.error():
        break
assert m is not None and m.value() == b"v", m
c.close()

# kafka-python: CreateTopics and AlterConfigs
ka = kafka.admin.KafkaAdminClient(bootstrap_servers=broker)
ka.create_topics([kafka.admin.NewTopic("mfv-kafka-python", 1, 1,
                                       topic_configs={"message.format.version": "0.10.2"})])
got = describe("mfv-kafka-python")
assert got["message.format.version"] == ("0.10.2", "DYNAMIC_TOPIC_CONFIG"), got["message.format.version"]
r = ka.alter_configs([kafka.admin.ConfigResource(kafka.admin.ConfigResourceType.TOPIC,
                                                 "mfv-kafka-python",
                                                 configs={"message.format.version": "3.5"})])
assert all(e[0] == 0 for e in r.resources), r
assert describe("mfv-kafka-python")["message.format.version"] == ("3.5", "DYNAMIC_TOPIC_CONFIG")
ka.close()
print("ok")
