#!/usr/bin/env bash
# Partitions are not bounded by `ulimit -n` (log.max.open.files): a broker allowed 1024
# descriptors hosts 600 partitions (each used to hold three: its directory twice and its active
# segment), takes one record in each through librdkafka, serves them all back, and keeps every
# one through a clean restart and a kill -9. Its descriptors stay within the cache's limit plus
# what sockets and its own files take, and the cache's work shows in /metrics. (A Fetch over
# every partition holds one reference per partition with data until it is sent, beyond the
# cache: that is what the rest of the descriptor limit is for.)
# timeout: 180
source "$(dirname "$0")/lib.sh"

N=600
LIMIT=32
ulimit -n 1024 # the broker and the clients started below inherit it

open_fds() { ls "/proc/$BROKER_PID/fd" | wc -l; }
metric() { curl -sf "http://$ADMIN/metrics" >"$TMP/m.txt" && sed -n "s/^$1 //p" "$TMP/m.txt"; }

start_broker --set log.max.open.files=$LIMIT --set max.connections=50
grep -q "open_files_limit.*log_max_open_files=$LIMIT" "$BROKER_LOG" || fail "limit not logged"
note "$N partitions with ulimit -n 1024"
"$SP" topic create wide --partitions $N -b "$BROKER" >"$TMP/create.out" 2>&1 ||
    fail "topic create: $(cat "$TMP/create.out")"
dirs_made() { [ "$(ls -d "$DATA"/wide-* 2>/dev/null | wc -l)" -eq $N ]; }
WAIT_S=60 poll_until dirs_made ||
    fail "only $(ls -d "$DATA"/wide-* | wc -l) of $N partition directories after 60 s"

# one keyed record per partition (librdkafka, acks=all), each read back from its partition
produce_and_check() {
    $PY - "$BROKER" $N "$1" <<'PYEOF'
import sys
from confluent_kafka import Producer, Consumer, TopicPartition
broker, n, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if mode == "produce":
    p = Producer({"bootstrap.servers": broker, "acks": "all", "linger.ms": 50})
    errs = []
    for i in range(n):
        p.produce("wide", value=b"v%d" % i, partition=i,
                  on_delivery=lambda e, m: errs.append(e) if e else None)
    left = p.flush(60)
    assert left == 0 and not errs, (left, errs[:3])
c = Consumer({"bootstrap.servers": broker, "group.id": "g-" + mode, "enable.auto.commit": False})
c.assign([TopicPartition("wide", i, 0) for i in range(n)])
got = {}
for _ in range(600):
    for m in c.consume(500, 0.2):
        assert not m.error(), m.error()
        got[m.partition()] = m.value()
    if len(got) == n:
        break
c.close()
assert len(got) == n, "%d of %d partitions read back" % (len(got), n)
bad = [i for i in range(n) if got[i] != b"v%d" % i]
assert not bad, bad[:5]
print("%s: %d partitions, one record each, read back" % (mode, n))
PYEOF
}
produce_and_check produce || fail "produce and read back"
fds=$(open_fds)
note "broker descriptors: $fds (cache limit $LIMIT)"
[ "$fds" -le $((LIMIT + 60)) ] || fail "$fds descriptors open for $N partitions (limit $LIMIT)"
open=$(metric streampulse_storage_open_files)
[ "${open:-999}" -le $LIMIT ] || fail "streampulse_storage_open_files=$open above $LIMIT"
ev=$(metric streampulse_storage_file_evictions_total)
re=$(metric streampulse_storage_file_reopens_total)
[ "${ev:-0}" -gt 0 ] && [ "${re:-0}" -gt 0 ] || fail "no evictions ($ev) or reopens ($re) counted"
errs=$(metric streampulse_storage_file_reopen_errors_total)
[ "$errs" = 0 ] || fail "$errs reopen errors counted: $(grep -a "level=\(warn\|error\)" "$BROKER_LOG" | head -5)"

note "clean restart, then kill -9: every record stays"
stop_broker
start_broker --set log.max.open.files=$LIMIT --set max.connections=50
produce_and_check after-clean-restart || fail "after a clean restart"
kill9_broker
start_broker --set log.max.open.files=$LIMIT --set max.connections=50
produce_and_check after-kill9 || fail "after kill -9"
fds=$(open_fds)
[ "$fds" -le $((LIMIT + 60)) ] || fail "$fds descriptors after recovery"
stop_broker

note "log.max.open.files below 16 is raised to 16; a bad value is refused"
if "$SP" serve --set "log.dirs=$TMP/x" --set log.max.open.files=-1 --set admin.listener= \
    --set listeners=PLAINTEXT://127.0.0.1:0 >"$TMP/bad.out" 2>&1; then
    fail "log.max.open.files=-1 was taken"
fi
grep -q "log.max.open.files" "$TMP/bad.out" || fail "$(cat "$TMP/bad.out")"
PORT=
DATA=$TMP/data2
start_broker --set log.max.open.files=3
grep -q "open_files_limit.*log_max_open_files=16" "$BROKER_LOG" || fail "3 was not raised to 16"
stop_broker
