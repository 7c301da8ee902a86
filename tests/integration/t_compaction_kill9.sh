#!/usr/bin/env bash
# kill -9 during cleaning never loses a latest value. Each round adds a dirty chunk to a
# compacted topic (30,000 gzip updates of 100 keys with incompressible values, ~2 MB; keys
# deleted and rewritten; cleaner off, clean shutdown), restarts the broker with the cleaner
# throttled to 1 MB/s (a pass then takes about 4 s) and kills it with -9 at a moment of that
# pass (round r: (r-1)/2 s plus a fraction fixed for that round): while it maps keys, rewrites
# a group, swaps, or after. The broker then restarts (recovery finishes or drops the interrupted
# swap), sometimes read while the cleaner works, and after each round every key's latest value
# is there, no key shows an older value after a newer one, and the unthrottled cleaner ends
# with exactly one record per key.
# timeout: 420
source "$(dirname "$0")/lib.sh"
CHECK="$ROOT/tests/integration/compaction.py"
fast=(--set log.cleaner.backoff.ms=100 --set log.retention.check.interval.ms=200)
slow=("${fast[@]}" --set log.cleaner.io.max.bytes.per.second=1000000)
for round in $(seq 1 8); do
    start_broker --set log.cleaner.enable=false
    $PY "$CHECK" produce "$BROKER" big "$TMP/state.json" 30000
    stop_broker
    start_broker "${slow[@]}"
    ms=$(( (round - 1) * 500 + round * 7 % 10 * 50 )) # spread over the ~4 s pass: map, then rewrite
    sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
    kill9_broker
    start_broker "${slow[@]}"
    if [ $((round % 2)) -eq 0 ]; then
        $PY "$CHECK" verify "$BROKER" big "$TMP/state.json" # while the cleaner works
    fi
    kill9_broker
    start_broker "${fast[@]}"
    $PY "$CHECK" verify "$BROKER" big "$TMP/state.json" --final
    stop_broker
done
started=$(grep -c 'event=log_clean_started' "$BROKER_LOG" || true)
passes=$(grep -c 'event=log_cleaned' "$BROKER_LOG" || true)
discarded=$(grep -c 'event=cleaner_output_discarded' "$BROKER_LOG" || true)
completed=$(grep -c 'event=cleaner_swap_completed' "$BROKER_LOG" || true)
note "$started passes started, $passes completed; kills left $discarded uncommitted outputs and $completed committed swaps to finish"
[ $((started - passes)) -ge 6 ] || fail "too few kills landed during a cleaning pass"
[ "$discarded" -ge 1 ] || fail "no kill landed while a group was being rewritten"
if grep -E 'level=error' "$BROKER_LOG"; then
    fail "errors in the broker log"
fi
