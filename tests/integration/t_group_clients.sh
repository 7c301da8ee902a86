#!/usr/bin/env bash
# Consumer groups of two members with each client and assignor: librdkafka (C: range,
# roundrobin, cooperative-sticky), python3-confluent-kafka and python3-kafka (range, roundrobin),
# kafkajs (range, roundrobin). For each: both members get two of the four partitions (every
# partition exactly once), together they read every record, and after they close the group's
# committed offsets equal the log end offsets.
# timeout: 300
source "$(dirname "$0")/lib.sh"
[ -d "$NODE_DIR/node_modules/kafkajs" ] || (cd "$NODE_DIR" && npm ci --no-audit --no-fund >/dev/null)
start_broker
T=gclients
$PY - "$BROKER" <<'PY'
import sys
from confluent_kafka.admin import AdminClient, NewTopic
a = AdminClient({"bootstrap.servers": sys.argv[1]})
for f in a.create_topics([NewTopic("gclients", 4, 1)]).values():
    f.result()
PY
for p in 0 1 2 3; do seq -f "p$p-%g" 1 100 | kcat -P -b "$BROKER" -t $T -p $p; done
N=400
KG="$PY $ROOT/tests/integration/kgroup.py"

consumer() { # consumer CLIENT ASSIGNOR GROUP OUT STOP
    case $1 in
    rdkafka) "$ITEST_BIN/rdkafka_group" "$BROKER" "$3" $T "$4" "$5" --assignor "$2" ;;
    confluent|kafka-python) $PY "$ROOT/tests/integration/group_consumer.py" "$1" "$BROKER" "$3" $T "$2" "$4" "$5" ;;
    kafkajs) (cd "$NODE_DIR" && exec node group_consumer.js "$BROKER" "$3" $T "$2" "$4" "$5") ;;
    esac
}

run_pair() { # run_pair CLIENT ASSIGNOR
    local client=$1 assignor=$2 g="g-$1-$2" d="$TMP/$1-$2"
    mkdir -p "$d"
    local t0; t0=$(date +%s%N)
    consumer "$client" "$assignor" "$g" "$d/c1" "$d/stop" 2>"$d/c1.err" & local p1=$!
    consumer "$client" "$assignor" "$g" "$d/c2" "$d/stop" 2>"$d/c2.err" & local p2=$!
    $KG wait "$BROKER" "$g" $T 4 2 40 >"$d/stable.json" ||
        fail "$client/$assignor: two members never shared the 4 partitions: $(tail -3 "$d"/c*.err)"
    $PY -c 'import json,sys; m=json.load(open(sys.argv[1]))["members"]; assert sorted(len(v) for v in m.values())==[2,2], m' \
        "$d/stable.json" || fail "$client/$assignor: uneven assignment $(cat "$d/stable.json")"
    for _ in $(seq 1 300); do
        [ "$(cat "$d/c1" "$d/c2" 2>/dev/null | cut -d' ' -f1,2 | sort -u | wc -l)" -ge $N ] && break
        sleep 0.1
    done
    touch "$d/stop"
    wait $p1 || fail "$client/$assignor: consumer 1 failed: $(tail -5 "$d/c1.err")"
    wait $p2 || fail "$client/$assignor: consumer 2 failed: $(tail -5 "$d/c2.err")"
    $PY - "$BROKER" "$g" "$d" $N <<'PY' || fail "$client/$assignor: check failed"
import sys
sys.path.insert(0, sys.argv[0].rsplit("/", 1)[0] if "/" in sys.argv[0] else ".")
from kgroup import Client
broker, group, d, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
recs = set()
for f in ("c1", "c2"):
    for line in open("%s/%s" % (d, f)):
        p, o, v = line.split()
        assert v == "p%s-%d" % (p, int(o) + 1), "record %r at the wrong place" % line
        recs.add((int(p), int(o)))
assert len(recs) == n, "read %d distinct records of %d" % (len(recs), n)
c = Client(broker)
offs, err = c.fetch_offsets(group, "gclients", [0, 1, 2, 3])
assert err == 0, err
assert all(offs[("gclients", p)] == (100, 0) for p in range(4)), "committed: %r" % offs
g = c.describe(group)
assert g["state"] == "Empty" and not g["members"], "after close: %r" % g
print("ok: %d records, committed offsets at the log end, group Empty" % n)
PY
    note "$client/$assignor: ok in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
}

cd "$ROOT/tests/integration"
run_pair rdkafka range
run_pair rdkafka roundrobin
run_pair rdkafka cooperative-sticky
run_pair confluent range
run_pair confluent roundrobin
run_pair kafka-python range
run_pair kafka-python roundrobin
run_pair kafkajs range
run_pair kafkajs roundrobin
stop_broker
