#!/usr/bin/env bash
# Static membership: three librdkafka consumers with group.instance.id share a 6-partition
# topic; one is killed (-9) and restarted within its session timeout. It gets the same
# partitions back, and the others see no rebalance (no new assignment, same member ids and
# generation-stable assignments); the broker replaced the member without a rebalance.
# timeout: 90
source "$(dirname "$0")/lib.sh"
start_broker --set num.partitions=6
cd "$ROOT/tests/integration"
KG="$PY kgroup.py"
T=static
kcat -L -b "$BROKER" -t $T >/dev/null
seq 1 60 | kcat -P -b "$BROKER" -t $T

member() { # member NAME
    "$ITEST_BIN/rdkafka_group" "$BROKER" static-g $T "$TMP/$1" "$TMP/stop" --instance "inst-$1" \
        --session 10000 2>>"$TMP/$1.err" &
    eval "${1}_PID=$!"
}
member a
member b
member c
$KG wait "$BROKER" static-g $T 6 3 30 >"$TMP/before.json" || fail "three static members never stable"
note "before: $(cat "$TMP/before.json")"
sleep 1
before_rebalances=$(grep -c 'event=group_rebalance' "$BROKER_LOG")
for m in a b c; do cp "$TMP/$m.events" "$TMP/$m.events.before"; done
kill -9 "$b_PID"; wait "$b_PID" 2>/dev/null || true
t0=$(date +%s%N)
member b
$KG wait "$BROKER" static-g $T 6 3 10 >"$TMP/after.json" || fail "group not stable after the restart"
nb=$(wc -l <"$TMP/b.events.before")
for _ in $(seq 1 100); do [ "$(wc -l <"$TMP/b.events")" -gt "$nb" ] && break; sleep 0.05; done
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
note "after ($ms ms): $(cat "$TMP/after.json")"
sleep 2   # give any (wrong) rebalance time to show
$PY - "$TMP/before.json" "$TMP/after.json" "$TMP/a.events" "$TMP/b.events" "$TMP/c.events" <<'PY' || fail "static restart disturbed the group"
import json, sys
before = json.load(open(sys.argv[1]))["members"]
after = json.load(open(sys.argv[2]))["members"]
# a and c keep their member ids and partitions; b has a new id and b's old partitions
gone = set(before) - set(after)
new = set(after) - set(before)
assert len(gone) == 1 and len(new) == 1, (before, after)
assert before[gone.pop()] == after[new.pop()], "restarted member got other partitions"
for m in set(before) & set(after):
    assert before[m] == after[m], "member %s moved" % m
def lines(f):
    return [l.split() for l in open(f)]
for n, f in zip("abc", sys.argv[3:6]):
    old, now = lines(f + ".before"), lines(f)
    new = now[len(old):]
    if n == "b":  # the restarted process: one assignment, the last one it had before
        last = [e for e in old if e[0] == "assign"][-1]
        assert new == [last], "b before %r, after the restart %r" % (old, new)
    else:
        assert new == [], "%s saw rebalance events after b's restart: %r" % (n, new)
print("ok: restarted static member got partitions %s back, the others saw no rebalance" % last[1])
PY
after_rebalances=$(grep -c 'event=group_rebalance' "$BROKER_LOG")
[ "$after_rebalances" -eq "$before_rebalances" ] || fail "the broker rebalanced the group ($before_rebalances -> $after_rebalances)"
grep -q 'event=group_static_member_replaced' "$BROKER_LOG" || fail "no static member replacement logged"
touch "$TMP/stop"
wait "$a_PID" "$b_PID" "$c_PID" || true
stop_broker
