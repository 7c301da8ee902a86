#!/usr/bin/env bash
# python3-kafka and python3-confluent-kafka: admin create topic, produce with keys and headers,
# consume; headers round-trip byte-identical.
# timeout: 180
source "$(dirname "$0")/lib.sh"
start_broker
$PY "$ROOT/tests/integration/clients_kafka_python.py" "$BROKER"
$PY "$ROOT/tests/integration/clients_confluent.py" "$BROKER"
stop_broker
