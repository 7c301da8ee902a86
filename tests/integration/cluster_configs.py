"""Topic configs through confluent_kafka.admin, for t_cluster_configs.sh.

  cluster_configs.py create BROKER TOPIC PARTITIONS RF [key=value ...]
  cluster_configs.py alter BROKER TOPIC [key=value ...]      (replaces the topic's overrides)
  cluster_configs.py validate BROKER TOPIC [key=value ...]   (the same, validate_only)
  cluster_configs.py produce BROKER TOPIC COUNT SIZE         COUNT records of SIZE bytes, acks=all
  cluster_configs.py describe BROKER TOPIC KEY...            prints "KEY VALUE SOURCE" lines
  cluster_configs.py wait BROKER TOPIC SECONDS KEY=VALUE[:SOURCE]...
      describes until every KEY has VALUE (and SOURCE, e.g. DYNAMIC_TOPIC_CONFIG or
      DEFAULT_CONFIG), or fails after SECONDS printing what it saw.
Exits 0 on success, 1 (message on stderr) otherwise."""
import sys
import time

from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, NewTopic


def admin(broker):
    return AdminClient({"bootstrap.servers": broker})


def kv(args):
    out = {}
    for a in args:
        k, v = a.split("=", 1)
        out[k] = v
    return out


def source_name(s):
    try:
        return ConfigSource(s).name
    except (ValueError, TypeError):
        return getattr(s, "name", str(s))


def describe(a, topic):
    res = ConfigResource(ConfigResource.Type.TOPIC, topic)
    for _r, f in a.describe_configs([res], request_timeout=10).items():
        return {k: (e.value, source_name(e.source)) for k, e in f.result().items()}
    return {}


def main():
    cmd, broker, topic = sys.argv[1], sys.argv[2], sys.argv[3]
    a = admin(broker)
    if cmd == "create":
        nt = NewTopic(topic, int(sys.argv[4]), int(sys.argv[5]), config=kv(sys.argv[6:]))
        for _t, f in a.create_topics([nt], request_timeout=10).items():
            f.result()
    elif cmd in ("alter", "validate"):
        res = ConfigResource(ConfigResource.Type.TOPIC, topic, set_config=kv(sys.argv[4:]))
        fs = a.alter_configs([res], request_timeout=10, validate_only=cmd == "validate")
        for _r, f in fs.items():
            f.result()
    elif cmd == "produce":
        from confluent_kafka import Producer

        p = Producer({"bootstrap.servers": broker, "acks": "all", "linger.ms": 5,
                      "enable.idempotence": True, "message.timeout.ms": 30000,
                      "batch.size": 4096})
        errors = []

        def report(err, _msg):
            if err:
                errors.append(err)

        for i in range(int(sys.argv[4])):
            p.produce(topic, value=(b"%08d" % i) * (int(sys.argv[5]) // 8), on_delivery=report)
            p.poll(0)
        left = p.flush(30)
        if left or errors:
            sys.exit("produce: %d undelivered, errors %s" % (left, errors[:3]))
    elif cmd == "describe":
        got = describe(a, topic)
        for k in sys.argv[4:]:
            v, s = got.get(k, (None, None))
            print(k, v, s)
    elif cmd == "wait":
        deadline = time.time() + float(sys.argv[4])
        want = {}
        for w in sys.argv[5:]:
            k, rest = w.split("=", 1)
            v, _, s = rest.partition(":")
            want[k] = (v, s or None)
        while True:
            try:
                got = describe(a, topic)
            except Exception as e:  # noqa: BLE001 - the topic may not be known here yet
                got = {"error": (str(e), None)}
            ok = all(
                k in got and got[k][0] == v and (s is None or got[k][1] == s)
                for k, (v, s) in want.items()
            )
            if ok:
                return
            if time.time() > deadline:
                seen = {k: got.get(k) for k in want}
                sys.exit("%s: want %s, got %s" % (broker, want, seen))
            time.sleep(0.1)
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001
        sys.exit("%s failed: %s" % (sys.argv[1], e))
