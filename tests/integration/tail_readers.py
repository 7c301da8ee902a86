"""Reads every partition-0 record of TOPIC to the end as a member of consumer group GROUP with
one client library, commits, and checks that the client got to the end: its position is the
high watermark and so is the group's committed offset (lag 0), where the client commits (a
client that read nothing from an empty partition has nothing to commit). Prints "offset value"
per record (t_raft_entries.sh).

  tail_readers.py BROKER TOPIC GROUP kafka-python|confluent

Exits 1 with the reason if the consumer does not reach the high watermark within 30 s (a client
that stalls before a run of Raft entries, or crashes on one, shows up here), or if the committed
offset is not the high watermark."""
import sys
import time

broker, topic, group, client = sys.argv[1:5]
deadline = time.time() + 30
got = []


def fail(why):
    for o, v in got:
        print(o, v)
    sys.exit("%s: %s" % (client, why))


if client == "kafka-python":
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata
    c = KafkaConsumer(bootstrap_servers=broker, group_id=group, enable_auto_commit=False,
                      auto_offset_reset="earliest", fetch_max_wait_ms=50,
                      api_version_auto_timeout_ms=10000)
    tp = TopicPartition(topic, 0)
    c.subscribe([topic])
    hw = None
    while time.time() < deadline:
        for recs in c.poll(timeout_ms=200).values():
            got += [(r.offset, r.value.decode()) for r in recs]
        if tp not in c.assignment():
            continue
        hw = c.end_offsets([tp])[tp]
        if c.position(tp) == hw:
            break
    if hw is None or c.position(tp) != hw:
        fail("position %r, high watermark %r after 30 s" %
             (c.position(tp) if tp in c.assignment() else None, hw))
    if got:
        c.commit()
        committed = c.committed(tp)
        if committed != hw:
            fail("committed %r, high watermark %d" % (committed, hw))
    c.close()
elif client == "confluent":
    from confluent_kafka import Consumer, KafkaError, TopicPartition
    c = Consumer({"bootstrap.servers": broker, "group.id": group, "enable.auto.commit": False,
                  "auto.offset.reset": "earliest", "enable.partition.eof": True,
                  "fetch.wait.max.ms": 50})
    c.subscribe([topic])
    eof = False
    while time.time() < deadline and not eof:
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            if m.error().code() == KafkaError._PARTITION_EOF and m.partition() == 0:
                eof = True
                continue
            fail("consumer error: %s" % m.error())
        if m.partition() == 0:
            got.append((m.offset(), m.value().decode()))
    if not eof:
        fail("no end-of-partition event within 30 s")
    tp = TopicPartition(topic, 0)
    _, hw = c.get_watermark_offsets(tp, timeout=10, cached=False)
    pos = c.position([tp])[0].offset
    if pos != hw and not (pos < 0 and hw == 0):
        fail("position %d at the end-of-partition event, high watermark %d" % (pos, hw))
    if got:
        c.commit(asynchronous=False)
        committed = c.committed([tp], timeout=10)[0].offset
        if committed != hw:
            fail("committed %d, high watermark %d" % (committed, hw))
    c.close()
else:
    sys.exit("unknown client " + client)
for o, v in got:
    print(o, v)
