#!/usr/bin/env bash
# ListOffsets by timestamp answers the first record at or after the time, inside a batch and
# inside compressed batches: librdkafka's and kafka-python's offsets_for_times
# (offsets_for_times.py).
# timeout: 120
source "$(dirname "$0")/lib.sh"
start_broker
$PY "$ROOT/tests/integration/offsets_for_times.py" "$BROKER" "$DATA"
stop_broker
