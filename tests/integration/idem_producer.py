"""An idempotent librdkafka producer (python3-confluent-kafka) for the t_idempotence_* tests.

  idem_producer.py BROKER TOPIC COUNT ACKED_FILE [--partitions N] [--rate R] [-X key=value]...

Record i (0 <= i < COUNT) has the value "i" and goes to partition i % N, so each partition's
values must come back in increasing order. Every delivery report is appended to ACKED_FILE as
"partition offset value" (the offset the broker acknowledged); a line "progress N" goes to
stdout every 1000 deliveries. Produces at most R records per second (0: as fast as it can).
Exits 0 once every record is delivered without error, 1 otherwise (the errors are printed)."""
import sys
import time

from confluent_kafka import Producer


def main():
    args = sys.argv[1:]
    broker, topic, count, acked_path = args[0], args[1], int(args[2]), args[3]
    parts, rate = 2, 0
    conf = {
        "bootstrap.servers": broker,
        "enable.idempotence": True,
        "linger.ms": 5,
        "message.timeout.ms": 120000,
        "reconnect.backoff.ms": 50,
        "reconnect.backoff.max.ms": 500,
        "retry.backoff.ms": 50,
    }
    i = 4
    while i < len(args):
        if args[i] == "--partitions":
            parts = int(args[i + 1])
        elif args[i] == "--rate":
            rate = float(args[i + 1])
        elif args[i] == "-X":
            k, v = args[i + 1].split("=", 1)
            conf[k] = v
        else:
            sys.exit("unknown argument " + args[i])
        i += 2

    acked = open(acked_path, "a", buffering=1)
    state = {"ok": 0, "errors": []}

    def report(err, msg):
        if err is not None:
            state["errors"].append("%s: %s" % (msg.value(), err))
            return
        acked.write("%d %d %s\n" % (msg.partition(), msg.offset(), msg.value().decode()))
        state["ok"] += 1
        if state["ok"] % 1000 == 0:
            print("progress %d" % state["ok"], flush=True)

    def on_error(err):
        print("client error: %s" % err, flush=True)
        if err.fatal():
            state["errors"].append("fatal: %s" % err)

    conf["error_cb"] = on_error
    p = Producer(conf)
    start = time.monotonic()
    for n in range(count):
        if rate > 0:
            ahead = n / rate - (time.monotonic() - start)
            if ahead > 0:
                time.sleep(ahead)
        while True:
            try:
                p.produce(topic, value=str(n).encode(), partition=n % parts, on_delivery=report)
                break
            except BufferError:
                p.poll(0.05)
        p.poll(0)
        if state["errors"]:
            break
    left = p.flush(150)
    acked.close()
    print("delivered %d of %d, %d errors, %d undelivered, %.1f s" %
          (state["ok"], count, len(state["errors"]), left, time.monotonic() - start), flush=True)
    for e in state["errors"][:10]:
        print("error: " + e, flush=True)
    sys.exit(0 if state["ok"] == count and not state["errors"] and left == 0 else 1)


if __name__ == "__main__":
    main()
