#!/usr/bin/env bash
# Cluster mode (controller.quorum.voters): three nodes start, elect a controller and register
# with it; a node restarted registers again; all stop cleanly.
# timeout: 90
source "$(dirname "$0")/lib.sh"

init_cluster 3
for i in 1 2 3; do start_node "$i"; done
for i in 1 2 3; do
    wait_log "$i" 'event=cluster_registered' 1 10 || fail "node $i did not register within 10 s"
done
ctl=$(grep -h 'event=ctl_leader_elected' "$TMP"/node*.log | tail -1 | sed -n 's/.* node=\([0-9]*\) .*/\1/p')
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

for i in 1 2 3; do stop_node "$i"; done
grep -h 'level=error' "$TMP"/node*.log && fail "errors logged"
note "all nodes stopped cleanly"
