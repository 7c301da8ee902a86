"""Reads partition 0 of TOPIC from the beginning until its position reaches END_OFFSET (the
offset after the last data record) with one client library and prints "offset value" per
record (t_control_batches.sh).

  control_consume.py BROKER TOPIC END_OFFSET kafka-python|confluent MAX_PARTITION_FETCH_BYTES

Exits 1 if the consumer does not reach END_OFFSET within 30 s (a client that stalls on, or
crashes at, a record-less control batch shows up here; one that jumps over data, in the
printed records)."""
import sys
import time

broker, topic, end, client, maxb = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], \
    int(sys.argv[5])
deadline = time.time() + 30
got = []
if client == "kafka-python":
    from kafka import KafkaConsumer, TopicPartition
    c = KafkaConsumer(bootstrap_servers=broker, enable_auto_commit=False,
                      max_partition_fetch_bytes=maxb, fetch_max_bytes=max(maxb, 1024),
                      fetch_max_wait_ms=50, api_version_auto_timeout_ms=10000)
    tp = TopicPartition(topic, 0)
    c.assign([tp])
    c.seek_to_beginning(tp)
    while time.time() < deadline and c.position(tp) < end:
        for recs in c.poll(timeout_ms=200).values():
            got += [(r.offset, r.value.decode()) for r in recs]
    pos = c.position(tp)
    c.close()
elif client == "confluent":
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition
    c = Consumer({"bootstrap.servers": broker, "group.id": "control-batches",
                  "enable.auto.commit": False, "enable.partition.eof": True,
                  "max.partition.fetch.bytes": maxb, "fetch.max.bytes": max(maxb, 1024),
                  "message.max.bytes": 1000,
                  "fetch.wait.max.ms": 50})
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    pos = 0
    while time.time() < deadline:
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            if m.error().code() == KafkaError._PARTITION_EOF:
                pos = m.offset()
                if pos >= end:
                    break
                continue
            sys.exit("consumer error: %s" % m.error())
        got.append((m.offset(), m.value().decode()))
        # librdkafka reports EOF only at HW: a consumer held before a trailing record-less
        # batch never sees one, so its position is what counts
        pos = max(pos, m.offset() + 1)
        if pos >= end:
            break
    c.close()
else:
    sys.exit("unknown client " + client)
for o, v in got:
    print(o, v)
if pos < end:
    sys.exit("%s stopped at offset %d, the log ends at %d" % (client, pos, end))
