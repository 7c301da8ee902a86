#!/usr/bin/env bash
# kcat -G consumers of a 6-partition topic: with one, two, then three members every partition is
# assigned exactly once at each stable generation; a member killed with kill -9 is evicted after
# its session timeout (6 s) and its partitions go to the others; a member that closes leaves at
# once (LeaveGroup), well before any session timeout.
# timeout: 120
source "$(dirname "$0")/lib.sh"
start_broker --set num.partitions=6
T=kcat-g
kcat -L -b "$BROKER" -t $T >/dev/null   # auto-create with 6 partitions
seq 1 60 | kcat -P -b "$BROKER" -t $T
KG="$PY $ROOT/tests/integration/kgroup.py"

consumer() { # consumer NAME: a kcat group member in the background, pid in ${NAME}_PID
    kcat -b "$BROKER" -G grp -X session.timeout.ms=6000 -X heartbeat.interval.ms=500 \
        -X client.id="$1" -o beginning $T >"$TMP/$1.out" 2>"$TMP/$1.err" &
    eval "${1}_PID=$!"
}
members() { $PY -c 'import json,sys; print(",".join(sorted(json.loads(sys.stdin.read())["members"])))'; }

consumer a
$KG wait "$BROKER" grp $T 6 1 20 >"$TMP/s1.json" || fail "one member never got all 6 partitions"
consumer b
$KG wait "$BROKER" grp $T 6 2 20 >"$TMP/s2.json" || fail "two members: not every partition exactly once"
S2=$(members <"$TMP/s2.json")
consumer c
$KG wait "$BROKER" grp $T 6 3 20 >"$TMP/s3.json" || fail "three members: not every partition exactly once"
note "3 members stable: $(cat "$TMP/s3.json")"
S3=$(members <"$TMP/s3.json")
# c's member id: the one that is new in the three-member generation
C_ID=$($PY -c 'import sys; print((set(sys.argv[2].split(","))-set(sys.argv[1].split(","))).pop())' "$S2" "$S3")
for m in $(echo "$S3" | tr , ' '); do
    $PY -c 'import json,sys; m=json.load(open(sys.argv[1]))["members"][sys.argv[2]]; assert len(m)==2, m' \
        "$TMP/s3.json" "$m" || fail "three members should get two partitions each: $(cat "$TMP/s3.json")"
done

# kill -9: no LeaveGroup; the session timeout (6 s) must evict it
kill -9 "$c_PID"; wait "$c_PID" 2>/dev/null || true
t0=$(date +%s%N)
$KG wait "$BROKER" grp $T 6 2 30 --exclude "$C_ID" >"$TMP/s4.json" || fail "partitions of the killed member were not reassigned"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
note "killed member evicted and its partitions reassigned after ${ms} ms"
[ "$ms" -ge 4000 ] || fail "reassigned after ${ms} ms: before the 6 s session timeout could have expired"
[ "$ms" -le 15000 ] || fail "reassignment took ${ms} ms"

# a clean close leaves at once
kill -TERM "$b_PID"; wait "$b_PID" 2>/dev/null || true
t0=$(date +%s%N)
$KG wait "$BROKER" grp $T 6 1 10 >"$TMP/s5.json" || fail "the closed member's partitions were not reassigned"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
note "closed member left; the last member owns all partitions after ${ms} ms"
[ "$ms" -le 3000 ] || fail "a closing member should leave at once, took ${ms} ms"
grep -q 'reason=left' "$BROKER_LOG" || fail "no LeaveGroup seen in the broker log"
kill -TERM "$a_PID"; wait "$a_PID" 2>/dev/null || true
stop_broker
