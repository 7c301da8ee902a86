"""Produces numbered records with acks=all until a stop file appears, appending each
acknowledged record as "partition offset value" to a log (fsynced), so a test can check
after broker crashes that every acknowledged record sits at its acknowledged offset.

usage: acked_producer.py BROKER TOPIC ACKED_LOG STOP_FILE [idempotent]"""
import os
import sys
import time

from confluent_kafka import Producer

broker, topic, acked_path, stop_path = sys.argv[1:5]
idempotent = len(sys.argv) > 5 and sys.argv[5] == "idempotent"
conf = {
    "bootstrap.servers": broker,
    "acks": "all",
    "linger.ms": 2,
    "message.timeout.ms": 60000,
    "retry.backoff.ms": 100,
    "reconnect.backoff.max.ms": 200,
}
if idempotent:
    conf["enable.idempotence"] = True
p = Producer(conf)
out = open(acked_path, "a", buffering=1)
errors = 0


def on_delivery(err, msg):
    global errors
    if err is None:
        out.write("%d %d %s\n" % (msg.partition(), msg.offset(), msg.value().decode()))
    else:
        errors += 1


i = 0
while not os.path.exists(stop_path):
    try:
        p.produce(topic, value=("rec-%08d" % i).encode(), key=str(i % 13).encode(),
                  on_delivery=on_delivery)
        i += 1
    except BufferError:
        p.poll(0.05)
    p.poll(0)
    if i % 200 == 0:
        time.sleep(0.005)
left = p.flush(90)
out.flush()
os.fsync(out.fileno())
print("produced=%d unflushed=%d delivery_errors=%d" % (i, left, errors))
