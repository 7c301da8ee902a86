#!/usr/bin/env bash
# Debian's sarama 1.22 (Go): a SyncProducer, then a consumer group on sarama's default
# configuration (sarama_group.go), which commits with OffsetCommit v1 and reads commits with
# OffsetFetch v1. Every record arrives once; after the group leaves it is Empty and its committed
# offsets equal the log end of each partition (group_offsets_at_end.py).
# timeout: 180
source "$(dirname "$0")/lib.sh"
GOBIN_OUT=$ROOT/build/itest/sarama_group
mkdir -p "$ROOT/build/itest" "$ROOT/build/go-cache"
# Debian's Go packages in GOPATH mode (no module proxy, no network)
GOPATH=/usr/share/gocode GO111MODULE=off GOCACHE=$ROOT/build/go-cache GOFLAGS= \
    go build -o "$GOBIN_OUT" "$ROOT/tests/integration/sarama_group.go" 2> "$TMP/go-build.log" ||
    { cat "$TMP/go-build.log"; fail "cannot build sarama_group.go (golang-go, golang-github-shopify-sarama-dev)"; }
start_broker
$PY - "$BROKER" <<'PY'
import sys
from confluent_kafka.admin import AdminClient, NewTopic
a = AdminClient({"bootstrap.servers": sys.argv[1]})
a.create_topics([NewTopic("sarama-t", 3, 1)])["sarama-t"].result(15)
PY
"$GOBIN_OUT" "$BROKER" sarama-t sarama-group 600 || fail "sarama consumer group"
$PY "$ROOT/tests/integration/group_offsets_at_end.py" "$BROKER" sarama-group sarama-t 3
stop_broker
