#!/usr/bin/env bash
# The schema registry at a broker without a replica of `_schemas`: four nodes, the topic's
# replication factor 3 (the default), so one broker (N) has no replica and its store follows the topic
# through the leader (broker/schemas.c, invariant 5). At N: registrations (forwarded) are read
# back at once, a record framed with an id registered at another node goes through a partition
# N leads with value validation on, and an unknown id is refused (INVALID_RECORD); the same
# after the `_schemas` leader is killed -9 (N follows the new one), and after N itself is
# killed -9 (its store is rebuilt from the leader). registry_follow.py does the client side.
# timeout: 120
source "$(dirname "$0")/lib.sh"

CT='Content-Type: application/vnd.schemaregistry.v1+json'
start_cluster 4 ${FOLLOW_EXTRA:-}
B1=127.0.0.1:${CL_PORT[1]}
out=$(curl -s -X POST -H "$CT" --data-binary '{"schema":"\"int\""}' \
    "http://${CL_REG[1]}/subjects/seed-value/versions")
[ "$out" = '{"id":1}' ] || fail "register at node 1: $out"
kcat -L -b "$B1" -t _schemas >"$TMP/md" 2>&1 || true
line=$(grep "partition 0," "$TMP/md") || fail "_schemas in metadata: $(cat "$TMP/md")"
lead=$(echo "$line" | sed -n 's/.*leader \([0-9]*\),.*/\1/p')
replicas=$(echo "$line" | sed -n 's/.*replicas: \([0-9,]*\),.*/\1/p')
[ -n "$lead" ] && [ -n "$replicas" ] || fail "_schemas: $line"
n=""
for i in 1 2 3 4; do case ",$replicas," in *",$i,"*) ;; *) n=$i ;; esac; done
[ -n "$n" ] || fail "every node holds a replica of _schemas: $line"
other=$lead
note "_schemas on $replicas (leader $lead); node $n has no replica"
F="$ROOT/tests/integration/registry_follow.py"
URL_N=http://${CL_REG[$n]}

note "node $n: registrations read back at once, a validated produce"
$PY "$F" rw "$URL_N" 10 || fail "read-your-writes at node $n"
$PY "$F" validate "$URL_N" "http://${CL_REG[$other]}" "$B1" "$n" v1 || fail "validation at node $n"

note "the _schemas leader (node $lead) killed -9: node $n follows the new one"
kill9_node "$lead"
survivor=""
newlead() { # a replica that was not the leader leads, as node $n's own registry knows
    local l
    l=$(kcat -L -b "127.0.0.1:${CL_PORT[$n]}" -t _schemas 2>/dev/null |
        sed -n 's/.*partition 0, leader \([0-9]*\),.*/\1/p')
    case ",$replicas," in *",$l,"*) [ "$l" != "$lead" ] && survivor=$l ;; *) return 1 ;; esac
}
WAIT_S=20 poll_until newlead || fail "no replica took _schemas over from node $lead"
$PY "$F" validate "$URL_N" "http://${CL_REG[$survivor]}" "127.0.0.1:${CL_PORT[$n]}" "$n" v2 ||
    fail "validation at node $n after the leader change"
start_node "$lead"
wait_log "$lead" 'event=cluster_registered' 2 15 || fail "node $lead did not register again"

note "node $n killed -9 and restarted: its store is rebuilt through the leader"
kill9_node "$n"
start_node "$n"
wait_log "$n" 'event=cluster_registered' 2 15 || fail "node $n did not register again"
URL_N=http://${CL_REG[$n]}
$PY "$F" listed "$URL_N" 10 || fail "subjects at node $n after its restart"
$PY "$F" validate "$URL_N" "http://${CL_REG[$survivor]}" "127.0.0.1:${CL_PORT[$survivor]}" "$n" v3 ||
    fail "validation at node $n after its restart"
for i in 1 2 3 4; do stop_node "$i"; done
note "ok"
