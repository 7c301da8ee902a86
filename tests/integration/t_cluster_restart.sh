#!/usr/bin/env bash
# The whole cluster loses power: three nodes killed (-9) at once after acks=all writes and a
# consumer group's synchronous commits, then started again. The controller, the partitions and
# the group coordinator come back on their own: every acknowledged record is there (history.py),
# the group's committed offsets are exactly the ones committed before, a new member resumes at
# them and reads the rest exactly once, and the cluster takes new writes. All stop cleanly.
# timeout: 90
source "$(dirname "$0")/lib.sh"

start_cluster 3
BOOT="127.0.0.1:${CL_PORT[1]},127.0.0.1:${CL_PORT[2]},127.0.0.1:${CL_PORT[3]}"
CG="$PY $ROOT/tests/integration/cluster_group.py"
N=3000

$PY - "$BOOT" <<'PYEOF' || fail "CreateTopics"
import sys
from confluent_kafka.admin import AdminClient, NewTopic
a = AdminClient({"bootstrap.servers": sys.argv[1]})
for t, f in a.create_topics([NewTopic("pw", 3, 3), NewTopic("after", 1, 3)],
                            request_timeout=10).items():
    f.result()
PYEOF
$PY "$ROOT/tests/integration/idem_producer.py" "$BOOT" pw $N "$TMP/pw.acked" --partitions 3 \
    -X acks=all >"$TMP/pw.out" 2>&1 || fail "producer: $(tail "$TMP/pw.out")"
$CG consume "$BOOT" pw g "$TMP/c1" 1500 >"$TMP/c1.last" 2>"$TMP/c1.err" ||
    fail "consumer 1: $(tail "$TMP/c1.err")"
before=$(tail -1 "$TMP/c1.last")
note "$N records acknowledged, group g committed $before"

for i in 1 2 3; do kill9_node "$i"; done
t0=$(date +%s%N)
for i in 1 2 3; do start_node "$i"; done
for i in 1 2 3; do
    wait_log "$i" 'event=cluster_registered' 2 20 || fail "node $i did not register again"
done
note "all three killed and restarted; registered again after $(( ($(date +%s%N) - t0) / 1000000 )) ms"

after=$($CG committed "$BOOT" pw g 3 2>"$TMP/committed.err") ||
    fail "committed offsets after the restart: $(tail "$TMP/committed.err")"
$PY - "$before" "$after" <<'PYEOF' || fail "committed offsets changed: $before -> $after"
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
b = {p: o for p, o in b.items() if o >= 0}
assert a and a == b, (a, b)
PYEOF
$CG consume "$BOOT" pw g "$TMP/c2" $N >"$TMP/c2.last" 2>"$TMP/c2.err" ||
    fail "consumer 2: $(tail "$TMP/c2.err")"
timeout 30 kcat -C -b "$BOOT" -t pw -e -q -f '%p %o %s\n' >"$TMP/pw.read" || fail "kcat pw"
$PY "$ROOT/tests/integration/history.py" --acked "$TMP/pw.acked" --final "$TMP/pw.read" \
    --values $N --partitions 3 --idempotent --ordered --complete ||
    fail "history of pw has anomalies after the restart"
$PY - "$before" "$TMP/c1" "$TMP/c2" "$TMP/pw.read" <<'PYEOF' || fail "the group did not resume exactly"
import json, sys
committed = {int(p): o for p, o in json.loads(sys.argv[1]).items()}
def read(path):
    return [tuple(int(x) if i < 2 else x for i, x in enumerate(l.split())) for l in open(path)]
c2, log = read(sys.argv[3]), read(sys.argv[4])
# consumer 2 read exactly the records at or after the committed offsets, each once
want = sorted((p, o) for p, o, _ in log if o >= committed.get(p, 0))
got = sorted((p, o) for p, o, _ in c2)
assert got == want, ("consumer 2", len(got), "records, want", len(want))
print("# consumer 2 resumed at the committed offsets and read the other %d records once" % len(got))
PYEOF
$PY "$ROOT/tests/integration/idem_producer.py" "$BOOT" after 1000 "$TMP/after.acked" \
    --partitions 1 -X acks=all >"$TMP/after.out" 2>&1 || fail "producer after: $(tail "$TMP/after.out")"
note "1000 new acks=all records after the restart"

for i in 1 2 3; do stop_node "$i"; done
grep -h 'level=error' "$TMP"/node*.log && fail "errors logged"
note "all nodes stopped cleanly"
