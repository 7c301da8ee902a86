#!/usr/bin/env bash
# Raft's own entries never stall a reader (issue 12, point 5), three nodes. Each new leader
# writes a NOOP (a record-less control batch) into the partition log; Fetch leaves record-less
# batches out, so a reader could never pass a log tail made of them. The broker keeps the high
# watermark before such a tail (replication/replica.h "Visibility"). Three topics of replication
# factor 3, their logs checked on disk:
#   empty    only NOOPs (a topic nobody wrote to, after leader changes);
#   tail     data, then a run of NOOPs at the end;
#   between  NOOPs between data batches and at the end.
# Every client reads each to its end in a group of its own and stops there: kcat -C -e and
# kcat -G -e (librdkafka), streampulse consume --exit (librdkafka, with and without a group),
# confluent-kafka and kafka-python group consumers (tail_readers.py: position = high
# watermark, committed = high watermark), and kafkajs and @platformatic/kafka group consumers
# (committed = high watermark); each gets exactly the data records at their offsets, and every group's lag is 0.
# Data produced after the NOOP tail is then read from the committed offset. Then one node, two
# restarts: its logs hold data only, and every client reads an empty topic and a written one to
# the end.
# timeout: 240
source "$(dirname "$0")/lib.sh"
[ -d "$NODE_DIR/node_modules/kafkajs" ] && [ -d "$NODE_DIR/node_modules/@platformatic/kafka" ] || (cd "$NODE_DIR" && npm ci --no-audit --no-fund >/dev/null)

start_cluster 3 --set auto.leader.rebalance.enable=false
BOOT="127.0.0.1:${CL_PORT[1]},127.0.0.1:${CL_PORT[2]},127.0.0.1:${CL_PORT[3]}"
export STREAMPULSE_BROKERS=$BOOT

$PY - "$BOOT" <<'PYEOF' || fail "CreateTopics"
import sys
from confluent_kafka.admin import AdminClient, NewTopic
a = AdminClient({"bootstrap.servers": sys.argv[1]})
for t, f in a.create_topics([NewTopic(n, 1, 3) for n in ("empty", "tail", "between")],
                            request_timeout=10).items():
    f.result()
PYEOF
for t in empty tail between; do
    for i in 1 2 3; do
        wait_log "$i" "event=cluster_replica_added topic=$t partition=0 replicas=3" 1 10 ||
            fail "node $i has no replica of $t"
    done
done

# leader TOPIC: partition 0's leader as node 1's Metadata gives it (-1: none)
leader() {
    kcat -L -b "127.0.0.1:${CL_PORT[1]}" -t "$1" -m 2 2>/dev/null |
        sed -n 's/.*partition 0, leader \(-\{0,1\}[0-9]*\),.*/\1/p' | head -1
}
# produce TOPIC VALUE...: acks=all, one batch per value
produce() {
    local t=$1 v
    shift
    for v in "$@"; do
        echo "$v" | kcat -P -b "$BOOT" -t "$t" -p 0 -X acks=all || fail "produce $v to $t"
    done
}
# batches NODE TOPIC: "base last records control" per batch of the replica's log, in order
cat >"$TMP/batches.py" <<'PYEOF'
import glob, os, struct, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.log"))):
    data = open(path, "rb").read()
    pos = 0
    while pos + 61 <= len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        if length <= 0 or pos + 12 + length > len(data):
            break
        (attrs, delta) = struct.unpack_from(">hi", data, pos + 21)
        (count,) = struct.unpack_from(">i", data, pos + 57)
        print(base, base + delta, count, 1 if attrs & 0x20 else 0)
        pos += 12 + length
PYEOF
batches() { $PY "$TMP/batches.py" "$TMP/data$1/$2-0"; }
# new_leader TOPIC: the leader's node stops (SIGTERM hands its partitions over) and starts
# again; waits until the topic has a leader of a higher term, whose NOOP then ends the log
new_leader() {
    local t=$1 l n
    l=$(leader "$t")
    [ -n "$l" ] && [ "$l" -ge 1 ] || fail "no leader for $t"
    n=$(batches "$l" "$t" | wc -l)
    stop_node "$l"
    start_node "$l" --set auto.leader.rebalance.enable=false
    wait_log "$l" 'event=cluster_registered' 2 10 || fail "node $l did not register again"
    for _ in $(seq 1 200); do
        local now
        now=$(leader "$t")
        if [ -n "$now" ] && [ "$now" -ge 1 ] && [ "$(batches "$now" "$t" | wc -l)" -gt "$n" ]; then
            return 0
        fi
        sleep 0.05
    done
    fail "no new leader wrote to $t within 10 s"
}

produce tail t1 t2 t3
produce between b1 b2
new_leader tail
new_leader tail
new_leader between
produce between b3
new_leader between
produce between b4 b5
new_leader between
new_leader empty

# every replica agrees on each log's layout (the last NOOP committed everywhere)
for t in empty tail between; do
    for _ in $(seq 1 100); do
        batches 1 "$t" >"$TMP/$t.1"
        batches 2 "$t" >"$TMP/$t.2"
        batches 3 "$t" >"$TMP/$t.3"
        cmp -s "$TMP/$t.1" "$TMP/$t.2" && cmp -s "$TMP/$t.1" "$TMP/$t.3" && break
        sleep 0.05
    done
    cmp -s "$TMP/$t.1" "$TMP/$t.2" && cmp -s "$TMP/$t.1" "$TMP/$t.3" ||
        fail "replicas of $t differ: $(paste "$TMP/$t".[123])"
done
# the layouts are what this test is about: record-less control batches where expected
kinds() { awk '{ printf "%s", ($3 == 0 && $4 == 1) ? "N" : "D" }' "$TMP/$1.1"; }
[[ $(kinds empty) =~ ^N+$ ]] || fail "empty's log is not NOOPs only: $(kinds empty)"
[[ $(kinds tail) =~ ^N+DDDNN+$ ]] || fail "tail's log does not end in NOOPs: $(kinds tail)"
[[ $(kinds between) =~ ^N+DDN+DN+DDN+$ ]] || fail "between's log has no NOOPs between data: $(kinds between)"
note "layouts (N = NOOP, D = data): empty $(kinds empty), tail $(kinds tail), between $(kinds between)"

# the data records each topic holds, "offset value", from the replica's log
expected() {
    timeout 30 kcat -C -b "$BOOT" -t "$1" -p 0 -o beginning -e -q -f '%o %s\n' >"$TMP/$1.expect" ||
        fail "kcat -C -e did not reach the end of $1"
}
expected empty
expected tail
expected between
[ ! -s "$TMP/empty.expect" ] || fail "records in empty: $(cat "$TMP/empty.expect")"
[ "$(cut -d' ' -f2 "$TMP/tail.expect" | xargs)" = "t1 t2 t3" ] || fail "tail holds $(cat "$TMP/tail.expect")"
[ "$(cut -d' ' -f2 "$TMP/between.expect" | xargs)" = "b1 b2 b3 b4 b5" ] ||
    fail "between holds $(cat "$TMP/between.expect")"
# the high watermark stops before the NOOP tail; the data's last offset + 1, or 0 when empty
hw() {
    $PY - "$BOOT" "$1" <<'PYEOF'
import sys
from confluent_kafka import Consumer, TopicPartition
c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": "hw"})
print(c.get_watermark_offsets(TopicPartition(sys.argv[2], 0), timeout=10, cached=False)[1])
c.close()
PYEOF
}
for t in empty tail between; do
    want=$(awk 'END { print NR ? $1 + 1 : 0 }' "$TMP/$t.expect")
    [ "$(hw "$t")" = "$want" ] || fail "$t: high watermark $(hw "$t"), the data ends at $want"
done
note "kcat -C -e read every topic to its end; high watermarks stop before the NOOP tails"

same() { # CLIENT TOPIC FILE
    diff <(sort -n "$3") <(sort -n "$TMP/$2.expect") >"$TMP/diff" ||
        fail "$1 on $2 did not read exactly the data records: $(cat "$TMP/diff")"
}
lag0() { # GROUP
    "$SP" group describe "$1" >"$TMP/describe" 2>&1 || fail "group describe $1: $(cat "$TMP/describe")"
    grep -qx 'TOTAL-LAG: 0' "$TMP/describe" || fail "group $1 lags: $(cat "$TMP/describe")"
}
# read_to_end PREFIX TOPIC...: every client reads each topic (partition 0) to its end in a group of
# its own (PREFIX-CLIENT-TOPIC), gets exactly $TMP/TOPIC.expect and stops there; every group's lag
# is then 0
read_to_end() {
    local pre=$1 t n client g
    shift
    for t in "$@"; do
        n=$(wc -l <"$TMP/$t.expect")
        timeout 30 kcat -b "$BOOT" -G "$pre-kcat-$t" -X auto.offset.reset=earliest -e -q -f '%o %s\n' "$t" \
            >"$TMP/kcat-g.out" 2>"$TMP/kcat-g.err" || fail "kcat -G -e on $t did not end: $(cat "$TMP/kcat-g.err")"
        same "kcat -G" "$t" "$TMP/kcat-g.out"
        timeout 30 "$SP" consume -t "$t" --exit -f '%o %v\n' >"$TMP/sp.out" ||
            fail "streampulse consume --exit on $t did not end"
        same "streampulse consume" "$t" "$TMP/sp.out"
        timeout 30 "$SP" consume -t "$t" --group "$pre-sp-$t" --exit -f '%o %v\n' >"$TMP/spg.out" ||
            fail "streampulse consume --group --exit on $t did not end"
        same "streampulse consume --group" "$t" "$TMP/spg.out"
        for client in confluent kafka-python; do
            $PY "$ROOT/tests/integration/tail_readers.py" "$BOOT" "$t" "$pre-$client-$t" "$client" \
                >"$TMP/py.out" || fail "$client on $t: $(tail -3 "$TMP/py.out")"
            same "$client" "$t" "$TMP/py.out"
        done
        (cd "$NODE_DIR" && node tail_readers.js "$BOOT" "$t" "$pre-kafkajs-$t" "$n") >"$TMP/kjs.out" ||
            fail "kafkajs on $t: $(tail -3 "$TMP/kjs.out")"
        same kafkajs "$t" "$TMP/kjs.out"
        (cd "$NODE_DIR" && node tail_readers_platformatic.mjs "$BOOT" "$t" "$pre-plt-$t" "$n") >"$TMP/plt.out" ||
            fail "@platformatic/kafka on $t: $(tail -3 "$TMP/plt.out")"
        same @platformatic/kafka "$t" "$TMP/plt.out"
        if [ "$n" -gt 0 ]; then
            for g in kcat sp confluent kafka-python kafkajs plt; do lag0 "$pre-$g-$t"; done
        fi
        note "$pre $t: every client read its $n records and stopped at the end; every group's lag is 0"
    done
}
read_to_end 3n empty tail between

# data after the NOOP tail: a group resumes at its committed offset (the high watermark before
# the NOOPs) and gets it, at its offset after them
produce tail t4
$PY "$ROOT/tests/integration/tail_readers.py" "$BOOT" tail 3n-confluent-tail confluent >"$TMP/resume" ||
    fail "confluent resuming on tail: $(tail -3 "$TMP/resume")"
last=$(batches 1 tail | tail -1 | cut -d' ' -f1)
[ "$(cat "$TMP/resume")" = "$last t4" ] || fail "resumed past the NOOPs with $(cat "$TMP/resume"), want '$last t4'"
lag0 3n-confluent-tail
note "the group resumed after the NOOP tail at offset $last"
for i in 1 2 3; do stop_node "$i"; done

# One node: the only voter of its groups writes no Raft entry into a partition log (no NOOP at
# an election, raft/raft.h), however often it restarts, so its partitions hold data batches only
# and every client reads an empty one and a written one to the end.
DATA=$TMP/single
BOOT=
start_broker
BOOT=$BROKER
export STREAMPULSE_BROKERS=$BOOT
"$SP" topic create empty1 --partitions 1 >/dev/null || fail "topic create empty1"
"$SP" topic create data1 --partitions 1 >/dev/null || fail "topic create data1"
produce data1 d1 d2
stop_broker
start_broker
produce data1 d3
stop_broker
start_broker
for t in empty1 data1; do
    $PY "$TMP/batches.py" "$DATA/$t-0" >"$TMP/$t.1"
    expected "$t"
done
[ ! -s "$TMP/empty1.1" ] || fail "empty1's log holds batches: $(cat "$TMP/empty1.1")"
[ "$(kinds data1)" = DDD ] || fail "data1's log is not its three data batches: $(kinds data1)"
[ "$(cut -d' ' -f2 "$TMP/data1.expect" | xargs)" = "d1 d2 d3" ] || fail "data1 holds $(cat "$TMP/data1.expect")"
read_to_end 1n empty1 data1
stop_broker
