#!/usr/bin/env bash
# kafkajs 2.2.4: admin, produce with keys and headers, consume with a consumer group
# (tests/integration/node/clients_kafkajs.js).
# timeout: 180
source "$(dirname "$0")/lib.sh"
[ -d "$NODE_DIR/node_modules/kafkajs" ] || (cd "$NODE_DIR" && npm ci --no-audit --no-fund >/dev/null)
start_broker
(cd "$NODE_DIR" && node clients_kafkajs.js "$BROKER") || fail "kafkajs client test failed"
stop_broker
