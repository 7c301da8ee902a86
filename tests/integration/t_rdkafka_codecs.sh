#!/usr/bin/env bash
# librdkafka (C): 1,000,000 records over 8 partitions with acks=all, for each of
# none/gzip/snappy/lz4/zstd; every record read back, count and checksum equal.
# timeout: 600
source "$(dirname "$0")/lib.sh"
start_broker
for codec in none gzip snappy lz4 zstd; do
    "$ITEST_BIN/rdkafka_roundtrip" "$BROKER" "rt-$codec" "$codec" "${RT_RECORDS:-1000000}" 8 ||
        fail "round trip with $codec"
done
stop_broker
