#!/usr/bin/env bash
# The schema registry on three nodes: a schema registered at one node is read at another (the
# writes go through `_schemas`' Raft leader: forwarded by the others), and registrations go on
# while the `_schemas` leader is killed -9: every acknowledged registration is present on every
# node afterwards, and no id names two schemas (registry_cluster.py).
# timeout: 150
source "$(dirname "$0")/lib.sh"

CT='Content-Type: application/vnd.schemaregistry.v1+json'
start_cluster 3
for i in 1 2 3; do [ -n "${CL_REG[$i]}" ] || fail "node $i has no registry listener"; done
# _schemas is created at the first registration with min(3, live brokers) replicas, as
# Confluent's registry does: with a node not yet registered it got two, and the kill -9 of its
# leader below then left no quorum (registrations unanswered for 60 s, about one run in ten)
all_live() { kcat -L -b "127.0.0.1:${CL_PORT[1]}" 2>/dev/null | grep -q '^ 3 brokers:'; }
WAIT_S=15 poll_until all_live || fail "node 1 does not list 3 live brokers: $(kcat -L -b "127.0.0.1:${CL_PORT[1]}" 2>&1 | head -5)"

note "register at node 1, read at node 3"
out=$(curl -s -X POST -H "$CT" --data-binary '{"schema":"{\"type\":\"record\",\"name\":\"A\",\"fields\":[{\"name\":\"x\",\"type\":\"int\"}]}"}' \
    "http://${CL_REG[1]}/subjects/a-value/versions")
[ "$out" = '{"id":1}' ] || fail "register at node 1: $out"
at3() { [ "$(curl -s "http://${CL_REG[3]}/subjects/a-value/versions")" = "[1]" ]; }
WAIT_S=5 poll_until at3 || fail "node 3: $(curl -s "http://${CL_REG[3]}/subjects/a-value/versions")"
out=$(curl -s "http://${CL_REG[3]}/schemas/ids/1")
case "$out" in '{"schema":"{\"type\":\"record\",\"name\":\"A\"'*) ;; *) fail "node 3 id 1: $out" ;; esac

out=$(curl -s -X PUT -H "$CT" --data-binary '{"compatibility":"NONE"}' "http://${CL_REG[2]}/config")
[ "$out" = '{"compatibility":"NONE"}' ] || fail "PUT /config at node 2: $out"

leader_of_schemas() {
    kcat -L -b "127.0.0.1:${CL_PORT[1]}" -t _schemas 2>/dev/null |
        sed -n 's/.*partition 0, leader \([0-9]*\),.*/\1/p'
}
lead=$(leader_of_schemas)
[ -n "$lead" ] || fail "no leader of _schemas"
kcat -L -b "127.0.0.1:${CL_PORT[1]}" -t _schemas 2>/dev/null | grep -q 'replicas: [0-9]*,[0-9]*,[0-9]*,' ||
    fail "_schemas has fewer than 3 replicas: $(kcat -L -b "127.0.0.1:${CL_PORT[1]}" -t _schemas 2>&1 | grep partition)"
# the two others, where registrations go on meanwhile
others=()
for i in 1 2 3; do [ "$i" = "$lead" ] || others+=("http://${CL_REG[$i]}"); done
note "_schemas leader is node $lead: registrations at every node while it is killed -9"
$PY "$ROOT/tests/integration/registry_cluster.py" register "http://${CL_REG[$lead]}" \
    "${others[@]}" "$TMP/acked" >"$TMP/reg.out" 2>&1 &
regpid=$!
# kill it once some registrations were acknowledged by it
some() { [ "$(curl -s "http://${CL_REG[$lead]}/subjects" | tr ',' '\n' | grep -c 's[0-9]-value')" -ge 3 ]; }
WAIT_S=20 poll_until some || fail "no registrations at node $lead: $(cat "$TMP/reg.out")"
kill9_node "$lead"
wait "$regpid" || fail "registrations: $(cat "$TMP/reg.out")"
cat "$TMP/reg.out"
grep -q ', [1-9][0-9]* requests asked again' "$TMP/reg.out" ||
    fail "no registration met the killed leader: the kill came too late to test anything"
start_node "$lead"
wait_log "$lead" 'event=cluster_registered' 2 15 || fail "node $lead did not register again"
for i in 1 2 3; do
    checked() { $PY "$ROOT/tests/integration/registry_cluster.py" check "http://${CL_REG[$i]}" \
        "$TMP/acked" >"$TMP/check$i.out" 2>&1; }
    WAIT_S=15 poll_until checked || fail "node $i: $(tail -5 "$TMP/check$i.out")"
    cat "$TMP/check$i.out"
done
note "ok"
