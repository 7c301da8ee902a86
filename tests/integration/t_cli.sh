#!/usr/bin/env bash
# The CLI against a real broker: topic create/list/describe/alter/delete, produce with keys,
# headers, acks and partition, consume with --from, -n, --format and --json, leader-election
# (every partition already led by its preferred replica); errors are words and non-zero exits.
# timeout: 120
source "$(dirname "$0")/lib.sh"
start_broker
export STREAMPULSE_BROKERS=$BROKER   # every command below bootstraps from here

"$SP" topic create orders --partitions 3 --config retention.ms=3600000 | grep -q "created topic orders" ||
    fail "topic create"
rc=0; "$SP" topic create orders --partitions 3 2>"$TMP/err" || rc=$?
[ $rc -ne 0 ] && grep -qi "already exists" "$TMP/err" || fail "duplicate create not refused in words (rc=$rc): $(cat "$TMP/err")"
rc=0; "$SP" topic create bad --config no.such=1 2>"$TMP/err" || rc=$?
[ $rc -ne 0 ] && grep -q "no.such" "$TMP/err" || fail "bad config not named: $(cat "$TMP/err")"
"$SP" topic list | grep -qx orders || fail "topic list"
# Kafka's name rule: a leading '.' is legal, "." and ".." are not
"$SP" topic create .dotted >/dev/null || fail "topic .dotted refused"
echo dot | "$SP" produce -t .dotted --acks all || fail "produce to .dotted"
"$SP" consume -t .dotted --from beginning -n 1 --format '%v\n' | grep -qx dot || fail "consume .dotted"
rc=0; "$SP" topic create .. 2>"$TMP/err" || rc=$?
[ $rc -ne 0 ] && grep -q 'cannot be "." or ".."' "$TMP/err" || fail "topic .. not refused in words: $(cat "$TMP/err")"
"$SP" topic describe orders >"$TMP/desc"
grep -q "PartitionCount: 3" "$TMP/desc" && grep -q "retention.ms=3600000" "$TMP/desc" || fail "describe: $(cat "$TMP/desc")"
"$SP" topic alter orders --config segment.bytes=1048576 >/dev/null || fail "alter"
"$SP" topic describe orders | grep -q "segment.bytes=1048576" || fail "alter not visible"
"$SP" topic describe orders | grep -q "retention.ms=3600000" || fail "alter lost the earlier override"

printf 'k1:v1\nk2:v2\nk1:v3\n' | "$SP" produce -t orders --key-separator : --header src=cli --header n=1 --acks all ||
    fail "produce"
printf 'p2-a\np2-b\n' | "$SP" produce -t orders --partition 2 --acks 1 || fail "produce --partition"
"$SP" consume -t orders --from beginning -n 5 --format '%k|%v|%p|%h\n' | sort >"$TMP/out"
grep -q '^k1|v1|[0-2]|src=cli,n=1$' "$TMP/out" && grep -q '^k1|v3|' "$TMP/out" && grep -q '^|p2-a|2|$' "$TMP/out" ||
    fail "consume --format: $(cat "$TMP/out")"
[ "$(grep '^k1|' "$TMP/out" | cut -d'|' -f3 | sort -u | wc -l)" -eq 1 ] || fail "key k1 in two partitions"
"$SP" consume -t orders --partition 2 --from beginning --exit --json >"$TMP/json"
$PY - "$TMP/json" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
vals = [r["value"] for r in recs if r["partition"] == 2]
assert vals[-2:] == ["p2-a", "p2-b"], recs
assert all(r["topic"] == "orders" and "offset" in r and "timestamp" in r for r in recs)
PY
"$SP" consume -t orders --partition 2 --from 1 -n 1 --format '%o %v\n' | grep -q '^1 ' || fail "--from OFFSET"

rc=0; "$SP" consume -t nosuch --from beginning --exit 2>"$TMP/err" || rc=$?
[ $rc -ne 0 ] && grep -q "does not exist" "$TMP/err" || fail "unknown topic: rc=$rc $(cat "$TMP/err")"
rc=0; "$SP" topic list -b 127.0.0.1:1 --timeout 2 2>"$TMP/err" || rc=$?
[ $rc -ne 0 ] && grep -q "cannot reach" "$TMP/err" || fail "unreachable broker: rc=$rc $(cat "$TMP/err")"
rc=0; "$SP" nosuchcommand 2>/dev/null || rc=$?
[ $rc -eq 2 ] || fail "unknown command exit $rc"

# leader-election on one node: each partition is led by its only (preferred) replica
"$SP" leader-election --election-type preferred --topic orders >"$TMP/elect" ||
    fail "leader-election: $(cat "$TMP/elect")"
grep -qx 'Valid replica already elected for partitions orders-0, orders-1, orders-2' "$TMP/elect" ||
    fail "leader-election said: $(cat "$TMP/elect")"
"$SP" leader-election --election-type preferred --all-topic-partitions >"$TMP/elect" ||
    fail "leader-election --all-topic-partitions: $(cat "$TMP/elect")"
[ ! -s "$TMP/elect" ] || fail "--all-topic-partitions listed: $(cat "$TMP/elect")"
rc=0; "$SP" leader-election --election-type preferred --topic orders --path-to-json-file x 2>"$TMP/err" || rc=$?
[ $rc -eq 2 ] && grep -q "one and only one of" "$TMP/err" || fail "two selections: rc=$rc $(cat "$TMP/err")"

"$SP" topic delete orders >/dev/null || fail "delete"
"$SP" topic list | grep -qx orders && fail "deleted topic still listed"
stop_broker
