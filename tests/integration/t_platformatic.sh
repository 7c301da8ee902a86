#!/usr/bin/env bash
# @platformatic/kafka 1.35.0 (its newest release for Node 20): Admin, an idempotent producer and a
# two-member consumer group against the broker, on the flexible versions it picks (Metadata v12,
# Fetch v13 by topic id, FindCoordinator v4, OffsetFetch v8, ...): tests/integration/node/
# platformatic.mjs.
# timeout: 180
source "$(dirname "$0")/lib.sh"
[ -d "$NODE_DIR/node_modules/@platformatic/kafka" ] || (cd "$NODE_DIR" && npm ci --no-audit --no-fund >/dev/null)
start_broker
(cd "$NODE_DIR" && node platformatic.mjs "$BROKER") || fail "@platformatic/kafka client test failed"
stop_broker
