#!/usr/bin/env bash
# Log compaction with every codec: per topic 100 keys, 100,000 updates, 5 keys deleted and
# rewritten halfway, tombstones for 10 keys near the end; small segments, min dirty ratio 0.01,
# segment.ms 1 s. A consumer from the beginning then sees exactly the latest value of each key
# (the 10 tombstones included, at their original offsets) and the cleaned batches keep the
# producer's codec; after delete.retention.ms the tombstones are gone and the 90 live keys
# stay. kafka-python reads the result too (gaps, empty batches).
# timeout: 300
source "$(dirname "$0")/lib.sh"
start_broker --set log.cleaner.backoff.ms=200 --set log.retention.check.interval.ms=200
$PY "$ROOT/tests/integration/compaction.py" codecs "$BROKER" "$DATA"
passes=$(grep -c 'event=log_cleaned' "$BROKER_LOG" || true)
note "$passes cleaning passes"
[ "$passes" -ge 10 ] || fail "expected cleaning passes for 5 topics, saw $passes"
grep 'event=log_cleaned' "$BROKER_LOG" | tail -1 | grep -q 'tombstones_removed=10' ||
    grep -q 'event=log_cleaned.*tombstones_removed=10' "$BROKER_LOG" ||
    fail "no pass removed the tombstones"
if grep -E 'level=(warn|error)' "$BROKER_LOG" | grep -v 'event=request_rejected'; then
    fail "warnings in the broker log"
fi
stop_broker
# a clean restart keeps the compacted logs as they are
start_broker --set log.cleaner.backoff.ms=200
for t in none gzip snappy lz4 zstd; do
    n=$(timeout 30 kcat -C -b "$BROKER" -t "cmp-$t" -e -q -f '%k\n' | wc -l)
    [ "$n" -eq 90 ] || fail "cmp-$t: $n records after restart, expected 90"
done
note "all five topics still hold their 90 live keys after a restart"
stop_broker
