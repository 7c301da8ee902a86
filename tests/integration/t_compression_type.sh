#!/usr/bin/env bash
# Topic and broker compression.type (Kafka's values: uncompressed, gzip, snappy, lz4, zstd,
# producer): produced batches are stored in the topic's codec (compression_type.py: every
# pairing of codecs, the log files parsed, records read back equal; AlterConfigs switches the
# codec for later batches). A broker-wide compression.type is the default of topics without
# one; a bad value is refused at startup and at CreateTopics. The recompressions are counted in
# /metrics.
# timeout: 120
source "$(dirname "$0")/lib.sh"

note "a bad compression.type is refused at startup"
if "$SP" serve --set "log.dirs=$TMP/x" --set compression.type=brotli --set admin.listener= \
    --set listeners=PLAINTEXT://127.0.0.1:0 >"$TMP/bad.out" 2>&1; then
    fail "compression.type=brotli was taken"
fi
grep -q "brotli" "$TMP/bad.out" || fail "$(cat "$TMP/bad.out")"

start_broker
note "topics with their own compression.type"
$PY "$ROOT/tests/integration/compression_type.py" "$BROKER" "$DATA" || fail "compression_type.py"
$PY - "$BROKER" <<'PYEOF' || fail "CreateTopics with compression.type=brotli was not refused"
import sys
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka import KafkaException
a = AdminClient({"bootstrap.servers": sys.argv[1]})
try:
    a.create_topics([NewTopic("bad-codec", 1, 1, config={"compression.type": "brotli"})])["bad-codec"].result(10)
    sys.exit("created")
except KafkaException as e:
    assert e.args[0].name() == "INVALID_CONFIG", e
    print("CreateTopics compression.type=brotli: INVALID_CONFIG")
PYEOF
m=$(curl -sf "http://$ADMIN/metrics")
n=$(echo "$m" | sed -n 's/^streampulse_produce_recompressed_batches_total //p')
[ "${n:-0}" -gt 0 ] || fail "no recompressed batches counted: '$n'"
stop_broker

note "a broker-wide compression.type=zstd is the default of a topic without one"
DATA=$TMP/data2
PORT=
start_broker --set compression.type=zstd
echo hello | kcat -P -b "$BROKER" -t plain -z none 2>"$TMP/k.err" || fail "produce: $(cat "$TMP/k.err")"
[ "$(kcat -C -b "$BROKER" -t plain -e -q)" = hello ] || fail "read back"
$PY - "$DATA" <<'PYEOF' || fail "the topic's batch is not zstd"
import os, struct, sys
d = os.path.join(sys.argv[1], "plain-0")
data = open(os.path.join(d, sorted(f for f in os.listdir(d) if f.endswith(".log"))[0]), "rb").read()
codecs, at = [], 0
while at + 61 <= len(data):
    blen = struct.unpack(">i", data[at + 8:at + 12])[0]
    attrs = struct.unpack(">h", data[at + 21:at + 23])[0]
    if not attrs & 0x20:
        codecs.append(attrs & 7)
    at += 12 + blen
assert codecs == [4], codecs
print("plain: stored as zstd (the broker's default)")
PYEOF
stop_broker
