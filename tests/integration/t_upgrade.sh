#!/usr/bin/env bash
# Upgrade in place (issue 12, point 3): a data directory the last single-node release wrote
# (tests/fixtures/legacy-single-node.tar.gz, made by tests/fixtures/make_legacy_single_node.sh;
# what it holds is in legacy-single-node.json) opens in this release with no manual step: its
# topics go into the metadata log (configs included), its logs become Raft logs with every
# record at its offset, both groups' committed offsets are there, and the idempotent producer
# of that era goes on: its last batch sent again is a duplicate (the original offset, nothing
# appended) and its next batch lands right after. New producer ids are above its id. A restart
# (clean, then kill -9) opens the upgraded directory as it is.
# timeout: 120
source "$(dirname "$0")/lib.sh"
FIX=$ROOT/tests/fixtures
tar -C "$TMP" -xzf "$FIX/legacy-single-node.tar.gz"
[ -d "$DATA" ] || fail "the fixture holds no data directory"
[ ! -e "$DATA/__cluster_metadata-0" ] || fail "the fixture already has a metadata log"
# The fixture's records carry the time it was made: its producer's state would expire a day
# later (producer.id.expiration.ms, as Kafka's), and the test with it. Kept for 100 years.
KEEP=(--set producer.id.expiration.ms=3153600000000)
start_broker "${KEEP[@]}"
grep -q 'event=legacy_upgrade_done' "$BROKER_LOG" || fail "no upgrade logged"
note "upgraded: $(grep -c 'event=legacy_topic_imported' "$BROKER_LOG") topics imported"

check() { # the fixture's topics, configs, records and commits, and its producer going on
    PYTHONPATH="$ROOT/tests/integration" $PY - "$BROKER" "$FIX/legacy-single-node.json" "$1" <<'PYEOF'
import json, sys
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource
import kwire
from idem_wire import ibatch, init_producer_id, produce
from kgroup import Client

broker, fx, phase = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]
a = AdminClient({"bootstrap.servers": broker})
md = a.list_topics(timeout=10)
for t, want in fx["topics"].items():
    assert t in md.topics and len(md.topics[t].partitions) == want["partitions"], (t, md.topics.get(t))
    res = a.describe_configs([ConfigResource("topic", t)])
    cfg = list(res.values())[0].result()
    for k, v in want["configs"].items():
        assert cfg[k].value == v, (t, k, cfg[k].value, v)
print("# topics, partition counts and configs as the fixture has them")
c = Consumer({"bootstrap.servers": broker, "group.id": "upgrade-check", "enable.auto.commit": False,
              "enable.partition.eof": True})
extra = 2 if phase != "first" else 0
for tp, values in fx["records"].items():
    t, p = tp.rsplit("-", 1)
    p = int(p)
    if phase != "first" and tp == "plain-0":
        values = values + ["idem-next-0", "idem-next-1"]
    c.assign([TopicPartition(t, p, 0)])
    got, eof = [], False
    while not eof:
        m = c.poll(10)
        assert m is not None, "no answer reading %s" % tp
        if m.error():
            eof = True
            continue
        got.append((m.offset(), m.value().decode()))
    assert got == list(enumerate(values)), (tp, got, values)
c.close()
print("# every record at its offset")
g = Client(broker, "upgrade")
for group, offs in fx["committed"].items():
    for tp, want in offs.items():
        t, p = tp.rsplit("-", 1)
        got, err = g.fetch_offsets(group, t, [int(p)])
        assert err == 0 and got[(t, int(p))][0] == want, (group, tp, got, want)
g.close()
print("# committed offsets of both groups")
pr = fx["producer"]
host, port = broker.rsplit(":", 1)
conn = kwire.Conn(host, int(port))
last = pr["last_batch"]
err, base = produce(conn, pr["topic"], ibatch(last["count"], pr["id"], pr["epoch"], last["seq"],
                                              last["tag"].encode()))
assert (err, base) == (0, last["base_offset"]), ("the last batch again", err, base, last)
if phase == "first":
    nxt = last["seq"] + last["count"]
    err, base = produce(conn, pr["topic"], ibatch(2, pr["id"], pr["epoch"], nxt, b"idem-next"))
    assert err == 0 and base == len(fx["records"]["plain-0"]), ("the next batch", err, base)
else:  # it is a duplicate now
    nxt = last["seq"] + last["count"]
    err, base = produce(conn, pr["topic"], ibatch(2, pr["id"], pr["epoch"], nxt, b"idem-next"))
    assert err == 0 and base == len(fx["records"]["plain-0"]), ("the next batch again", err, base)
err, pid, epoch = init_producer_id(conn, 4)
assert err == 0 and pid > pr["id"], ("a new producer id", err, pid, pr["id"])
conn.close()
print("# the producer of the fixture's era goes on: duplicate answered with offset %d, next batch"
      " at %d; a new producer id %d > %d" % (last["base_offset"], base, pid, pr["id"]))
PYEOF
}
check first || fail "the upgraded directory does not hold what the fixture had"
stop_broker
start_broker "${KEEP[@]}"
grep -c 'event=legacy_upgrade_started' "$BROKER_LOG" | grep -qx 1 || fail "the upgrade ran again"
check restarted || fail "not all there after a clean restart"
kill9_broker
start_broker "${KEEP[@]}"
check killed || fail "not all there after kill -9"
stop_broker
