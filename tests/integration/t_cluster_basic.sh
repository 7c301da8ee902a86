#!/usr/bin/env bash
# Cluster mode (controller.quorum.voters): three nodes start, elect a controller and register
# with it; a node restarted registers again. A topic with replication factor 3 created at one
# node: 10,000 idempotent acks=all records produced, read back through a client bootstrapped at
# a follower. The partition's leader killed (-9) during a produce run: a new leader within 1 s,
# the producer goes on, history.py finds no anomaly; the killed node restarted catches up and
# the three replicas' logs are byte-identical. All stop cleanly.
# timeout: 120
source "$(dirname "$0")/lib.sh"

start_cluster 3
ctl=$(ctl_leader)
[ -n "$ctl" ] || fail "no controller leader elected"
note "controller leader: node $ctl; every node registered"

# the quorum survives a restart of one node, which registers again (a new incarnation)
other=$(( ctl % 3 + 1 ))
stop_node "$other"
start_node "$other"
wait_log "$other" 'event=cluster_registered' 2 10 || fail "node $other did not register again"
note "node $other restarted and registered again"

# a node refuses a quorum it is not part of, naming the key
if "$SP" serve --set node.id=9 --set "log.dirs=$TMP/data9" --set "listeners=PLAINTEXT://127.0.0.1:0" \
    --set "controller.quorum.voters=$CL_VOTERS" --set admin.listener= >"$TMP/bad.log" 2>&1; then
    fail "node 9 started without being a voter or having cluster.listener"
fi
grep -q 'cluster.listener' "$TMP/bad.log" || fail "refusal does not name cluster.listener: $(cat "$TMP/bad.log")"

BOOT="127.0.0.1:${CL_PORT[1]},127.0.0.1:${CL_PORT[2]},127.0.0.1:${CL_PORT[3]}"

# isr NODE TOPIC: partition 0's in-sync replicas as NODE's Metadata gives them, sorted: "1 2 3"
isr() {
    kcat -L -b "127.0.0.1:${CL_PORT[$1]}" -t "$2" -m 2 2>/dev/null |
        sed -n 's/.*partition 0, .*isrs: \([0-9,]*\).*/\1/p' | head -1 | tr ',' '\n' | sort -n | xargs
}
# leader NODE TOPIC: the partition 0 leader that NODE's Metadata names (-1 if none)
leader() {
    kcat -L -b "127.0.0.1:${CL_PORT[$1]}" -t "$2" -m 2 2>/dev/null |
        sed -n 's/.*partition 0, leader \(-\{0,1\}[0-9]*\),.*/\1/p' | head -1
}
# create_topic NODE NAME: replication factor 3, one partition, through NODE
create_topic() {
    $PY - "127.0.0.1:${CL_PORT[$1]}" "$2" <<'PYEOF'
import sys
from confluent_kafka.admin import AdminClient, NewTopic
a = AdminClient({"bootstrap.servers": sys.argv[1]})
for t, f in a.create_topics([NewTopic(sys.argv[2], 1, 3)], request_timeout=10).items():
    f.result()
PYEOF
}
wait_leader() { # NODE TOPIC: waits up to 5 s for a leader, prints it
    local l
    for _ in $(seq 1 100); do
        l=$(leader "$1" "$2")
        [ -n "$l" ] && [ "$l" -ge 0 ] && { echo "$l"; return 0; }
        sleep 0.05
    done
    return 1
}

# ---- replication: create at one node, produce, read back through a follower ----
create_topic "$ctl" basic || fail "CreateTopics through node $ctl failed"
for i in 1 2 3; do
    wait_log "$i" 'event=cluster_replica_added topic=basic partition=0 replicas=3' 1 5 ||
        fail "node $i has no replica of basic"
done
$PY "$ROOT/tests/integration/idem_producer.py" "$BOOT" basic 10000 "$TMP/basic.acked" \
    --partitions 1 -X acks=all >"$TMP/basic.out" 2>&1 || fail "producer: $(tail "$TMP/basic.out")"
lead=$(wait_leader 1 basic) || fail "no leader for basic"
follower=$(( lead % 3 + 1 ))
timeout 30 kcat -C -b "127.0.0.1:${CL_PORT[$follower]}" -t basic -e -q -f '%p %o %s\n' \
    >"$TMP/basic.read" || fail "kcat through follower $follower failed"
$PY "$ROOT/tests/integration/history.py" --acked "$TMP/basic.acked" --final "$TMP/basic.read" \
    --values 10000 --partitions 1 --idempotent --ordered --complete ||
    fail "history of basic has anomalies"
note "10000 records through leader $lead, read back through follower $follower"
for i in 1 2 3; do
    [ "$(leader "$i" basic)" = "$lead" ] || fail "node $i names another leader than $lead"
done
# on the wire: a follower answers Produce and Fetch NOT_LEADER_OR_FOLLOWER (6), the leader serves
$PY - "${CL_PORT[$follower]}" "${CL_PORT[$lead]}" "$ROOT/tests/integration" <<'PYEOF' || fail "follower/leader answers"
import struct, sys
sys.path.insert(0, sys.argv[3])
import kwire

def fetch_error(port):
    body = struct.pack(">iiiib", -1, 100, 1, 1 << 20, 0) + struct.pack(">i", 1)
    body += kwire.string("basic") + struct.pack(">iiqi", 1, 0, 0, 1 << 20)
    c = kwire.Conn("127.0.0.1", port)
    c.send(kwire.request(1, 4, body))
    f = c.recv_frame()
    c.close()
    off = 4 + 4 + 4                        # correlation id, throttle, topic count
    (ln,) = struct.unpack_from(">h", f, off)
    off += 2 + ln + 4                      # name, partition count
    _p, err = struct.unpack_from(">ih", f, off)
    return err

def produce_error(port):
    c = kwire.Conn("127.0.0.1", port)
    c.send(kwire.request(0, 3, kwire.produce_v3("basic", 0, kwire.batch([b"x"]))))
    errs = kwire.parse_produce_v3_errors(c.recv_frame())
    c.close()
    return errs[0][2]

follower, leader = int(sys.argv[1]), int(sys.argv[2])
got = (produce_error(follower), fetch_error(follower), fetch_error(leader))
assert got == (6, 6, 0), got
PYEOF
note "follower $follower refuses Produce and Fetch (NOT_LEADER_OR_FOLLOWER); leader $lead serves Fetch"

# producer ids come from the controller in blocks: InitProducerId at each node, ids distinct
$PY - "${CL_PORT[1]}" "${CL_PORT[2]}" "${CL_PORT[3]}" "$ROOT/tests/integration" <<'PYEOF' ||
import struct, sys, time
sys.path.insert(0, sys.argv[4])
import kwire

def init_pid(port):
    for _ in range(100):
        c = kwire.Conn("127.0.0.1", port)
        c.send(kwire.request(22, 0, kwire.string(None) + struct.pack(">i", 60000)))
        f = c.recv_frame()
        c.close()
        _corr, _thr, err, pid, epoch = struct.unpack_from(">iihqh", f, 0)
        if err == 0:
            return pid
        assert err == 14, err  # COORDINATOR_LOAD_IN_PROGRESS while the block is on its way
        time.sleep(0.05)
    raise SystemExit("no producer id from port %d" % port)

pids = [init_pid(int(p)) for p in sys.argv[1:4]]
assert len(set(pids)) == 3 and min(pids) >= 0, pids
print("# producer ids from nodes 1, 2, 3: %s" % pids)
PYEOF
    fail "InitProducerId in cluster mode"

# ---- failover: kill -9 the leader during a produce run ----
create_topic "$ctl" hist || fail "CreateTopics hist failed"
COUNT=12000
$PY "$ROOT/tests/integration/idem_producer.py" "$BOOT" hist $COUNT "$TMP/hist.acked" \
    --partitions 1 --rate 3000 -X acks=all >"$TMP/hist.out" 2>&1 &
PRODUCER=$!
for _ in $(seq 1 400); do
    [ -f "$TMP/hist.acked" ] && [ "$(wc -l <"$TMP/hist.acked")" -ge 3000 ] && break
    kill -0 $PRODUCER 2>/dev/null || fail "producer exited early: $(tail "$TMP/hist.out")"
    sleep 0.05
done
lead=$(wait_leader 1 hist) || fail "no leader for hist"
survivor=$(( lead % 3 + 1 ))
t0=$(date +%s%N)
kill9_node "$lead"
new=""
while :; do
    l=$(leader "$survivor" hist)
    if [ -n "$l" ] && [ "$l" -ge 0 ] && [ "$l" != "$lead" ]; then new=$l; break; fi
    [ $(( ($(date +%s%N) - t0) / 1000000 )) -lt 5000 ] || break
    sleep 0.02
done
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ -n "$new" ] || fail "no new leader 5 s after killing node $lead"
note "killed leader $lead at $(wc -l <"$TMP/hist.acked") acks; node $new leads after $ms ms"
[ "$ms" -le 1000 ] || fail "new leader took $ms ms (> 1000)"
wait $PRODUCER || fail "producer failed: $(tail -20 "$TMP/hist.out")"
tail -1 "$TMP/hist.out"
timeout 30 kcat -C -b "127.0.0.1:${CL_PORT[$survivor]}" -t hist -e -q -f '%p %o %s\n' \
    >"$TMP/hist.read" || fail "kcat hist failed"
$PY "$ROOT/tests/integration/history.py" --acked "$TMP/hist.acked" --final "$TMP/hist.read" \
    --values $COUNT --partitions 1 --idempotent --ordered --complete ||
    fail "history of hist has anomalies"

want=$(for i in 1 2 3; do if [ "$i" != "$lead" ]; then echo "$i"; fi; done | xargs)
[ "$(isr "$new" hist)" = "$want" ] || fail "ISR at leader $new: '$(isr "$new" hist)', want '$want'"
note "ISR without the dead node: $want"

# ---- the killed node comes back and catches up: identical logs ----
start_node "$lead"
same=0
for _ in $(seq 1 200); do
    sums=$(for i in 1 2 3; do cat "$TMP"/data$i/hist-0/*.log 2>/dev/null | md5sum; done | sort -u | wc -l)
    [ "$sums" = 1 ] && { same=1; break; }
    sleep 0.05
done
[ $same = 1 ] || { ls -l "$TMP"/data*/hist-0/; fail "replicas of hist differ after catch-up"; }
back=""
for _ in $(seq 1 100); do
    [ "$(isr "$new" hist)" = "1 2 3" ] && { back=1; break; }
    sleep 0.05
done
[ -n "$back" ] || fail "node $lead not back in the ISR: '$(isr "$new" hist)'"
note "node $lead restarted, caught up: the three logs of hist are identical ($(cat "$TMP"/data1/hist-0/*.log | wc -c) bytes)"

for i in 1 2 3; do stop_node "$i"; done
grep -h 'level=error' "$TMP"/node*.log && fail "errors logged"
note "all nodes stopped cleanly"
