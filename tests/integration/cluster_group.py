"""Consumer-group client for t_cluster_groups (python3-confluent-kafka and the raw wire).

usage:
  cluster_group.py consume BOOT TOPIC GROUP OUT STOP_AFTER
      Subscribes GROUP to TOPIC and consumes; appends "partition offset value" per record to OUT
      and, after every successful synchronous commit (one per 50 records and at the end), one
      JSON line {partition: next offset} to OUT.commits. A failed commit (the coordinator moving)
      is retried for up to 30 s. Stops after STOP_AFTER records, or after 10 s without a record;
      commits, closes (leaving the group) and prints the last commit.
  committed BOOT TOPIC GROUP NPARTS
      Prints {partition: committed offset} as JSON, retrying for up to 30 s while the group's
      coordinator is unavailable (-1001 = no offset counts as an answer).
  coordinator BOOT GROUP
      FindCoordinator (v0, raw wire) at the first broker of BOOT until it names a node (10 s):
      prints the node id.
"""
import json
import struct
import sys
import time

from confluent_kafka import Consumer, KafkaException, TopicPartition

RETRY_S = 30.0


def conf(boot, group):
    return {"bootstrap.servers": boot, "group.id": group, "auto.offset.reset": "earliest",
            "enable.auto.commit": False, "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500, "topic.metadata.refresh.interval.ms": 1000}


def commit_sync(c):
    """Commits the consumer's positions; returns {partition: offset} or None if nothing."""
    end = time.monotonic() + RETRY_S
    while True:
        try:
            parts = c.commit(asynchronous=False)
            return {tp.partition: tp.offset for tp in parts or [] if tp.offset >= 0}
        except KafkaException as e:
            if e.args[0].code() == -168:  # _NO_OFFSET: nothing consumed since the last commit
                return None
            if time.monotonic() > end:
                raise
            print("# commit retried: %s" % e.args[0], flush=True)
            time.sleep(0.2)


def consume(boot, topic, group, out_path, stop_after):
    c = Consumer(conf(boot, group))
    c.subscribe([topic])
    out = open(out_path, "a")
    commits = open(out_path + ".commits", "a")
    n, since_commit, last = 0, 0, time.monotonic()
    final = {}

    def do_commit():
        got = commit_sync(c)
        if got:
            final.update(got)
            commits.write(json.dumps(got) + "\n")
            commits.flush()

    while n < stop_after and time.monotonic() - last < 10.0:
        m = c.poll(0.2)
        if m is None or m.error():
            continue
        last = time.monotonic()
        out.write("%d %d %s\n" % (m.partition(), m.offset(), m.value().decode()))
        out.flush()
        n += 1
        since_commit += 1
        if since_commit >= 50:
            do_commit()
            since_commit = 0
    do_commit()
    c.close()
    print(json.dumps(final, sort_keys=True))


def committed(boot, topic, group, nparts):
    c = Consumer(conf(boot, group))
    end = time.monotonic() + RETRY_S
    while True:
        try:
            got = c.committed([TopicPartition(topic, p) for p in range(nparts)], timeout=5)
            break
        except KafkaException as e:
            if time.monotonic() > end:
                raise
            print("# committed retried: %s" % e.args[0], file=sys.stderr, flush=True)
            time.sleep(0.2)
    c.close()
    print(json.dumps({tp.partition: tp.offset for tp in got}, sort_keys=True))


def coordinator(boot, group):
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    import kwire
    host, port = boot.split(",")[0].split(":")
    end = time.monotonic() + 10.0
    while True:
        conn = kwire.Conn(host, int(port))
        conn.send(kwire.request(10, 0, kwire.string(group)))
        f = conn.recv_frame()
        conn.close()
        _corr, err, node = struct.unpack_from(">ihi", f, 0)
        if err == 0:
            print(node)
            return
        if time.monotonic() > end:
            raise SystemExit("FindCoordinator: error %d" % err)
        time.sleep(0.1)


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "consume":
        consume(args[0], args[1], args[2], args[3], int(args[4]))
    elif mode == "committed":
        committed(args[0], args[1], args[2], int(args[3]))
    elif mode == "coordinator":
        coordinator(args[0], args[1])
    else:
        raise SystemExit(__doc__)
