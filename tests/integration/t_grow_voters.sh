#!/usr/bin/env bash
# The metadata quorum grows and shrinks online (`streampulse cluster voters add|remove`, Kafka's
# AddRaftVoter / RemoveRaftVoter). Node 1 starts alone; nodes 2 and 3 join by
# controller.quorum.bootstrap.servers and are made voters, through different brokers. Node 1 is
# killed (-9): nodes 2 and 3 elect a controller and a topic is created and written through them.
# Node 1 restarts as a voter (its log's configuration), catches up, and is removed: it goes on
# as an observer broker (its metadata log deleted) that still sees new topics, and restarts as
# one from its quorum.state, where no bootstrap server is set. With node 1 stopped, node 2
# restarts from quorum.state too, though its bootstrap server (node 1) is gone. Refusals: an
# unknown broker, a voter already, a node that is no voter, the last voter, a voter removed
# before, each with its reason.
# timeout: 90
source "$(dirname "$0")/lib.sh"

start_first_node 3
seq 1 100 | kcat -P -b "$B1" -t before -X acks=all || fail "kcat could not produce to node 1"
BOOT="controller.quorum.bootstrap.servers=127.0.0.1:${CL_CPORT[1]}"
ADMIN2=127.0.0.1:$(free_port)
start_node 2 --set "cluster.listener=127.0.0.1:${CL_CPORT[2]}" --set "$BOOT" --set "admin.listener=$ADMIN2"
start_node 3 --set "cluster.listener=127.0.0.1:${CL_CPORT[3]}" --set "$BOOT"
for i in 2 3; do wait_log "$i" 'event=cluster_registered' 1 15 || fail "node $i did not register"; done

voters() { "$SP" cluster voters "$@" >"$TMP/voters.out" 2>&1; }
refused() { # WHAT PATTERN ARGS...: the command must fail and say PATTERN
    local what=$1 pat=$2
    shift 2
    if voters "$@"; then fail "cluster voters accepted $what: $(cat "$TMP/voters.out")"; fi
    grep -q -- "$pat" "$TMP/voters.out" || fail "refusal of $what: $(cat "$TMP/voters.out")"
}
refused "an unknown broker" "No broker with this node id is registered" add 9 -b "$B2"
refused "a node that is no voter" "not a voter" remove 3 -b "$B1"
refused "the last voter" "last voter cannot be removed" remove 1 -b "$B1"
refused "a voter already" "is a voter already" add 1 -b "$B3"

voters add 2 -b "$B2" || fail "voters add 2: $(cat "$TMP/voters.out")"
voters add 3 -b "$B1" || fail "voters add 3: $(cat "$TMP/voters.out")"
for i in 2 3; do
    grep -q "event=ctl_became_voter node=$i" "$TMP/node$i.log" || fail "node $i is no voter"
    [ -f "$TMP/data$i/__cluster_metadata-0/raft-joined" ] || fail "node $i has no metadata log"
done
grep -q '^voters=1@.*,2@.*,3@' "$TMP/data2/quorum.state" ||
    fail "node 2's quorum.state: $(cat "$TMP/data2/quorum.state")"
"$SP" cluster status --admin "$ADMIN2" >"$TMP/status.out" 2>&1 || fail "cluster status: $(cat "$TMP/status.out")"
grep -q '^controller: leader [123], term [0-9]*, voters 1,2,3$' "$TMP/status.out" ||
    fail "cluster status at node 2: $(head -3 "$TMP/status.out")"
note "nodes 2 and 3 are voters"

# ---- node 1 dies: the other two voters are a majority ----
kill9_node 1
# the controller (2 or 3 now) fences node 1 once its session lapses (9 s); a topic created
# before that could be placed on it, as in Kafka
brokers() { kcat -L -b "$1" -m 2 2>/dev/null | sed -n 's/^ *broker \([0-9]*\) at .*/\1/p' | sort -n | xargs; }
ok=""
for _ in $(seq 1 300); do
    [ "$(brokers "$B2")" = "2 3" ] && { ok=1; break; }
    sleep 0.05
done
[ -n "$ok" ] || fail "node 2 lists brokers '$(brokers "$B2")' 15 s after node 1's kill, want '2 3'"
create_topic_retrying "$B2" after --partitions 2 --replication-factor 2 ||
    fail "no topic could be created with node 1 down: $(cat "$TMP/create.out")"
seq 1 200 | kcat -P -b "$B3" -t after -X acks=all || fail "kcat could not write to after"
got=$(kcat -C -b "$B2" -t after -e -q -f '%s\n' | sort -n | uniq | wc -l)
[ "$got" = 200 ] || fail "after reads $got distinct records, want 200"
note "node 1 killed: nodes 2 and 3 created and served topic after"

# ---- node 1 restarts as a voter and is removed ----
start_node 1 --set "cluster.listener=127.0.0.1:${CL_CPORT[1]}"
grep 'event=cluster_started node=1 ' "$TMP/node1.log" | tail -1 | grep -q 'role=voter' ||
    fail "node 1 did not restart as a voter: $(grep cluster_started "$TMP/node1.log" | tail -1)"
knows() { # BROKER TOPIC PARTITIONS: its Metadata has the topic (within 5 s)
    for _ in $(seq 1 100); do
        kcat -L -b "$1" -t "$2" 2>/dev/null | grep -q "topic \"$2\" with $3 partitions" && return 0
        sleep 0.05
    done
    return 1
}
knows "$B1" after 2 || fail "restarted node 1 does not know topic after"
voters remove 1 -b "$B1" || fail "voters remove 1: $(cat "$TMP/voters.out")"
wait_log 1 'event=ctl_became_observer node=1' 1 10 || fail "node 1 did not become an observer"
[ ! -e "$TMP/data1/__cluster_metadata-0" ] || fail "node 1 kept its metadata log"
grep -q '^voters=2@.*,3@' "$TMP/data1/quorum.state" && ! grep -q '1@' "$TMP/data1/quorum.state" ||
    fail "node 1's quorum.state: $(cat "$TMP/data1/quorum.state")"
"$SP" topic create seen --partitions 1 -b "$B3" >/dev/null || fail "topic create after removal"
knows "$B1" seen 1 || fail "observer node 1 does not see topic seen"
refused "a removed voter" "not a voter" remove 1 -b "$B2"
note "node 1 removed from the voters: it observes"

# ---- restarts from quorum.state: node 1 as an observer, node 2 with its bootstrap server gone ----
stop_node 1
start_node 1 --set "cluster.listener=127.0.0.1:${CL_CPORT[1]}"
grep 'event=cluster_started node=1 ' "$TMP/node1.log" | tail -1 | grep -q 'role=observer' ||
    fail "node 1 did not restart as an observer: $(grep cluster_started "$TMP/node1.log" | tail -1)"
stop_node 1
stop_node 2
start_node 2 --set "cluster.listener=127.0.0.1:${CL_CPORT[2]}" --set "$BOOT"
grep 'event=cluster_started node=2 ' "$TMP/node2.log" | tail -1 | grep -q 'role=voter' ||
    fail "node 2 did not restart as a voter: $(grep cluster_started "$TMP/node2.log" | tail -1)"
create_topic_retrying "$B2" last --partitions 1 --replication-factor 2 ||
    fail "nodes 2 and 3 alone could not create a topic: $(cat "$TMP/create.out")"
for t in before after seen last; do
    kcat -L -b "$B3" -t "$t" 2>/dev/null | grep -q "topic \"$t\" with" || fail "node 3 lost topic $t"
done
note "restarts from quorum.state: node 1 observes, node 2 votes without its bootstrap server"
stop_node 2
stop_node 3
