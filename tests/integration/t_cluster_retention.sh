#!/usr/bin/env bash
# Retention in cluster mode (issue 5): a topic with replication factor 3, small segment.bytes and
# retention.bytes. Node 3 is stopped; while it is away the producer writes enough that every
# live replica's retention deletes segments node 3 never got. Node 3 restarted is below the
# leader's log start: the leader installs it (it truncates fully and restarts at the leader's
# log start) and it catches up. Then the three replicas hold byte-identical batches over their
# common range, up to the same end; a consumer from the beginning gets exactly the acknowledged
# records from the leader's log start to the end. DeleteRecords moves the leader's log start
# (a follower answers NOT_LEADER_OR_FOLLOWER). No replica failed; all stop cleanly.
# timeout: 90
source "$(dirname "$0")/lib.sh"

init_cluster 3
RET=(--set log.retention.check.interval.ms=200)
for i in 1 2 3; do start_node "$i" "${RET[@]}"; done
for i in 1 2 3; do
    wait_log "$i" 'event=cluster_registered' 1 10 || fail "node $i did not register within 10 s"
done
BOOT="127.0.0.1:${CL_PORT[1]},127.0.0.1:${CL_PORT[2]},127.0.0.1:${CL_PORT[3]}"

$PY - "$BOOT" <<'PYEOF' || fail "CreateTopics ret"
import sys
from confluent_kafka.admin import AdminClient, NewTopic
a = AdminClient({"bootstrap.servers": sys.argv[1]})
cfg = {"segment.bytes": "16384", "retention.bytes": "49152"}
for t, f in a.create_topics([NewTopic("ret", 1, 3, config=cfg)], request_timeout=10).items():
    f.result()
PYEOF
for i in 1 2 3; do
    wait_log "$i" 'event=cluster_replica_added topic=ret partition=0 replicas=3' 1 10 ||
        fail "node $i has no replica of ret"
done

# the batches of a replica's partition directory, from its segment files:
# "base_offset last_offset md5" lines (the whole batch's bytes), in offset order
cat >"$TMP/batches.py" <<'PYEOF'
import glob, hashlib, os, struct, sys
out = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.log"))):
    try:
        data = open(path, "rb").read()
    except FileNotFoundError:  # retention deleted it meanwhile: the caller retries
        sys.exit(3)
    pos = 0
    while pos + 61 <= len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        if length <= 0 or pos + 12 + length > len(data):
            break
        (delta,) = struct.unpack_from(">i", data, pos + 23)
        out.append("%d %d %s" % (base, base + delta, hashlib.md5(data[pos:pos + 12 + length]).hexdigest()))
        pos += 12 + length
print("\n".join(out))
PYEOF
batches() { $PY "$TMP/batches.py" "$TMP/data$1/ret-0"; }

# watermarks through the cluster: "low high"
watermarks() {
    $PY - "$BOOT" <<'PYEOF'
import sys
from confluent_kafka import Consumer, TopicPartition
c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": "wm"})
lo, hi = c.get_watermark_offsets(TopicPartition("ret", 0), timeout=10, cached=False)
print(lo, hi)
c.close()
PYEOF
}

# ---- produce; node 3 goes away after the first few thousand records ----
COUNT=40000
$PY "$ROOT/tests/integration/idem_producer.py" "$BOOT" ret $COUNT "$TMP/ret.acked" \
    --partitions 1 --rate 8000 -X acks=all >"$TMP/ret.out" 2>&1 &
PRODUCER=$!
for _ in $(seq 1 200); do
    [ -f "$TMP/ret.acked" ] && [ "$(wc -l <"$TMP/ret.acked")" -ge 4000 ] && break
    kill -0 $PRODUCER 2>/dev/null || fail "producer exited early: $(tail "$TMP/ret.out")"
    sleep 0.05
done
stop_node 3
batches 3 >"$TMP/b3.stop" || fail "cannot read node 3's batches"
n3_end=$(tail -1 "$TMP/b3.stop" | awk '{print $2 + 1}')
[ -n "$n3_end" ] && [ "$n3_end" -gt 0 ] || fail "node 3 holds no batch of ret"
note "node 3 stopped with ret-0 ending at offset $n3_end"
wait $PRODUCER || fail "producer failed: $(tail -20 "$TMP/ret.out")"
tail -1 "$TMP/ret.out"

# the live replicas' retention deletes what node 3 needs next
low=0
for _ in $(seq 1 100); do
    read -r low high < <(watermarks)
    [ "${low:-0}" -gt "$n3_end" ] && break
    sleep 0.1
done
[ "${low:-0}" -gt "$n3_end" ] || fail "log start $low did not pass node 3's end $n3_end"
for i in 1 2; do
    grep -q 'event=replica_compacted dir=[^ ]*ret-0' "$TMP/node$i.log" ||
        fail "node $i did not apply retention through its replica"
done
note "retention moved the log start to $low (end $high), past node 3's end $n3_end"

# ---- node 3 comes back below the leader's log start: installed, catches up ----
start_node 3 "${RET[@]}"
wait_log 3 'event=replica_install dir=[^ ]*ret-0' 1 20 || fail "node 3 was not installed"
grep 'event=replica_install dir=[^ ]*ret-0' "$TMP/node3.log" | tail -1 | sed 's/^/# /'
wait_log 3 'event=log_reset dir=[^ ]*ret-0' 1 5 || fail "node 3 did not reset its log"

# identical batches over the common range, every replica up to the same end
identical() {
    local ok=0 i ends
    for _ in $(seq 1 150); do
        for i in 1 2 3; do batches "$i" >"$TMP/b$i" || continue 2; done
        ends=$(for i in 1 2 3; do tail -1 "$TMP/b$i" | awk '{print $2}'; done | sort -u | wc -l)
        from=$(for i in 1 2 3; do head -1 "$TMP/b$i" | awk '{print $1}'; done | sort -n | tail -1)
        if [ "$ends" = 1 ] && [ -n "$from" ]; then
            for i in 1 2 3; do awk -v f="$from" '$1 >= f' "$TMP/b$i" >"$TMP/c$i"; done
            if cmp -s "$TMP/c1" "$TMP/c2" && cmp -s "$TMP/c1" "$TMP/c3"; then ok=1; break; fi
        fi
        sleep 0.1
    done
    [ $ok = 1 ] || { head -2 "$TMP"/b?; tail -2 "$TMP"/b?; return 1; }
}
identical || fail "replicas of ret differ after the install"
[ "$(wc -l <"$TMP/c1")" -ge 3 ] || fail "too few common batches: $(wc -l <"$TMP/c1")"
n3_start=$(head -1 "$TMP/b3" | awk '{print $1}')
[ "$n3_start" -gt "$n3_end" ] || fail "node 3's log starts at $n3_start, not past its old end"
note "replicas identical over [$from, $(tail -1 "$TMP/c1" | awk '{print $2 + 1}')): $(wc -l <"$TMP/c1") batches; node 3 restarted its log at $n3_start"

# ---- the consumer side: exactly the acknowledged records from the log start on ----
read -r low high < <(watermarks)
timeout 30 kcat -C -b "$BOOT" -t ret -o beginning -e -q -f '%p %o %s\n' >"$TMP/ret.read" ||
    fail "kcat ret failed"
read -r low2 high2 < <(watermarks)
[ "$low $high" = "$low2 $high2" ] || fail "watermarks moved during the read: $low $high -> $low2 $high2"
first=$(head -1 "$TMP/ret.read" | awk '{print $2}')
last=$(tail -1 "$TMP/ret.read" | awk '{print $2}')
acked_last=$(awk '{print $2}' "$TMP/ret.acked" | sort -n | tail -1)
# the log may end with record-less control batches (new leaders' first entries)
[ "$first" -ge "$low" ] && [ "$last" -eq "$acked_last" ] && [ "$last" -lt "$high" ] ||
    fail "read [$first, $last], log is [$low, $high), last acknowledged $acked_last"
$PY "$ROOT/tests/integration/history.py" --acked "$TMP/ret.acked" --final "$TMP/ret.read" \
    --values $COUNT --partitions 1 --idempotent --ordered --complete --log-start "0=$low" ||
    fail "history of ret has anomalies"
note "consumer read $(wc -l <"$TMP/ret.read") records, offsets [$first, $last] of [$low, $high)"

# ---- node 3 killed (-9) after its install: it reopens the installed log and follows again ----
for _ in $(seq 1 20); do batches 3 >"$TMP/b3.now" && break; done # retention may race a read
n3_first=$(head -1 "$TMP/b3.now" | awk '{print $1}')
kill9_node 3
start_node 3 "${RET[@]}" --set log.level=debug # a start's reopened replicas are logged at debug
wait_log 3 'event=cluster_replica_added topic=ret partition=0 ' 2 10 || fail "node 3 did not reopen ret-0"
opened=$(grep 'event=cluster_replica_added topic=ret partition=0 ' "$TMP/node3.log" | tail -1)
[[ $opened == *" log_start=$n3_first "* ]] || fail "node 3 reopened ret-0 elsewhere than $n3_first: $opened"
for i in $(seq 1 100); do echo "after-$i"; done |
    kcat -P -b "$BOOT" -t ret -p 0 -X acks=all 2>/dev/null || fail "kcat produce after the restart"
identical || fail "replicas of ret differ after node 3's restart"
note "node 3 killed and restarted: reopened at $n3_first, identical again up to $(tail -1 "$TMP/c1" | awk '{print $2 + 1}')"
read -r low high < <(watermarks)

# ---- DeleteRecords: the leader moves its log start through its replica; followers refuse ----
lead=$(kcat -L -b "$BOOT" -t ret -m 5 2>/dev/null | sed -n 's/.*partition 0, leader \([0-9]*\),.*/\1/p' | head -1)
[ -n "$lead" ] || fail "no leader for ret"
target=$(( (low + high) / 2 ))
$PY - "${CL_PORT[$(( lead % 3 + 1 ))]}" "${CL_PORT[$lead]}" "$target" "$low" "$ROOT/tests/integration" <<'PYEOF' ||
import struct, sys
sys.path.insert(0, sys.argv[5])
import kwire

def delete_records(port, offset):
    body = struct.pack(">i", 1) + kwire.string("ret") + struct.pack(">iiq", 1, 0, offset)
    body += struct.pack(">i", 5000)
    c = kwire.Conn("127.0.0.1", port)
    c.send(kwire.request(21, 0, body))
    f = c.recv_frame()
    c.close()
    off = 4 + 4 + 4                        # correlation id, throttle, topic count
    (ln,) = struct.unpack_from(">h", f, off)
    off += 2 + ln + 4                      # name, partition count
    _p, low, err = struct.unpack_from(">iqh", f, off)
    return err, low

follower, leader, target, low = (int(a) for a in sys.argv[1:5])
err, _ = delete_records(follower, target)
assert err == 6, ("follower", err)
err, new_low = delete_records(leader, target)
assert err == 0 and low < new_low <= target, ("leader", err, low, new_low, target)
print("# DeleteRecords to %d: the leader's log start is now %d (batch start)" % (target, new_low))
PYEOF
    fail "DeleteRecords in cluster mode"
read -r low3 _ < <(watermarks)
[ "$low3" -gt "$low" ] && [ "$low3" -le "$target" ] || fail "low watermark $low3 after DeleteRecords to $target"
grep -q "event=replica_compacted dir=[^ ]*data$lead/ret-0 log_start=$low3 " "$TMP/node$lead.log" ||
    fail "the leader's replica did not move its log start to $low3"

for i in 1 2 3; do stop_node "$i"; done
grep -h 'event=replica_failed\|event=replica_install_unsupported' "$TMP"/node*.log &&
    fail "a replica failed"
grep -h 'level=error' "$TMP"/node*.log && fail "errors logged"
note "all nodes stopped cleanly"
