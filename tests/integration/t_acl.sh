#!/usr/bin/env bash
# ACLs (authorizer.class.name=StandardAuthorizer), on one node: users alice, bob and admin (a super
# user) on a SASL_PLAINTEXT listener; a loopback PLAINTEXT listener for `streampulse user`, whose
# principal (User:ANONYMOUS) is also a super user. acl_clients.py: alice may write topics
# prefixed orders-, bob may read them in group g1, with what each is refused (reading, other
# groups, other topics, Metadata of other topics, creating, deleting, altering configs, the ACL
# APIs); a DENY beats an ALLOW; the super user can do everything. Every node restarted with kill -9
# keeps users and ACLs. The broker logs the denials and counts them in /metrics.
# Then three nodes, each with both listeners (every broker registers both, so a client of any
# node's SASL listener is sent to the others' SASL listeners): the same checks through node 1,
# a DENY created at node 1 enforced at node 3 within a second, a user created at node 1
# logging in at node 3 within a second, and everything intact after kill -9 of every node.
# timeout: 300
source "$(dirname "$0")/lib.sh"
PORT=$(free_port)
SPORT=$(free_port)
SASL=127.0.0.1:$SPORT
ARGS=(--set "listeners=PLAINTEXT://127.0.0.1:$PORT,SASL://127.0.0.1:$SPORT"
    --set "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL:SASL_PLAINTEXT"
    --set "sasl.enabled.mechanisms=SCRAM-SHA-256"
    --set authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
    --set "super.users=User:admin;User:ANONYMOUS")

note "config: an unknown authorizer and a malformed super.users are refused at startup"
if "$SP" serve --set "log.dirs=$TMP/x" --set authorizer.class.name=com.example.Mine \
    >"$TMP/bad.out" 2>&1; then fail "an unknown authorizer was taken"; fi
grep -q "unknown authorizer 'com.example.Mine'" "$TMP/bad.out" || fail "$(cat "$TMP/bad.out")"
if "$SP" serve --set "log.dirs=$TMP/x" --set authorizer.class.name=acl --set "super.users=alice" \
    >"$TMP/bad.out" 2>&1; then fail "super.users=alice was taken"; fi
grep -q "super.users" "$TMP/bad.out" || fail "$(cat "$TMP/bad.out")"

start_broker "${ARGS[@]}"
for u in alice bob admin; do
    echo "$u-secret" | "$SP" user create "$u" --password-stdin -b "$BROKER" >/dev/null ||
        fail "user create $u"
done

note "one node: the ACLs of the issue, through confluent-kafka and kafka-python"
$PY "$ROOT/tests/integration/acl_clients.py" setup "$SASL" || fail "setup"
$PY "$ROOT/tests/integration/acl_clients.py" check "$SASL" || fail "check"
$PY "$ROOT/tests/integration/acl_clients.py" deny "$SASL" || fail "deny"
grep -q 'event=authorization_denied principal=User:alice host=127.0.0.1 .*resource=Topic:secret' \
    "$BROKER_LOG" || fail "alice's denial on secret is not logged"
denied=$(curl -sf "http://$ADMIN/metrics" | sed -n 's/^streampulse_authorizations_total{result="denied"} //p')
[ "${denied:-0}" -gt 10 ] || fail "streampulse_authorizations_total{denied} is '${denied}'"

note "kill -9 and restart: users and ACLs are still enforced"
kill9_broker
start_broker "${ARGS[@]}"
$PY "$ROOT/tests/integration/acl_clients.py" acls "$SASL" || fail "ACLs after kill -9"
$PY "$ROOT/tests/integration/acl_clients.py" check "$SASL" || fail "check after kill -9"
stop_broker

note "three nodes: users and ACLs made at node 1 hold at every node"
COMMON=(--set "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL:SASL_PLAINTEXT"
    --set "sasl.enabled.mechanisms=SCRAM-SHA-256" --set authorizer.class.name=acl
    --set "super.users=User:admin;User:ANONYMOUS" --set offsets.topic.replication.factor=3)
init_cluster 3
for i in 1 2 3; do SASL_PORT[$i]=$(free_port); done
node_args() {
    echo "--set" "listeners=PLAINTEXT://127.0.0.1:${CL_PORT[$1]},SASL://127.0.0.1:${SASL_PORT[$1]}"
}
start_all() {
    local i
    for i in 1 2 3; do
        # shellcheck disable=SC2046
        start_node "$i" $(node_args "$i") "${COMMON[@]}"
    done
    for i in 1 2 3; do
        wait_log "$i" 'event=cluster_registered' "$1" 15 || fail "node $i did not register"
    done
}
start_all 1
N1=127.0.0.1:${SASL_PORT[1]}
N3=127.0.0.1:${SASL_PORT[3]}
for u in alice bob admin; do
    echo "$u-secret" | "$SP" user create "$u" --password-stdin -b "127.0.0.1:${CL_PORT[1]}" \
        >/dev/null || fail "user create $u at node 1"
done
md=$(kcat -L -b "$N1" -X security.protocol=SASL_PLAINTEXT -X sasl.mechanism=SCRAM-SHA-256 \
    -X sasl.username=admin -X sasl.password=admin-secret -m 10 2>&1 | grep '^  broker ' | sort)
want=$(for i in 1 2 3; do echo "  broker $i at 127.0.0.1:${SASL_PORT[$i]}"; done)
[ "$(echo "$md" | sed 's/ (controller)//')" = "$want" ] ||
    fail "Metadata of node 1's SASL listener does not give every node's SASL listener: $md"
ACL_RF=3 $PY "$ROOT/tests/integration/acl_clients.py" setup "$N1" || fail "setup (3 nodes)"
ACL_RF=3 $PY "$ROOT/tests/integration/acl_clients.py" check "$N1" || fail "check (3 nodes)"
$PY "$ROOT/tests/integration/acl_clients.py" deny "$N1" "$N3" || fail "deny at node 1, enforced at node 3"
$PY - "127.0.0.1:${CL_PORT[1]}" "$N3" "$SP" <<'PYEOF' || fail "a user created at node 1 at node 3"
import subprocess, sys, time
from confluent_kafka.admin import AdminClient
plain, n3, sp = sys.argv[1:4]
def login():
    a = AdminClient({"bootstrap.servers": n3, "security.protocol": "SASL_PLAINTEXT",
                     "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": "carol",
                     "sasl.password": "carol-secret"})
    try:
        a.list_topics(timeout=0.5)
        return True
    except Exception:
        return False
assert not login(), "carol logged in before she exists"
t0 = time.time()
subprocess.run([sp, "user", "create", "carol", "--password-stdin", "-b", plain], check=True,
               input=b"carol-secret\n", stdout=subprocess.DEVNULL)
created = time.time()
while not login():
    assert time.time() - t0 < 5, "carol cannot log in at node 3 within 5 s"
took = time.time() - created
print("carol: created at node 1, logged in at node 3 %.0f ms later" % (took * 1000))
assert took < 1.0, took
PYEOF
note "three nodes: kill -9 of every node, then users and ACLs are still enforced"
for i in 1 2 3; do kill9_node "$i"; done
start_all 2
ACL_RF=3 $PY "$ROOT/tests/integration/acl_clients.py" acls "$N1" || fail "ACLs after kill -9 of every node"
ACL_RF=3 $PY "$ROOT/tests/integration/acl_clients.py" check "$N3" || fail "check at node 3 after kill -9"
for i in 1 2 3; do stop_node "$i"; done
