#!/usr/bin/env bash
# streampulse group describe/list/delete/reset-offsets against a live group: a librdkafka member
# reads 100 records, commits and pauses (staying in the group) while a producer runs ahead;
# describe shows the state, the member (client id, host, partitions) and per partition the
# committed offset, the log end offset and their difference as lag, during and after the
# production. reset-offsets and delete are refused while the group has members and work after;
# deleting a topic drops the group's offsets for it.
# timeout: 90
source "$(dirname "$0")/lib.sh"
start_broker
export STREAMPULSE_BROKERS=$BROKER
"$SP" topic create lagt --partitions 2 >/dev/null
seq -f "a%g" 1 60 | kcat -P -b "$BROKER" -t lagt -p 0
seq -f "b%g" 1 40 | kcat -P -b "$BROKER" -t lagt -p 1
"$ITEST_BIN/rdkafka_group" "$BROKER" lag-g lagt "$TMP/c" "$TMP/stop" --pause-after 100 2>"$TMP/c.err" &
C=$!
for _ in $(seq 1 200); do grep -q '^paused' "$TMP/c.events" 2>/dev/null && break; sleep 0.05; done
grep -q '^paused committed' "$TMP/c.events" || fail "consumer did not commit and pause: $(cat "$TMP/c.events" "$TMP/c.err")"

check() { # check FILE P0_END P1_END: parses describe output, lag == end - committed everywhere
    $PY - "$@" <<'PY'
import sys
text = open(sys.argv[1]).read()
want_end = {0: int(sys.argv[2]), 1: int(sys.argv[3])} if len(sys.argv) > 3 else None
assert "STATE: Stable" in text, text
assert "MEMBERS: 1" in text and "CLIENT-ID rdkafka-group" in text and "HOST /127.0.0.1" in text, text
assert "PARTITIONS lagt:0,lagt:1" in text, text
rows = {}
for line in text.splitlines():
    f = line.split()
    if f and f[0] == "lagt":
        rows[int(f[1])] = (int(f[2]), int(f[3]), int(f[4]))
assert sorted(rows) == [0, 1], text
assert rows[0][0] == 60 and rows[1][0] == 40, "committed %r" % rows
for p, (comm, end, lag) in rows.items():
    assert lag == end - comm, "partition %d: lag %d != %d - %d" % (p, lag, end, comm)
    if want_end:
        assert end == want_end[p], "partition %d: log end %d, expected %d" % (p, end, want_end[p])
total = [l for l in text.splitlines() if l.startswith("TOTAL-LAG:")][0].split()[1]
assert int(total) == sum(r[2] for r in rows.values()), text
print("ok: %r" % rows)
PY
}

# the producer runs ahead of the paused group
( seq -f "a%g" 61 360 | kcat -P -b "$BROKER" -t lagt -p 0 -X linger.ms=0 -X batch.num.messages=10
  seq -f "b%g" 41 240 | kcat -P -b "$BROKER" -t lagt -p 1 -X linger.ms=0 -X batch.num.messages=10 ) &
P=$!
"$SP" group describe lag-g >"$TMP/d1" || fail "describe failed"
check "$TMP/d1" || fail "describe during production: $(cat "$TMP/d1")"
wait $P
"$SP" group describe lag-g >"$TMP/d2" || fail "describe failed"
cat "$TMP/d2"
check "$TMP/d2" 360 240 || fail "describe after production"
"$SP" group list | grep -qx $'lag-g\tStable' || fail "group list: $("$SP" group list)"

rc=0; "$SP" group reset-offsets lag-g --topic lagt --to-earliest 2>"$TMP/err" || rc=$?
[ $rc -ne 0 ] && grep -q "has 1 active member" "$TMP/err" || fail "reset-offsets not refused: $(cat "$TMP/err")"
rc=0; "$SP" group delete lag-g 2>"$TMP/err" || rc=$?
[ $rc -ne 0 ] && grep -q "active members" "$TMP/err" || fail "delete not refused: $(cat "$TMP/err")"

touch "$TMP/stop"; wait $C || fail "consumer failed"
"$SP" group reset-offsets lag-g --topic lagt --to-offset 10 | grep -c $'^lagt\t[01]\t10$' | grep -qx 2 ||
    fail "reset-offsets --to-offset"
"$SP" group describe lag-g | grep -E '^lagt +1 +10 +240 +230 ' >/dev/null || fail "describe after reset: $("$SP" group describe lag-g)"
"$SP" group reset-offsets lag-g --topic lagt --to-latest >/dev/null || fail "reset --to-latest"
"$SP" group describe lag-g | grep -q '^TOTAL-LAG: 0$' || fail "lag after --to-latest"
"$SP" group reset-offsets lag-g --topic lagt --to-datetime 2001-01-01T00:00:00Z | grep -c $'\t0$' | grep -qx 2 ||
    fail "reset --to-datetime before every record should give offset 0"
# deleting a topic removes its committed offsets (as Kafka does): a topic created again under
# the name does not inherit them, and a group left without offsets goes
"$SP" group reset-offsets lag-g --topic lagt --to-offset 5 >/dev/null || fail "reset --to-offset 5"
"$SP" topic create other --partitions 1 >/dev/null
"$SP" group reset-offsets lag-g --topic other --to-offset 0 >/dev/null || fail "reset other"
"$SP" topic delete lagt >/dev/null || fail "topic delete"
"$SP" group describe lag-g >"$TMP/d3" || fail "describe after topic delete: $(cat "$TMP/d3")"
grep -q '^lagt ' "$TMP/d3" && fail "offsets of the deleted topic survive: $(cat "$TMP/d3")"
grep -qE '^other +0 +0 ' "$TMP/d3" || fail "offsets of the other topic lost: $(cat "$TMP/d3")"
"$SP" group delete lag-g | grep -q "deleted group lag-g" || fail "delete"
rc=0; "$SP" group describe lag-g 2>"$TMP/err" || rc=$?
[ $rc -ne 0 ] && grep -q "does not exist" "$TMP/err" || fail "deleted group still described"
stop_broker
