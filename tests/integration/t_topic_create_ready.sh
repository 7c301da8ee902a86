#!/usr/bin/env bash
# CreateTopics and CreatePartitions answer once every new partition has a leader on the broker
# that answers (as Redpanda does), so a client that produces right after the answer finds every
# partition led. Flushes of the kvstore are made slow (build/itest/slow_sync.so, 300 ms each): a new
# partition's first election waits for one, and before this was fixed the answer came first and
# Metadata said leader -1 for that long; librdkafka then held the partitions' records until a
# later metadata refresh (the worker's first retries ran ~750 ms late, t_worker_retry).
# timeout: 120
source "$(dirname "$0")/lib.sh"
SHIM=$ITEST_BIN/slow_sync.so
[ -f "$SHIM" ] || fail "$SHIM is missing (make all builds it)"
LD_PRELOAD=$SHIM SLOW_SYNC_NAME=kvstore SLOW_SYNC_MS=300 start_broker
$PY "$(dirname "$0")/topic_ready.py" "$BROKER" ready 8 12 || fail "topics answered before they were led"
grep -q 'event=topic_ready_timeout' "$BROKER_LOG" && fail "a wait for leaders ran out: $(grep topic_ready_timeout "$BROKER_LOG")"
stop_broker
