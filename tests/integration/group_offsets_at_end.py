"""After a consumer group has left: the group is Empty (DescribeGroups) and its committed offset
of every partition of TOPIC equals that partition's log end (confluent-kafka: OffsetFetch and
ListOffsets through librdkafka).

usage: group_offsets_at_end.py BROKER GROUP TOPIC NPARTS"""
import json
import subprocess
import sys
import os

from confluent_kafka import Consumer, TopicPartition

broker, group, topic, nparts = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
here = os.path.dirname(os.path.abspath(__file__))
desc = json.loads(subprocess.check_output([sys.executable, os.path.join(here, "kgroup.py"),
                                           "describe", broker, group]))
assert desc["state"] == "Empty" and not desc["members"], desc

c = Consumer({"bootstrap.servers": broker, "group.id": group, "enable.auto.commit": False})
tps = [TopicPartition(topic, p) for p in range(nparts)]
committed = {tp.partition: tp.offset for tp in c.committed(tps, timeout=10)}
ends = {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(nparts)}
c.close()
assert all(ends[p] > 0 for p in ends), ends
assert committed == ends, ("committed", committed, "log end", ends)
print("ok: committed offsets at the log end", ends)
