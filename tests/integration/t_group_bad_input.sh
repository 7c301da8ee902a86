#!/usr/bin/env bash
# Misuse of the group APIs over the raw wire (tests/integration/group_bad_input.py): unknown or
# inconsistent protocols, SyncGroup from a non-member, stale generations, commits for
# nonexistent partitions (UNKNOWN_TOPIC_OR_PARTITION per partition), an oversize metadata blob
# (INVALID_REQUEST above group.max.metadata.bytes), bad session timeouts, deleting non-empty or
# unknown groups; the group and the broker stay healthy.
# timeout: 60
source "$(dirname "$0")/lib.sh"
start_broker --set num.partitions=2
kcat -L -b "$BROKER" -t bad >/dev/null
cd "$ROOT/tests/integration"
$PY group_bad_input.py "$BROKER" "$BROKER_PID" || fail "group misuse not answered as Kafka does"
kcat -L -b "$BROKER" | grep -q 'topic "bad"' || fail "broker unhealthy afterwards"
stop_broker
