#!/usr/bin/env bash
# Under acks=all a duplicate is answered only once its original is durable: with every
# fdatasync of the broker held up 2 s (strace fault injection on the running broker), the
# duplicate of a batch still waiting for its sync waits too, while an acks=1 duplicate is
# answered at once; all three answers carry the same offset.
# timeout: 60
source "$(dirname "$0")/lib.sh"
command -v strace >/dev/null || fail "strace is needed (Debian package strace)"
start_broker
"$SP" topic create durable -b "$BROKER" --partitions 1 >/dev/null
# the partition's first append writes its leader-epoch checkpoint (an fsync on the broker's
# main thread): get that done before the syncs slow down
echo warm-up | kcat -P -b "$BROKER" -t durable -p 0
strace -f -qq -p "$BROKER_PID" -e trace=fdatasync -e inject=fdatasync:delay_exit=2000000 \
    -o "$TMP/strace.out" &
STRACE=$!
sleep 1 # attached to every thread
cd "$ROOT/tests/integration"
$PY idem_durable_dup.py "$PORT" durable 2.0
kill "$STRACE"
wait "$STRACE" 2>/dev/null || true
stop_broker
