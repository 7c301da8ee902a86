#!/usr/bin/env bash
# Malformed frames (bad sizes, truncated headers, unknown keys and versions, bad CRCs, lying
# record counts, garbage compact lengths) get the right Kafka error or a closed connection; the
# broker keeps serving other clients and its RSS does not grow.
# timeout: 120
source "$(dirname "$0")/lib.sh"
start_broker
PYTHONPATH="$ROOT/tests/integration" $PY "$ROOT/tests/integration/bad_input.py" 127.0.0.1 "$PORT" "$BROKER_PID"
# and a real client still works afterwards
echo "after" | kcat -P -b "$BROKER" -t after-bad-input
[ "$(kcat -C -b "$BROKER" -t after-bad-input -e -q)" = "after" ] || fail "kcat round trip after bad input"
kill -0 "$BROKER_PID" || fail "broker died"
stop_broker
