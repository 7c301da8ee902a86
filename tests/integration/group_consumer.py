"""A group consumer for the group integration tests, on python3-confluent-kafka or python3-kafka.

usage: group_consumer.py confluent|kafka-python BROKER GROUP TOPIC ASSIGNOR OUT STOPFILE

Appends "partition offset value" per record to OUT and "assign p,p,..." lines to OUT.events;
runs until STOPFILE exists, then commits synchronously and closes (leaving the group)."""
import os
import sys

client, broker, group, topic, assignor, out_path, stop = sys.argv[1:8]
out = open(out_path, "a")
events = open(out_path + ".events", "a")


def event(what, parts):
    events.write("%s %s\n" % (what, ",".join(str(p) for p in sorted(parts))))
    events.flush()


def write(p, o, v):
    out.write("%d %d %s\n" % (p, o, v.decode()))
    out.flush()


if client == "confluent":
    from confluent_kafka import Consumer
    c = Consumer({"bootstrap.servers": broker, "group.id": group,
                  "partition.assignment.strategy": assignor, "session.timeout.ms": 6000,
                  "heartbeat.interval.ms": 500, "auto.offset.reset": "earliest",
                  "enable.auto.commit": True, "auto.commit.interval.ms": 500})
    c.subscribe([topic], on_assign=lambda c_, ps: event("assign", [p.partition for p in ps]),
                on_revoke=lambda c_, ps: event("revoke", [p.partition for p in ps]))
    while not os.path.exists(stop):
        m = c.poll(0.1)
        if m is None or m.error():
            continue
        write(m.partition(), m.offset(), m.value())
    try:
        c.commit(asynchronous=False)
    except Exception as e:  # nothing consumed since the last commit
        print("final commit: %s" % e, file=sys.stderr)
    c.close()
else:
    from kafka import KafkaConsumer, ConsumerRebalanceListener
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

    class Listener(ConsumerRebalanceListener):
        def on_partitions_assigned(self, assigned):
            event("assign", [tp.partition for tp in assigned])

        def on_partitions_revoked(self, revoked):
            event("revoke", [tp.partition for tp in revoked])

    assignors = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}
    c = KafkaConsumer(bootstrap_servers=broker, group_id=group, auto_offset_reset="earliest",
                      enable_auto_commit=True, auto_commit_interval_ms=500,
                      session_timeout_ms=6000, heartbeat_interval_ms=500,
                      partition_assignment_strategy=[assignors[assignor]])
    c.subscribe([topic], listener=Listener())
    while not os.path.exists(stop):
        for tp, msgs in c.poll(timeout_ms=100).items():
            for m in msgs:
                write(m.partition, m.offset, m.value)
    c.commit()
    c.close()
