#!/usr/bin/env bash
# InitProducerId and the produce-side rules over the raw wire (idem_wire.py): every
# InitProducerId version, KIP-360 epoch bumps, transactional ids refused as a broker without a
# transaction coordinator does; duplicates answered with the original offset under acks=all, 1
# and 0, gaps, stale and new epochs, invalid fields. Then, across a kill -9 and across a clean
# restart: producer ids never repeat and the producer state (duplicates, sequences, epochs)
# comes back from the log and from the closing snapshot.
# timeout: 60
source "$(dirname "$0")/lib.sh"
start_broker
"$SP" topic create wire -b "$BROKER" --partitions 1 >/dev/null
cd "$ROOT/tests/integration"
$PY idem_wire.py "$PORT" wire "$TMP/state.json" phase1
kill9_broker
start_broker
grep 'event=producer_state_loaded' "$BROKER_LOG" | grep -q 'snapshot_offset=-1' ||
    fail "after kill -9 the state should come from the log (no snapshot yet)"
$PY idem_wire.py "$PORT" wire "$TMP/state.json" phase2
stop_broker
ls "$DATA/wire-0" | grep -q '^00000000000000000014.snapshot$' ||
    fail "a clean stop should leave a snapshot at the log end: $(ls "$DATA/wire-0")"
start_broker
$PY idem_wire.py "$PORT" wire "$TMP/state.json" phase2
stop_broker
