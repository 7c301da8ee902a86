"""The schema registry at a broker without a replica of `_schemas` (t_registry_follow.sh).

registry_follow.py rw NODE_URL N             registrations at NODE_URL, each read back there
                                             at once (read-your-writes through the follower)
registry_follow.py validate NODE_URL OTHER_URL BOOTSTRAP N TOPIC
    a partition of TOPIC lives on broker N only, with value validation: a schema registered
    at OTHER_URL, once read at NODE_URL (N's registry), makes a record framed with its id go
    through N; an unknown id is refused with INVALID_RECORD
registry_follow.py listed NODE_URL COUNT     GET /subjects at NODE_URL lists the COUNT
                                             subjects rw wrote, and their ids read back
"""
import json
import struct
import sys

import requests

CT = {"Content-Type": "application/vnd.schemaregistry.v1+json"}


def register(url, subject, schema):
    r = requests.post(f"{url}/subjects/{subject}/versions", headers=CT,
                      data=json.dumps({"schema": schema}), timeout=15)
    assert r.status_code == 200, (subject, r.status_code, r.text)
    return r.json()["id"]


def schema_of(i):
    return json.dumps({"type": "record", "name": f"F{i}",
                       "fields": [{"name": "x", "type": "int"}]}, separators=(",", ":"))


def rw(url, n):
    for i in range(n):
        sid = register(url, f"f{i}-value", schema_of(i))
        r = requests.get(f"{url}/schemas/ids/{sid}", timeout=15)
        assert r.status_code == 200 and r.json()["schema"] == schema_of(i), (i, sid, r.text)
        r = requests.get(f"{url}/subjects/f{i}-value/versions", timeout=15)
        assert r.status_code == 200 and r.json() == [1], (i, r.text)
    print(f"{n} registrations read back at once at the broker that took them")


def validate(url, other, bootstrap, node, topic):
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futs = admin.create_topics([NewTopic(topic, num_partitions=6, replication_factor=1,
                                         config={"confluent.value.schema.validation": "true"})])
    futs[topic].result(15)
    # a partition whose one replica is broker `node` (replicas are spread over the brokers)
    md = admin.list_topics(topic, timeout=15).topics[topic]
    mine = [p.id for p in md.partitions.values() if p.replicas == [int(node)]]
    assert mine, ("no partition of %s on broker %s" % (topic, node),
                  {p.id: p.replicas for p in md.partitions.values()})
    part = mine[0]
    # a schema of its own: a new id, registered after whatever happened before
    sid = register(other, f"{topic}-value",
                   json.dumps({"type": "enum", "name": f"E_{topic}", "symbols": ["A"]},
                              separators=(",", ":")))
    r = requests.get(f"{url}/schemas/ids/{sid}", timeout=15)
    assert r.status_code == 200, (sid, r.text)
    results = {}

    def produce(name, value):
        p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0,
                      "enable.idempotence": False, "message.send.max.retries": 5,
                      "retry.backoff.ms": 200})
        p.produce(topic, partition=part, value=value, on_delivery=lambda err, msg: results.__setitem__(name, err))
        left = p.flush(15)
        assert left == 0, (name, "not delivered in 15 s")
        return results[name]

    frame = b"\0" + struct.pack(">i", sid) + b"\x04hi"
    err = produce("good", frame)
    assert err is None, ("a record with id %d refused at broker %s" % (sid, node), err)
    err = produce("unknown", b"\0" + struct.pack(">i", sid + 1000) + b"x")
    assert err is not None and err.name() == "INVALID_RECORD", ("unknown id", err)
    print(f"broker {node} took id {sid} and refused an unknown one: {err.str()}")


def listed(url, n):
    r = requests.get(f"{url}/subjects", timeout=15)
    assert r.status_code == 200, r.text
    got = sorted(s for s in r.json() if s.startswith("f"))
    want = sorted(f"f{i}-value" for i in range(n))
    assert got == want, (got, want)
    for i in range(n):
        r = requests.get(f"{url}/subjects/f{i}-value/versions/1", timeout=15)
        assert r.status_code == 200 and r.json()["schema"] == schema_of(i), (i, r.text)
    print(f"{n} subjects listed and read")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "rw":
        rw(args[0], int(args[1]))
    elif cmd == "validate":
        validate(*args)
    elif cmd == "listed":
        listed(args[0], int(args[1]))
    else:
        sys.exit(f"unknown command {cmd}")
