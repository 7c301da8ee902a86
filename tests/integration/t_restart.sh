#!/usr/bin/env bash
# Restart with SIGTERM: all data readable afterwards, offsets continue where they stopped, and
# the clean shutdown is recognised (no recovery scan).
# timeout: 120
source "$(dirname "$0")/lib.sh"
start_broker
seq 1 5000 | sed 's/^/first-/' | kcat -P -b "$BROKER" -t keep -X linger.ms=5
stop_broker
grep -q 'event=broker_stopped clean=true' "$BROKER_LOG" || fail "no clean stop logged"

start_broker
grep 'event=broker_started' "$BROKER_LOG" | tail -1 | grep -q 'topics=1 partitions=1 clean_shutdown=true' || fail "restart not seen as clean: $(tail -3 "$BROKER_LOG")"
seq 1 5000 | sed 's/^/second-/' | kcat -P -b "$BROKER" -t keep -X linger.ms=5
kcat -C -b "$BROKER" -t keep -e -q -f '%o %s\n' >"$TMP/out.txt"
n=$(wc -l <"$TMP/out.txt")
[ "$n" -eq 10000 ] || fail "expected 10000 records after restart, got $n"
# offsets 0..9999 with no gap or reuse; the first 5000 are the first run's
awk '{ if ($1 != NR-1) { print "offset " $1 " at line " NR; exit 1 } }' "$TMP/out.txt" || fail "offsets do not continue"
head -1 "$TMP/out.txt" | grep -q '^0 first-1$' || fail "first record wrong: $(head -1 "$TMP/out.txt")"
sed -n 5001p "$TMP/out.txt" | grep -q '^5000 second-1$' || fail "offsets did not continue: $(sed -n 5001p "$TMP/out.txt")"
stop_broker

# After kill -9, the partitions open on several threads; one whose open must write to the node's
# store (here a directory left without segments) is opened again on the reactor's thread. All
# of them take and serve records afterwards.
start_broker
"$SP" topic create wide --partitions 64 -b "$BROKER" >/dev/null || fail "topic create wide"
for p in $(seq 0 63); do echo "before-$p" | kcat -P -b "$BROKER" -t wide -p "$p"; done
kill9_broker
rm -f "$DATA"/wide-7/*
start_broker
grep -q 'event=partitions_opened partitions=65 ' "$BROKER_LOG" ||
    fail "no partitions_opened line for 65 partitions: $(grep partitions_opened "$BROKER_LOG")"
# their leaderships come back summed up in one line, not a line each
poll_until grep -q 'event=cluster_replicas_led' "$BROKER_LOG" ||
    fail "no cluster_replicas_led line within 10 s (every reopened replica knowing its leader)"
grep 'event=cluster_replicas_led' "$BROKER_LOG" | tail -1 |
    grep -q 'replicas_led=65 leading=65 without_leader=0 ' ||
    fail "restart's leaderships: $(grep cluster_replicas_led "$BROKER_LOG" | tail -1)"
n=$(awk '/event=partitions_opened/ { n = 0 } /level=info event=cluster_partition_leader/ { n++ }
         END { print n + 0 }' "$BROKER_LOG")
[ "$n" -eq 0 ] || fail "$n per-partition leadership lines at info after the restart"
for p in $(seq 0 63); do echo "after-$p" | kcat -P -b "$BROKER" -t wide -p "$p"; done
for p in 7 10; do
    kcat -C -b "$BROKER" -t wide -p "$p" -o beginning -e -q -f '%o %s\n' >"$TMP/wide-$p.txt"
done
[ "$(cat "$TMP/wide-7.txt")" = "0 after-7" ] || fail "emptied partition: $(cat "$TMP/wide-7.txt")"
[ "$(cat "$TMP/wide-10.txt")" = "$(printf '0 before-10\n1 after-10')" ] ||
    fail "untouched partition: $(cat "$TMP/wide-10.txt")"
stop_broker
