"""Helpers for the log compaction integration tests (t_compaction*.sh).

    compaction.py codecs BROKER DATA          100 keys x 100,000 updates + 10 tombstones per
                                              codec; latest values, then tombstones expire
    compaction.py produce BROKER TOPIC FILE N adds N updates (latest values so far in FILE)
    compaction.py verify BROKER TOPIC FILE [--final]
                                              every key's latest value is there, no older
                                              value after it; --final: exactly one record
                                              per key (waits for the cleaner)
    compaction.py offsets BROKER LOG          __consumer_offsets gets compacted
"""
import json
import os
import random
import re
import struct
import sys
import time

from confluent_kafka import (OFFSET_BEGINNING, Consumer, Producer,
                             TopicPartition)
from confluent_kafka.admin import AdminClient, NewTopic

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
KEYS = 100
UPDATES = 100_000
TOMBSTONED = 10


def log(*a):
    print("#", *a, flush=True)


def create(broker, topic, config):
    admin = AdminClient({"bootstrap.servers": broker})
    admin.create_topics([NewTopic(topic, 1, 1, config=config)])[topic].result(15)


def consume_all(broker, topic, timeout=60):
    """Every record from the beginning: [(offset, key, value)], and the high watermark. Ends at
    the high watermark, or after 2 s without records: compaction can leave the end of the log
    in an offset gap, where a consumer's position stays below the high watermark (as in
    Kafka)."""
    c = Consumer({"bootstrap.servers": broker, "group.id": "check-%s" % topic,
                  "enable.auto.commit": False, "fetch.message.max.bytes": 1 << 20})
    try:
        lo, hi = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10, cached=False)
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        out = []
        deadline = time.time() + timeout
        idle_since = time.time()
        while time.time() < deadline:
            msgs = c.consume(10000, 0.2)
            for m in msgs:
                if m.error():
                    raise RuntimeError("consume error: %s" % m.error())
                out.append((m.offset(), m.key().decode() if m.key() is not None else None,
                            m.value().decode() if m.value() is not None else None))
            if out and out[-1][0] >= hi - 1:
                return out, hi
            if msgs:
                idle_since = time.time()
            elif time.time() - idle_since > 2:
                return out, hi
        raise RuntimeError("did not reach the high watermark %d of %s (at %r)" %
                           (hi, topic, out[-1] if out else None))
    finally:
        c.close()


def check_order(records):
    """Offsets only increase."""
    offs = [o for o, _, _ in records]
    assert offs == sorted(offs) and len(set(offs)) == len(offs), "offsets out of order"


def produce_updates(broker, topic, codec, updates=UPDATES, value_pad=0, base=0, latest=None):
    """100 keys x `updates` updates, keys 10-14 deleted halfway and written again, tombstones
    for keys 0-9 near the end, then one more update. Returns the latest value of every key (None = tombstone).
    Values start with a sequence number (from base on) that grows with every write of the key;
    latest, if given, is updated and returned."""
    p = Producer({"bootstrap.servers": broker, "linger.ms": 5, "compression.codec": codec,
                  "batch.num.messages": 2000, "queue.buffering.max.messages": 500000})
    latest = {} if latest is None else latest
    pad = "p" * value_pad
    rnd = random.Random(7 + base)
    for i in range(updates):
        # key j stops being updated (j+1)% of the way through, so the survivors are spread
        # over the whole log: many batches and segments, gaps everywhere
        k = "key-%03d" % rnd.randrange(i * KEYS // updates, KEYS)
        if i == updates // 2:
            for j in range(10, 15):  # deleted, then written again
                kk = "key-%03d" % j
                p.produce(topic, key=kk, value=None)
                latest[kk] = "%07d:%s:again%s" % (base + i, kk, pad)
                p.produce(topic, key=kk, value=latest[kk])
        if value_pad:  # random hex: the log stays large after compression
            pad = "%0*x" % (value_pad, rnd.getrandbits(4 * value_pad))
        v = "%07d:%s:%s" % (base + i, k, pad)
        while True:
            try:
                p.produce(topic, key=k, value=v)
                break
            except BufferError:
                p.poll(0.1)
        latest[k] = v
        if i % 20000 == 0:
            p.poll(0)
    for j in range(TOMBSTONED):
        p.produce(topic, key="key-%03d" % j, value=None)
        latest["key-%03d" % j] = None
    p.flush(60)
    # the topic goes on: a last live write after the tombstones (the batch that ends a log is
    # never removed, so tombstones in it would outlive delete.retention.ms while it is idle)
    k = "key-%03d" % (KEYS - 1)
    latest[k] = "%07d:%s:last%s" % (base + updates, k, pad)
    p.produce(topic, key=k, value=latest[k])
    left = p.flush(60)
    assert left == 0, "%d records not delivered" % left
    return latest


def segment_batches(dirpath):
    """(attributes, records) of every batch in the partition's segment files."""
    out = []
    for name in sorted(os.listdir(dirpath)):
        if not name.endswith(".log"):
            continue
        data = open(os.path.join(dirpath, name), "rb").read()
        pos = 0
        while pos + 61 <= len(data):
            length = struct.unpack(">i", data[pos + 8:pos + 12])[0]
            attrs = struct.unpack(">h", data[pos + 21:pos + 23])[0]
            count = struct.unpack(">i", data[pos + 57:pos + 61])[0]
            out.append((attrs, count))
            pos += length + 12
        assert pos == len(data), "%s: trailing bytes" % name
    return out


def state(records):
    last = {}
    for _, k, v in records:
        last[k] = v
    return last


def codecs(broker, data):
    topics = {}
    for name in CODECS:
        t = "cmp-" + name
        create(broker, t, {"cleanup.policy": "compact", "segment.bytes": "131072",
                           "segment.ms": "1000", "min.cleanable.dirty.ratio": "0.01",
                           "delete.retention.ms": "20000"})
        t0 = time.time()
        topics[t] = (name, produce_updates(broker, t, name))
        log("%s: produced %d updates + tombstones in %.1fs" % (t, UPDATES, time.time() - t0))
    # 1. compacted, tombstones still there: exactly one record per key, the latest
    pending = dict(topics)
    deadline = time.time() + 90
    while pending and time.time() < deadline:
        for t in list(pending):
            name, latest = pending[t]
            recs, hi = consume_all(broker, t)
            if len(recs) != KEYS:
                continue
            check_order(recs)
            got = state(recs)
            assert got == latest, "%s: wrong values %r" % (
                t, {k: (v, latest.get(k)) for k, v in got.items() if latest.get(k) != v})
            assert len(got) == KEYS and sum(v is None for v in got.values()) == TOMBSTONED
            assert hi == UPDATES + 21, (t, hi)  # offsets kept: the high watermark did not move
            # the cleaned batches still use the producer's codec
            batches = segment_batches(os.path.join(data, t + "-0"))
            codec = CODECS[name]
            with_records = [(a & 7, n) for a, n in batches if n > 0 and not a & 0x20]
            # librdkafka sends a batch uncompressed when compression does not pay: our last,
            # single-record one, and the one before it when linger.ms ran out with only a few
            # of the tombstones queued (a run under load failed on a 3-record one); every other
            # keeps the producer's codec through cleaning
            last = len(with_records) - 1
            odd = [(i, c, n) for i, (c, n) in enumerate(with_records)
                   if c != codec and not (c == 0 and i >= last - 1)]
            assert not odd and sum(c == codec for c, _ in with_records) >= 10, (t, odd)
            log("%s: %d records (90 live, 10 tombstones), %d batches on disk, codec %s kept"
                % (t, len(recs), len(batches), name))
            del pending[t]
        time.sleep(0.5)
    assert not pending, "not compacted in time: %s" % sorted(pending)
    # 2. after delete.retention.ms the tombstones go, the live keys stay
    pending = dict(topics)
    deadline = time.time() + 90
    while pending and time.time() < deadline:
        for t in list(pending):
            name, latest = pending[t]
            recs, _ = consume_all(broker, t)
            if len(recs) != KEYS - TOMBSTONED:
                continue
            live = {k: v for k, v in latest.items() if v is not None}
            assert state(recs) == live, t
            log("%s: tombstones removed after delete.retention.ms, %d live keys" % (t, len(recs)))
            del pending[t]
        time.sleep(1)
    assert not pending, "tombstones not removed in time: %s" % sorted(pending)
    # another client library over the same gaps
    from kafka import KafkaConsumer, TopicPartition as KTP
    kc = KafkaConsumer(bootstrap_servers=broker, enable_auto_commit=False,
                       auto_offset_reset="earliest", consumer_timeout_ms=3000)
    kc.assign([KTP("cmp-gzip", 0)])
    got = {}
    for m in kc:
        got[m.key.decode()] = m.value.decode() if m.value is not None else None
    kc.close()
    live = {k: v for k, v in topics["cmp-gzip"][1].items() if v is not None}
    assert got == live, "kafka-python sees %d keys" % len(got)
    log("kafka-python reads the compacted gzip topic: %d keys" % len(got))


def produce_more(broker, topic, path, updates):
    """Adds updates to the topic (created on first use); the latest values so far are in
    path (a JSON file), with the next sequence number."""
    if os.path.exists(path):
        st = json.load(open(path))
    else:
        create(broker, topic, {"cleanup.policy": "compact", "segment.bytes": "1048576",
                               "segment.ms": "2000", "min.cleanable.dirty.ratio": "0.01"})
        st = {"next": 0, "latest": {}}
    t0 = time.time()
    produce_updates(broker, topic, "gzip", updates=updates, value_pad=120, base=st["next"],
                    latest=st["latest"])
    st["next"] += updates + 1
    json.dump(st, open(path, "w"))
    log("produced %d updates in %.1fs" % (updates, time.time() - t0))


def verify(broker, topic, path, final):
    latest = json.load(open(path))["latest"]
    deadline = time.time() + (120 if final else 0)
    while True:
        recs, hi = consume_all(broker, topic, timeout=120)
        check_order(recs)
        seqs = {}
        for o, k, v in recs:
            if v is not None:
                s = int(v.split(":")[0])
                assert s > seqs.get(k, -1), "key %s: value %d after %d" % (k, s, seqs[k])
                seqs[k] = s
        got = state(recs)
        assert got == latest, "latest values lost: %r" % (
            {k: (got.get(k), v) for k, v in latest.items() if got.get(k) != v})
        if not final or len(recs) == KEYS or time.time() > deadline:
            break
        time.sleep(1)
    if final:
        assert len(recs) == KEYS, "not fully compacted: %d records" % len(recs)
    log("all %d latest values present (%d records, high watermark %d)" % (len(latest), len(recs),
                                                                          hi))


def offsets(broker, logpath):
    """__consumer_offsets is compacted: 20 groups commit through the group coordinator, the
    cleaner compacts the partitions they landed in, and every group's last commit is still
    there. A commit that fails is a test failure (the broker always has a coordinator)."""
    create(broker, "data", {})
    expect = {}
    log("committing offsets through the group coordinator")
    cs = [Consumer({"bootstrap.servers": broker, "group.id": "g-%d" % g,
                    "enable.auto.commit": False}) for g in range(20)]
    for i in range(3000):
        g = i % 20
        cs[g].commit(offsets=[TopicPartition("data", 0, i)], asynchronous=False)
        expect[g] = i
        if i % 1000 == 999:
            time.sleep(1.2)  # let log.roll.ms (1 s) pass, so the next commits roll a segment
    for c in cs:
        c.close()
    # the cleaner compacts some partition of __consumer_offsets
    deadline = time.time() + 60
    pat = re.compile(r"event=log_cleaned dir=\S*/__consumer_offsets-\d+ .*records_removed=(\d+)")
    removed = 0
    while time.time() < deadline and removed == 0:
        removed = sum(int(m.group(1)) for m in pat.finditer(open(logpath).read()))
        time.sleep(0.5)
    assert removed > 0, "__consumer_offsets was never cleaned (waited 60 s for event=log_cleaned)"
    log("__consumer_offsets cleaned: %d records removed" % removed)
    for g, off in expect.items():
        c = Consumer({"bootstrap.servers": broker, "group.id": "g-%d" % g,
                      "enable.auto.commit": False})
        got = c.committed([TopicPartition("data", 0)], timeout=10)[0].offset
        c.close()
        assert got == off, "group g-%d: committed %d, expected %d" % (g, got, off)
    log("every group's last commit is still there")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "codecs":
        codecs(sys.argv[2], sys.argv[3])
    elif cmd == "produce":
        produce_more(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    elif cmd == "verify":
        verify(sys.argv[2], sys.argv[3], sys.argv[4], "--final" in sys.argv)
    elif cmd == "offsets":
        offsets(sys.argv[2], sys.argv[3])
    else:
        sys.exit("unknown command " + cmd)
