"""Produces records one request at a time with acks=all and no retries, and reports for each
whether it was acknowledged (and where) or failed (and with which error), so a test can check
what a storage fault does to producers.

usage: faulty_producer.py BROKER TOPIC COUNT PREFIX OUT_FILE [PAD_BYTES]
OUT_FILE lines: "ok PARTITION OFFSET VALUE" or "err CODE_NAME VALUE"."""
import sys

from confluent_kafka import Producer

broker, topic, count, prefix, out_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
pad = b"x" * (int(sys.argv[6]) if len(sys.argv) > 6 else 0)
p = Producer({"bootstrap.servers": broker, "acks": "all", "retries": 0, "linger.ms": 0,
              "message.max.bytes": 1000000,
              "message.timeout.ms": 10000, "request.timeout.ms": 5000})
out = open(out_path, "w", buffering=1)


def report(err, msg):
    v = msg.value().split(b"|")[0].decode()
    if err is None:
        out.write("ok %d %d %s\n" % (msg.partition(), msg.offset(), v))
    else:
        out.write("err %s %s\n" % (err.name(), v))


for i in range(count):
    p.produce(topic, value=("%s-%d|" % (prefix, i)).encode() + pad, partition=0, on_delivery=report)
    p.flush(15)
out.close()
