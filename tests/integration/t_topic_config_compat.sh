#!/usr/bin/env bash
# message.format.version is accepted as a topic config and has no effect, as in Kafka 3.x:
# CreateTopics and AlterConfigs through librdkafka and kafka-python (topic_config_compat.py).
# timeout: 120
source "$(dirname "$0")/lib.sh"
start_broker
$PY "$ROOT/tests/integration/topic_config_compat.py" "$BROKER"
stop_broker
