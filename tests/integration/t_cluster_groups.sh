#!/usr/bin/env bash
# Consumer groups in cluster mode: __consumer_offsets is created by the controller (replication
# factor 3) at the first FindCoordinator, and the broker leading a group's offsets partition
# coordinates it. A confluent-kafka consumer commits synchronously while it reads a 3-partition
# rf=3 topic; the coordinator's broker is killed (-9): the committed offsets are read back
# through the survivors (exactly what was committed), a new consumer of the group resumes at
# them. With the killed node back, the coordinator is killed again under a live consumer: the
# group goes on and ends with every record consumed and its offsets at the end of each
# partition; commits never went backwards. All nodes stop cleanly.
# timeout: 150
source "$(dirname "$0")/lib.sh"

start_cluster 3
BOOT="127.0.0.1:${CL_PORT[1]},127.0.0.1:${CL_PORT[2]},127.0.0.1:${CL_PORT[3]}"
CG="$PY $ROOT/tests/integration/cluster_group.py"
N=3000

$PY - "$BOOT" <<'PYEOF' || fail "CreateTopics gt"
import sys
from confluent_kafka.admin import AdminClient, NewTopic
a = AdminClient({"bootstrap.servers": sys.argv[1]})
for t, f in a.create_topics([NewTopic("gt", 3, 3)], request_timeout=10).items():
    f.result()
PYEOF
$PY "$ROOT/tests/integration/idem_producer.py" "$BOOT" gt $N "$TMP/gt.acked" --partitions 3 \
    -X acks=all >"$TMP/gt.out" 2>&1 || fail "producer: $(tail "$TMP/gt.out")"
note "$N records in gt (3 partitions, replication factor 3)"

# boot_without NODE: the bootstrap list without that node
boot_without() {
    local i out=""
    for i in 1 2 3; do [ "$i" = "$1" ] || out="${out:+$out,}127.0.0.1:${CL_PORT[$i]}"; done
    echo "$out"
}

# ---- phase 1: consume a third, commit, close; kill the coordinator; offsets survive ----
$CG consume "$BOOT" gt g "$TMP/c1" 1000 >"$TMP/c1.last" 2>"$TMP/c1.err" ||
    fail "consumer 1: $(tail "$TMP/c1.err")"
c1=$(tail -1 "$TMP/c1.last")
[ "$(wc -l <"$TMP/c1")" -ge 1000 ] || fail "consumer 1 read $(wc -l <"$TMP/c1") records"
for i in 1 2 3; do
    grep -q 'event=cluster_replica_added topic=__consumer_offsets' "$TMP/node$i.log" ||
        fail "node $i has no replica of __consumer_offsets"
done
coord=$($CG coordinator "127.0.0.1:${CL_PORT[1]}" g) || fail "FindCoordinator at node 1"
for i in 2 3; do
    [ "$($CG coordinator "127.0.0.1:${CL_PORT[$i]}" g)" = "$coord" ] ||
        fail "node $i names another coordinator than $coord"
done
note "consumer 1 committed $c1; coordinator of g: node $coord"

t0=$(date +%s%N)
kill9_node "$coord"
after=$($CG committed "$(boot_without "$coord")" gt g 3 2>"$TMP/committed.err") ||
    fail "committed offsets after the kill: $(tail "$TMP/committed.err")"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
$PY - "$c1" "$after" <<'PYEOF' || fail "committed offsets changed by the kill: $c1 -> $after"
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
b = {p: o for p, o in b.items() if o >= 0}  # -1001: nothing committed for that partition
assert a and a == b, (a, b)
PYEOF
coord2=$($CG coordinator "$(boot_without "$coord")" g) || fail "no new coordinator"
[ "$coord2" != "$coord" ] || fail "the dead node $coord is still named coordinator"
note "killed node $coord: node $coord2 coordinates g; committed offsets read back after $ms ms, unchanged"

# a new member of the group resumes exactly at the committed offsets
$CG consume "$(boot_without "$coord")" gt g "$TMP/c2" 500 >"$TMP/c2.last" 2>"$TMP/c2.err" ||
    fail "consumer 2: $(tail "$TMP/c2.err")"
$PY - "$c1" "$TMP/c2" "$TMP/gt.acked" <<'PYEOF' || fail "consumer 2 did not resume at the committed offsets"
import json, sys
committed = {int(p): o for p, o in json.loads(sys.argv[1]).items()}
earliest = {}  # where a partition without a commit starts (auto.offset.reset=earliest)
for line in open(sys.argv[3]):
    p, o, _v = line.split()
    earliest[int(p)] = min(earliest.get(int(p), 1 << 62), int(o))
first = {}
for line in open(sys.argv[2]):
    p, o, _v = line.split()
    first.setdefault(int(p), int(o))
assert first
for p, o in first.items():
    assert o == committed.get(p, earliest[p]), (p, o, committed, earliest)
PYEOF
note "consumer 2 resumed at the committed offsets"

# ---- phase 2: the killed node returns; kill the coordinator under a live consumer ----
start_node "$coord"
wait_log "$coord" 'event=cluster_registered' 2 10 || fail "node $coord did not register again"
sleep 1 # let it catch up (a voter behind is not elected)
$CG consume "$BOOT" gt g "$TMP/c3" $N >"$TMP/c3.last" 2>"$TMP/c3.err" &
C3=$!
for _ in $(seq 1 200); do
    [ -f "$TMP/c3" ] && [ "$(wc -l <"$TMP/c3")" -ge 300 ] && break
    kill -0 $C3 2>/dev/null || break
    sleep 0.05
done
coord3=$($CG coordinator "$BOOT" g) || fail "FindCoordinator before the second kill"
kill9_node "$coord3"
note "killed coordinator node $coord3 with consumer 3 at $(wc -l <"$TMP/c3") records"
wait $C3 || fail "consumer 3: $(tail "$TMP/c3.err")"
note "commits retried by consumer 3: $(grep -c 'commit retried' "$TMP/c3.last" || true)"

final=$($CG committed "$(boot_without "$coord3")" gt g 3 2>"$TMP/final.err") ||
    fail "final committed offsets: $(tail "$TMP/final.err")"
$PY - "$TMP/gt.acked" "$final" "$TMP/c1" "$TMP/c2" "$TMP/c3" <<'PYEOF' || fail "group history"
import json, sys
acked = {}
for line in open(sys.argv[1]):
    p, o, v = line.split()
    acked[(int(p), int(o))] = v
ends = {}
for (p, o) in acked:
    ends[p] = max(ends.get(p, 0), o + 1)
final = {int(p): o for p, o in json.loads(sys.argv[2]).items()}
assert final == ends, ("final commits", final, "log ends", ends)
seen = set()
for path in sys.argv[3:]:
    for line in open(path):
        p, o, v = line.split()
        key = (int(p), int(o))
        assert acked.get(key) == v, ("consumed", key, v, "acknowledged as", acked.get(key))
        seen.add(key)
missing = set(acked) - seen
assert not missing, ("never consumed", sorted(missing)[:10])
# commits never go backwards within each consumer's run
for path in sys.argv[3:]:
    last = {}
    for line in open(path + ".commits"):
        for p, o in json.loads(line).items():
            assert o >= last.get(p, -1), ("commit went backwards", path, p, last[p], o)
            last[p] = o
print("# every acknowledged record consumed; final commits at the log ends %s" % final)
PYEOF

start_node "$coord3"
for i in 1 2 3; do stop_node "$i"; done
grep -h 'level=error' "$TMP"/node*.log && fail "errors logged"
note "all nodes stopped cleanly"
