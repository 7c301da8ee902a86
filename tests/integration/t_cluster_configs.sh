#!/usr/bin/env bash
# Topic configs in cluster mode (the metadata log holds them, every broker applies them): a topic
# with replication factor 3 created with retention.ms through node 1 shows it through node 3
# (DYNAMIC_TOPIC_CONFIG). AlterConfigs through node 2 replaces the whole set (retention.ms back
# to its default): every node describes it and every node's local topic applies it;
# validate_only and an invalid value change nothing. With the controller's node killed (-9),
# small segment.bytes and retention.bytes set through another node at once (it waits for the
# next controller, as a Kafka broker does, rather than answer NOT_CONTROLLER, which
# confluent-kafka's AlterConfigs does not retry); the killed node restarted applies the change
# it missed (its log says so), and after more records every replica has dropped its old
# segments. All stop cleanly.
# timeout: 60
source "$(dirname "$0")/lib.sh"

CFG="$PY $ROOT/tests/integration/cluster_configs.py"
start_cluster 3 --set log.retention.check.interval.ms=200
B() { echo "127.0.0.1:${CL_PORT[$1]}"; }
# log_bytes I: bytes of topic cfgt's segment files on node I
log_bytes() { cat "$TMP"/data$1/cfgt-0/*.log 2>/dev/null | wc -c; }

# ---- created with a config through node 1, described through node 3 ----
$CFG create "$(B 1)" cfgt 1 3 retention.ms=3600000 || fail "CreateTopics cfgt with retention.ms"
for i in 1 2 3; do
    wait_log "$i" 'event=cluster_replica_added topic=cfgt partition=0 replicas=3' 1 5 ||
        fail "node $i has no replica of cfgt"
done
$CFG wait "$(B 3)" cfgt 5 retention.ms=3600000:DYNAMIC_TOPIC_CONFIG \
    cleanup.policy=delete:DEFAULT_CONFIG || fail "node 3 does not describe retention.ms"
note "cfgt created through node 1 with retention.ms=3600000; node 3 describes it"

# ---- AlterConfigs through node 2 replaces the set; every node describes and applies it ----
$CFG alter "$(B 2)" cfgt cleanup.policy=compact segment.bytes=1048576 || fail "AlterConfigs"
for i in 1 2 3; do
    $CFG wait "$(B "$i")" cfgt 5 cleanup.policy=compact:DYNAMIC_TOPIC_CONFIG \
        segment.bytes=1048576:DYNAMIC_TOPIC_CONFIG retention.ms=604800000:DEFAULT_CONFIG ||
        fail "node $i does not describe the altered configs"
    wait_log "$i" 'event=cluster_topic_configs_applied topic=cfgt overrides=2 .*retention_ms=604800000 .*segment_bytes=1048576 compact=1 delete=0' 1 5 ||
        fail "node $i did not apply the altered configs: $(grep cluster_topic_configs "$TMP/node$i.log")"
done
note "AlterConfigs through node 2 (cleanup.policy=compact, segment.bytes): described and applied on every node, retention.ms back to its default"

# validate_only and invalid values change nothing
$CFG validate "$(B 3)" cfgt cleanup.policy=delete || fail "validate_only AlterConfigs refused"
if $CFG alter "$(B 1)" cfgt segment.bytes=1 2>"$TMP/bad.err"; then
    fail "segment.bytes=1 accepted"
fi
grep -q -i 'INVALID_CONFIG\|segment.bytes' "$TMP/bad.err" || fail "refusal: $(cat "$TMP/bad.err")"
sleep 0.5
for i in 1 2 3; do
    $CFG wait "$(B "$i")" cfgt 2 cleanup.policy=compact:DYNAMIC_TOPIC_CONFIG \
        segment.bytes=1048576:DYNAMIC_TOPIC_CONFIG || fail "node $i: validate_only or invalid changed it"
    [ "$(grep -c 'event=cluster_topic_configs_applied topic=cfgt' "$TMP/node$i.log")" = 1 ] ||
        fail "node $i applied configs again"
done
note "validate_only and segment.bytes=1 (INVALID_CONFIG) changed nothing"

# ---- a node down during an AlterConfigs applies it when it comes back ----
$CFG alter "$(B 2)" cfgt cleanup.policy=delete || fail "AlterConfigs cleanup.policy=delete"
for i in 1 2 3; do
    wait_log "$i" 'event=cluster_topic_configs_applied topic=cfgt overrides=1 .*compact=0 delete=1' 1 5 ||
        fail "node $i did not apply cleanup.policy=delete"
done
$CFG produce "$(B 1),$(B 2),$(B 3)" cfgt 2000 200 || fail "first produce"
for i in 1 2 3; do
    for _ in $(seq 1 100); do [ "$(log_bytes "$i")" -ge 400000 ] && break; sleep 0.05; done
    [ "$(log_bytes "$i")" -ge 400000 ] || fail "node $i holds only $(log_bytes "$i") bytes of cfgt"
done
# The victim is the controller: the AlterConfigs that follows at once through another node must
# wait for the next one.
V=$(ctl_leader)
[[ $V =~ ^[123]$ ]] || fail "no controller leader in the logs: '$V'"
VIA=$((V % 3 + 1))
before=$(log_bytes "$V")
# Nothing is produced while node $V is down: retention on the leader does not yet wait for
# lagging followers (a follower whose next entries the leader deleted cannot catch up).
kill9_node "$V"
$CFG alter "$(B "$VIA")" cfgt cleanup.policy=delete segment.bytes=16384 retention.bytes=65536 ||
    fail "AlterConfigs through node $VIA with the controller (node $V) down"
for i in 1 2 3; do
    [ "$i" = "$V" ] && continue
    $CFG wait "$(B "$i")" cfgt 5 segment.bytes=16384:DYNAMIC_TOPIC_CONFIG \
        retention.bytes=65536:DYNAMIC_TOPIC_CONFIG || fail "node $i does not describe retention.bytes"
    wait_log "$i" 'event=cluster_topic_configs_applied topic=cfgt overrides=3 .*retention_bytes=65536 segment_bytes=16384' 1 5 ||
        fail "node $i did not apply retention.bytes"
done
note "controller (node $V) down: AlterConfigs through node $VIA waited for the next one; the others applied segment.bytes=16384 retention.bytes=65536"

start_node "$V" --set log.retention.check.interval.ms=200
wait_log "$V" 'event=cluster_topic_configs_applied topic=cfgt overrides=3 .*retention_bytes=65536 segment_bytes=16384' 1 10 ||
    fail "restarted node $V did not apply the change it missed: $(grep cluster_topic_configs "$TMP/node$V.log")"
$CFG wait "$(B "$V")" cfgt 5 retention.bytes=65536:DYNAMIC_TOPIC_CONFIG || fail "node $V describes"
wait_log "$V" 'event=cluster_registered' 2 10 || fail "node $V did not register again"
sleep 1
# behaviour on every replica: new small segments, the old ones dropped by retention.bytes
$CFG produce "$(B 1),$(B 2),$(B 3)" cfgt 2000 200 || fail "second produce"
for i in 1 2 3; do
    ok=""
    for _ in $(seq 1 100); do [ "$(log_bytes "$i")" -lt 150000 ] && { ok=1; break; }; sleep 0.05; done
    [ -n "$ok" ] || fail "node $i still holds $(log_bytes "$i") bytes of cfgt (retention.bytes=65536)"
done
note "node $V restarted applied the change it missed; 800 KB produced, every replica keeps $(log_bytes 1), $(log_bytes 2), $(log_bytes 3) bytes (node $V had $before)"

for i in 1 2 3; do stop_node "$i"; done
grep -h 'level=error' "$TMP"/node*.log && fail "errors logged"
note "all nodes stopped cleanly"
