#!/usr/bin/env bash
# Cluster faults (issue 5 acceptance), three nodes whose inter-broker traffic goes through
# cluster_proxy.py (the voters name the proxies; each node listens on its cluster.listener).
# Each scenario runs an idempotent acks=all producer on its own rf=3 topic and ends with
# history.py --idempotent --ordered --complete and the replicas' logs compared byte for byte:
#  1. SIGSTOP the partition leader 5 s: another node leads meanwhile; after SIGCONT the old
#     leader follows again and the three logs are identical.
#  2. the leader cut off by the proxies: a produce sent to it alone is never acknowledged (no
#     answer or a retriable error); the majority elects a leader and goes on; healed, the logs
#     converge.
#  3. kill -9 the controller leader: CreateTopics and CreatePartitions succeed under a new
#     controller; the restarted node gets the new topic's replicas.
#  4. SIGTERM the partition leader: it hands leadership over (cluster_handover) and exits 0;
#     the longest stall of the producer's acknowledgements is measured.
# timeout: 120
source "$(dirname "$0")/lib.sh"

init_cluster 3
declare -a PX=()
CL_VOTERS=""
specs=()
for i in 1 2 3; do
    # free_port may hand out a port it gave before (it only binds and releases): keep all distinct
    for _ in $(seq 1 20); do
        PX[$i]=$(free_port)
        case " ${CL_PORT[*]} ${CL_CPORT[*]} ${PX[*]:0:$((i - 1))} " in
        *" ${PX[$i]} "*) ;;
        *) break ;;
        esac
    done
    CL_VOTERS="${CL_VOTERS:+$CL_VOTERS,}$i@127.0.0.1:${PX[$i]}"
    specs+=("${PX[$i]}:${CL_CPORT[$i]}:$i")
done
CTLF=$TMP/isolated
: >"$CTLF"
$PY "$ROOT/tests/integration/cluster_proxy.py" "$CTLF" "${specs[@]}" >"$TMP/proxy.log" 2>&1 &
PROXY=$!
for _ in $(seq 1 100); do grep -q ready "$TMP/proxy.log" && break; sleep 0.05; done
grep -q ready "$TMP/proxy.log" || fail "proxy did not start: $(cat "$TMP/proxy.log")"

start() { start_node "$1" --set "cluster.listener=127.0.0.1:${CL_CPORT[$1]}"; }
for i in 1 2 3; do start "$i"; done
for i in 1 2 3; do
    wait_log "$i" 'event=cluster_registered' 1 10 || fail "node $i did not register within 10 s"
done
BOOT="127.0.0.1:${CL_PORT[1]},127.0.0.1:${CL_PORT[2]},127.0.0.1:${CL_PORT[3]}"
note "three nodes registered through the proxies"

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# leader NODE TOPIC: the partition 0 leader that NODE's Metadata names ("" if NODE does not answer)
leader() {
    timeout 2 kcat -L -b "127.0.0.1:${CL_PORT[$1]}" -t "$2" -m 1 2>/dev/null |
        sed -n 's/.*partition 0, leader \(-\{0,1\}[0-9]*\),.*/\1/p' | head -1
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
# new_leader NODE TOPIC OLD SECS: waits until NODE names a leader other than OLD that serves a
# Fetch of partition 0 (a named leader may be a hint, cluster_leader_hint), prints it
new_leader() {
    local l end=$(( $(now_ms) + $4 * 1000 ))
    while [ "$(now_ms)" -lt $end ]; do
        l=$(leader "$1" "$2")
        [ -n "$l" ] && [ "$l" -ge 0 ] && [ "$l" != "$3" ] && [ "$(fetch_error "$l" "$2")" = 0 ] &&
            { echo "$l"; return 0; }
        sleep 0.02
    done
    return 1
}
# create_topic NODE NAME [PARTITIONS]: replication factor 3, through NODE, retried for 10 s
create_topic() {
    $PY - "127.0.0.1:${CL_PORT[$1]}" "$2" "${3:-1}" <<'PYEOF'
import sys, time
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka import KafkaException
a = AdminClient({"bootstrap.servers": sys.argv[1]})
end = time.monotonic() + 10
while True:
    try:
        for t, f in a.create_topics([NewTopic(sys.argv[2], int(sys.argv[3]), 3)],
                                    request_timeout=5).items():
            f.result()
        break
    except KafkaException as e:
        if time.monotonic() > end or "already exists" in str(e).lower():
            raise
        time.sleep(0.2)
PYEOF
}
# produce TOPIC COUNT RATE: starts the idempotent acks=all producer in the background (PRODUCER).
# librdkafka waits socket.timeout.ms (60 s by default) for an answer from a broker that accepted
# the connection: a SIGSTOPped leader would hold the producer that long.
produce() {
    $PY "$ROOT/tests/integration/idem_producer.py" "$BOOT" "$1" "$2" "$TMP/$1.acked" \
        --partitions 1 --rate "$3" -X acks=all -X request.timeout.ms=1500 -X socket.timeout.ms=1500 ${PDEBUG:-} >"$TMP/$1.out" 2>&1 &
    PRODUCER=$!
}
acked() { if [ -f "$TMP/$1.acked" ]; then wc -l <"$TMP/$1.acked"; else echo 0; fi; }
wait_acked() { # TOPIC N: waits up to 20 s for N acknowledgements
    for _ in $(seq 1 400); do
        [ "$(acked "$1")" -ge "$2" ] && return 0
        kill -0 $PRODUCER 2>/dev/null || fail "producer of $1 exited early: $(tail "$TMP/$1.out")"
        sleep 0.05
    done
    fail "producer of $1: fewer than $2 acks after 20 s"
}
# check_history TOPIC COUNT NODE: waits for the producer, reads through NODE, runs history.py
check_history() {
    wait $PRODUCER || fail "producer of $1 failed: $(tail -20 "$TMP/$1.out")"
    timeout 30 kcat -C -b "127.0.0.1:${CL_PORT[$3]}" -t "$1" -e -q -f '%p %o %s\n' \
        >"$TMP/$1.read" || fail "kcat $1 failed"
    $PY "$ROOT/tests/integration/history.py" --acked "$TMP/$1.acked" --final "$TMP/$1.read" \
        --values "$2" --partitions 1 --idempotent --ordered --complete ||
        fail "history of $1 has anomalies"
}
# same_logs TOPIC: waits up to 10 s until the three replicas' partition-0 logs are identical
same_logs() {
    local sums
    for _ in $(seq 1 200); do
        sums=$(for i in 1 2 3; do cat "$TMP"/data$i/"$1"-0/*.log 2>/dev/null | md5sum; done | sort -u | wc -l)
        [ "$sums" = 1 ] && return 0
        sleep 0.05
    done
    ls -l "$TMP"/data*/"$1"-0/
    fail "replicas of $1 differ"
}

# fetch_error NODE TOPIC: the error code of a Fetch of partition 0 at offset 0 sent to NODE
fetch_error() {
    $PY - "${CL_PORT[$1]}" "$2" "$ROOT/tests/integration" <<'PYEOF'
import struct, sys
sys.path.insert(0, sys.argv[3])
import kwire
body = struct.pack(">iiiib", -1, 100, 1, 1 << 20, 0) + struct.pack(">i", 1)
body += kwire.string(sys.argv[2]) + struct.pack(">iiqi", 1, 0, 0, 1 << 20)
c = kwire.Conn("127.0.0.1", int(sys.argv[1]))
c.send(kwire.request(1, 4, body))
f = c.recv_frame()
(ln,) = struct.unpack_from(">h", f, 12)
print(struct.unpack_from(">ih", f, 12 + 2 + ln + 4)[1])
PYEOF
}

ctl=$(ctl_leader)
[ -n "$ctl" ] || fail "no controller leader"

# ---- 1. SIGSTOP the leader for 5 s ----
create_topic "$ctl" stop1 || fail "CreateTopics stop1"
produce stop1 6000 1000
wait_acked stop1 1000
lead=$(wait_leader 1 stop1) || fail "no leader for stop1"
other=$(( lead % 3 + 1 ))
t0=$(now_ms)
kill -STOP "${CL_PID[$lead]}"
new=$(new_leader "$other" stop1 "$lead" 4) || { kill -CONT "${CL_PID[$lead]}"; fail "no new leader while node $lead is stopped"; }
ms=$(( $(now_ms) - t0 ))
before=$(acked stop1)
# the new leader serves the partition meanwhile (new_leader fetched from it), and the producer
# goes on there once its requests to the stopped node time out (socket.timeout.ms, below)
sleep $(( 5 - ms / 1000 ))
e=$(fetch_error "$new" stop1)
[ "$e" = 0 ] || { kill -CONT "${CL_PID[$lead]}"; fail "new leader $new answers Fetch $e 5 s into the stop"; }
during=$(( $(acked stop1) - before ))
kill -CONT "${CL_PID[$lead]}"
[ "$during" -gt 0 ] || fail "the producer got no acknowledgement while node $lead was stopped"
note "1. node $lead stopped 5 s: node $new leads after $ms ms and serves Fetch; $during producer acks meanwhile"
check_history stop1 6000 "$other"
same_logs stop1
[ "$(leader "$lead" stop1)" = "$new" ] || fail "old leader $lead names '$(leader "$lead" stop1)', not $new"
note "1. resumed node $lead follows $new; history clean; three logs of stop1 identical"

# ---- 2. the leader cut off from the other two ----
create_topic "$ctl" cut2 || fail "CreateTopics cut2"
produce cut2 6000 1000
wait_acked cut2 1000
lead=$(wait_leader 1 cut2) || fail "no leader for cut2"
other=$(( lead % 3 + 1 ))
echo "$lead" >"$CTLF"
t0=$(now_ms)
# a produce sent to the isolated leader alone: no answer within 3 s, or a retriable error
$PY - "${CL_PORT[$lead]}" "$ROOT/tests/integration" <<'PYEOF' || fail "isolated leader acknowledged a write"
import socket, sys
sys.path.insert(0, sys.argv[2])
import kwire
c = kwire.Conn("127.0.0.1", int(sys.argv[1]))
c.send(kwire.request(0, 3, kwire.produce_v3("cut2", 0, kwire.batch([b"minority"]), acks=-1,
                                            timeout=3000)))
c.s.settimeout(4)
try:
    f = c.recv_frame()
except (socket.timeout, OSError) as e:
    print("# isolated leader: no answer in 4 s (%s)" % type(e).__name__)
    sys.exit(0)
if f is None:
    print("# isolated leader closed the connection without an answer")
    sys.exit(0)
errs = kwire.parse_produce_v3_errors(f)
err = errs[0][2]
print("# isolated leader answered error %d" % err)
sys.exit(0 if err in (6, 7) else 1)  # NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT
PYEOF
new=$(new_leader "$other" cut2 "$lead" 5) || fail "the majority elected no leader"
ms=$(( $(now_ms) - t0 ))
before=$(acked cut2)
t1=$(now_ms)
while [ "$(acked cut2)" = "$before" ] && [ $(( $(now_ms) - t1 )) -lt 10000 ]; do sleep 0.05; done
[ "$(acked cut2)" != "$before" ] || { tail -5 "$TMP/cut2.out"; fail "no acknowledgement from the majority in 10 s"; }
note "2. node $lead cut off: node $new leads ($ms ms after the cut); the producer's acks resume $(( $(now_ms) - t1 )) ms later"
: >"$CTLF"
check_history cut2 6000 "$other"
same_logs cut2
note "2. healed: history clean, three logs of cut2 identical"
grep -q 'minority' "$TMP/cut2.read" && note "(the minority write was committed after the heal: allowed, it was never acknowledged)"

# ---- 3. kill -9 the controller leader ----
ctl=$(ctl_leader)
[ -n "$ctl" ] && [ "$ctl" -ge 1 ] || fail "no controller"
rest=$(( ctl % 3 + 1 ))
t0=$(now_ms)
kill9_node "$ctl"
newctl=""
while [ $(( $(now_ms) - t0 )) -lt 10000 ]; do
    newctl=$(ctl_leader)
    [ -n "$newctl" ] && [ "$newctl" != "$ctl" ] && break
    sleep 0.05
done
[ -n "$newctl" ] && [ "$newctl" != "$ctl" ] ||
    fail "no new controller leader 10 s after the kill: '$newctl' ($(grep ctl_ "$TMP"/node$rest.log | tail -5))"
note "3. controller $ctl killed: node $newctl elected controller leader after $(( $(now_ms) - t0 )) ms"
create_topic "$rest" meta3 || fail "CreateTopics after the controller died"
ms=$(( $(now_ms) - t0 ))
newctl=$(ctl_leader)
# Metadata names the live broker answering as the controller (KRaft's KIP-590 behaviour), so a
# client never waits on a dead one
mdctl=$(timeout 5 kcat -L -b "127.0.0.1:${CL_PORT[$rest]}" -m 1 2>/dev/null |
    sed -n 's/.*broker \([0-9]*\) at .*(controller).*/\1/p' | head -1)
[ "$mdctl" = "$rest" ] || fail "Metadata through node $rest names controller '$mdctl'"
$PY - "127.0.0.1:${CL_PORT[$rest]}" <<'PYEOF' || fail "CreatePartitions after the controller died"
import sys, time
from confluent_kafka.admin import AdminClient, NewPartitions
a = AdminClient({"bootstrap.servers": sys.argv[1]})
for t, f in a.create_partitions([NewPartitions("meta3", 3)], request_timeout=10).items():
    f.result()
# the broker asked may apply the committed change a moment after the controller answered
for _ in range(100):
    n = len(a.list_topics("meta3", timeout=5).topics["meta3"].partitions)
    if n == 3:
        break
    time.sleep(0.05)
assert n == 3, n
PYEOF
[ -n "$newctl" ] && [ "$newctl" != "$ctl" ] || fail "controller after the kill: '$newctl'"
note "3. controller $ctl killed: node $newctl controls; CreateTopics answered after $ms ms; CreatePartitions to 3"
start "$ctl"
for p in 0 1 2; do
    wait_log "$ctl" "event=cluster_replica_added topic=meta3 partition=$p " 1 10 ||
        fail "restarted node $ctl has no replica of meta3-$p"
done
note "3. restarted node $ctl has the three partitions of meta3"

# ---- 4. SIGTERM of a partition leader hands leadership over ----
create_topic "$rest" term4 || fail "CreateTopics term4"
produce term4 8000 1000
wait_acked term4 1000
lead=$(wait_leader "$rest" term4) || fail "no leader for term4"
other=$(( lead % 3 + 1 ))
# sample the acknowledgements every 20 ms around the stop: the longest stall
( for _ in $(seq 1 150); do echo "$(now_ms) $(acked term4)"; sleep 0.02; done ) >"$TMP/term4.samples" &
SAMPLER=$!
sleep 0.5
t0=$(now_ms)
stop_node "$lead"
stopped=$(( $(now_ms) - t0 ))
new=$(new_leader "$other" term4 "$lead" 5) || fail "no new leader after SIGTERM"
wait $SAMPLER
grep -q 'event=cluster_handover.*still_leading=0' "$TMP/node$lead.log" ||
    fail "node $lead did not hand over: $(grep cluster_handover "$TMP/node$lead.log")"
# the longest time between two changes of the ack count (a producer that never resumed fails
# below: its acks must have moved after the stop)
stall=$(awk 'NR == 1 { n = $2; last = $1; next }
             $2 != n { if ($1 - last > m) m = $1 - last; last = $1; n = $2 }
             END { print m + 0 }' "$TMP/term4.samples")
after=$(awk -v t="$t0" '$1 >= t { print $2; exit }' "$TMP/term4.samples")
last=$(tail -1 "$TMP/term4.samples" | cut -d' ' -f2)
[ "$last" -gt "${after:-0}" ] || fail "no acknowledgement after the SIGTERM ($after, $last)"
note "4. node $lead stopped (SIGTERM, exit 0 after $stopped ms, $(grep -o 'event=cluster_handover.*' "$TMP/node$lead.log" | tail -1)); node $new leads; longest ack stall $stall ms"
[ "$stall" -le 1500 ] || fail "producer stalled $stall ms across the handover"
check_history term4 8000 "$other"
start "$lead"
same_logs term4
note "4. restarted node $lead caught up: three logs of term4 identical"

for i in 1 2 3; do [ -n "${CL_PID[$i]}" ] && stop_node "$i"; done
kill "$PROXY" 2>/dev/null || true
wait "$PROXY" 2>/dev/null || true
grep -h 'level=error' "$TMP"/node*.log && fail "errors logged"
note "all nodes stopped cleanly"
