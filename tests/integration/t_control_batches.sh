#!/usr/bin/env bash
# Record-less control batches in a partition log, as Raft's own entries will sit there
# (DESIGN.md §6: a new leader's NOOP is an empty control batch covering one offset): every
# client reads every data record at its offset, also with small max partition fetch bytes
# (one batch per response) and when the log ends on one. The broker never answers a fetch with
# record-less batches alone (plog_read_records): kafka-python 2.0.2 crashes on that and kafkajs
# 2.2.4 jumps to HW - 1; so a consumer waits at a trailing one until data follows it. The batches are appended to the segment of a stopped broker (control_batches.py), which
# recovery then validates; produce continues after them.
# timeout: 150
source "$(dirname "$0")/lib.sh"
[ -d "$NODE_DIR/node_modules/kafkajs" ] || (cd "$NODE_DIR" && npm ci --no-audit --no-fund >/dev/null)
start_broker --set num.partitions=1
export STREAMPULSE_BROKERS=$BROKER
"$SP" topic create cb --partitions 1 >/dev/null
printf 'a\nb\nc\n' | "$SP" produce -t cb --acks all
stop_broker
SEG=$DATA/cb-0/00000000000000000000.log
$PY "$ROOT/tests/integration/control_batches.py" "$SEG" \
    noop,data:2,noop,noop,data:1,noop,data:3,noop "$TMP/expected.txt"
LAST=$(tail -1 "$TMP/expected.txt" | cut -d' ' -f1)   # the last data record; a noop follows it
start_broker
grep -q 'level=error' "$BROKER_LOG" && fail "recovery complained: $(grep level=error "$BROKER_LOG")"
COUNT=$(wc -l <"$TMP/expected.txt")

check() { # NAME FILE
    diff <(sort -n "$2") "$TMP/expected.txt" >"$TMP/diff" ||
        fail "$1 did not read exactly the data records at their offsets: $(cat "$TMP/diff")"
    note "$1: $(wc -l <"$2") records, offsets as written"
}
kcat -C -b "$BROKER" -t cb -p 0 -o beginning -e -q -f '%o %s\n' >"$TMP/kcat.txt"
check kcat "$TMP/kcat.txt"
for maxb in 64 1048576; do
    for client in kafka-python confluent; do
        $PY "$ROOT/tests/integration/control_consume.py" "$BROKER" cb $((LAST + 1)) $client $maxb \
            >"$TMP/$client.txt" || fail "$client (max.partition.fetch.bytes=$maxb): $(tail -3 "$TMP/$client.txt")"
        check "$client max.partition.fetch.bytes=$maxb" "$TMP/$client.txt"
    done
done
(cd "$NODE_DIR" && node control_batches.js "$BROKER" cb "$COUNT" 64) >"$TMP/kafkajs.txt" ||
    fail "kafkajs: $(tail -3 "$TMP/kafkajs.txt")"
check "kafkajs maxBytesPerPartition=64" "$TMP/kafkajs.txt"
# produce continues after the trailing noop; a consumer waiting at the noop gets it
echo after | "$SP" produce -t cb --acks all
"$SP" consume -t cb --from $((LAST + 1)) -n 1 --format '%o %v\n' | grep -qx "$((LAST + 2)) after" ||
    fail "the next record did not land at offset $((LAST + 2))"
stop_broker
