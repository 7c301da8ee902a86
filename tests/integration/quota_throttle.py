"""Quotas enforced: with producer_byte_rate 100000 for client-id "slow" (set by
platformatic_quotas.mjs), an idempotent producer with client.id slow that sends 1.5 MB is held
back: the broker answers with throttle_time_ms (librdkafka's statistics show it) and holds the
responses, so the send takes seconds; the same load from client.id fast is not throttled.
Only lower bounds on time are asserted (the machine may be slow, never too fast).

usage: quota_throttle.py BOOTSTRAP"""
import json
import sys
import time

from confluent_kafka import Producer

BOOT = sys.argv[1]


def run(client_id):
    stats = []
    p = Producer({"bootstrap.servers": BOOT, "client.id": client_id, "acks": "all",
                  "enable.idempotence": True, "linger.ms": 5, "batch.size": 65536,
                  "statistics.interval.ms": 200,
                  "stats_cb": lambda s: stats.append(json.loads(s))})
    value = b"q" * 1000
    t0 = time.time()
    for _ in range(1500):
        while True:
            try:
                p.produce("quota-topic", value=value)
                break
            except BufferError:
                p.poll(0.05)
        p.poll(0)
    assert p.flush(60) == 0, "undelivered records"
    took = time.time() - t0
    p.poll(0.5)  # one more statistics report
    throttle = max((b.get("throttle", {}).get("max", 0) for s in stats
                    for b in s.get("brokers", {}).values()), default=0)
    return took, throttle


fast, fast_throttle = run("fast")
slow, slow_throttle = run("slow")
print("client.id fast: 1.5 MB in %.2f s, max throttle %d ms; client.id slow (100000 B/s): "
      "%.2f s, max throttle %d ms" % (fast, fast_throttle, slow, slow_throttle))
assert fast_throttle == 0, fast_throttle
assert slow_throttle > 0, "librdkafka saw no throttle_time_ms"
assert slow >= 2.0, "the quota did not slow the producer down (%.2f s)" % slow
