"""Registrations against a three-node cluster's registries while the `_schemas` leader is
killed (registry_cluster.py register URL... OUT): registers schemas one after another at the
given registries in turn, retrying a failed request (at the next registry) until it is
answered, for a bounded time; writes every acknowledged (subject, schema, id) to OUT as JSON
lines. `check URL OUT` then verifies at URL that every acknowledged registration is there with
its id, and that no id names two schemas.

A retried registration may have been applied before its answer was lost: registering the same
schema again gives the id it already has, so a retry never makes a second id."""
import json
import sys
import time

import requests

CT = {"Content-Type": "application/vnd.schemaregistry.v1+json"}
N = 60


def schema(i):
    return json.dumps({"type": "record", "name": "R%d" % i,
                       "fields": [{"name": "f", "type": "long"}]})


def register(urls, out):
    acked = []
    deadline = time.time() + 60
    k = 0
    retried = 0
    for i in range(N):
        subject = "s%d-value" % (i % 7)
        body = json.dumps({"schema": schema(i)})
        while True:
            if time.time() > deadline:
                sys.exit("registration %d not answered within 60 s" % i)
            url = urls[k % len(urls)]
            try:
                r = requests.post("%s/subjects/%s/versions" % (url, subject), data=body,
                                  headers=CT, timeout=10)
            except requests.RequestException:
                k += 1
                retried += 1
                continue
            if r.status_code == 200:
                acked.append({"subject": subject, "i": i, "id": r.json()["id"]})
                break
            if r.status_code // 100 == 4:  # the test's level is NONE: nothing is refused
                sys.exit("%d for registration %d: %s" % (r.status_code, i, r.text))
            k += 1  # 5xx (no leader, forwarding failed): ask another node
            retried += 1
            time.sleep(0.05)
    with open(out, "w") as f:
        for a in acked:
            f.write(json.dumps(a) + "\n")
    print("acknowledged %d registrations, %d requests asked again" % (len(acked), retried))


def check(url, out):
    acked = [json.loads(l) for l in open(out)]
    by_id = {}
    for a in acked:
        r = requests.get("%s/schemas/ids/%d" % (url, a["id"]), timeout=10)
        assert r.status_code == 200, (a, r.status_code, r.text)
        assert json.loads(r.json()["schema"]) == json.loads(schema(a["i"])), (a, r.text)
        assert by_id.setdefault(a["id"], a["i"]) == a["i"], ("id given twice", a, by_id)
        v = requests.get("%s/subjects/%s/versions" % (url, a["subject"]), timeout=10).json()
        found = False
        for ver in v:
            got = requests.get("%s/subjects/%s/versions/%d" % (url, a["subject"], ver),
                               timeout=10).json()
            found = found or got["id"] == a["id"]
        assert found, ("acknowledged registration missing from its subject", a, v)
    ids = requests.get("%s/subjects" % url, timeout=10).json()
    print("%s: %d acknowledged registrations present, %d distinct ids, subjects %s"
          % (url, len(acked), len(by_id), ids))


if sys.argv[1] == "register":
    register(sys.argv[2:-1], sys.argv[-1])
else:
    check(sys.argv[2], sys.argv[3])
