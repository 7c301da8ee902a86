#!/usr/bin/env bash
# ACLs (authorizer.class.name=StandardAuthorizer), on one node: users alice, bob and admin (a super
# user) on a SASL_PLAINTEXT listener; a loopback PLAINTEXT listener for `streampulse user`, whose
# principal (User:ANONYMOUS) is also a super user. acl_clients.py: alice may write topics
# prefixed orders-, bob may read them in group g1, with what each is refused (reading, other
# groups, other topics, Metadata of other topics, creating, deleting, altering configs, the ACL
# APIs); a DENY beats an ALLOW; the super user can do everything. Every node restarted with kill -9
# keeps users and ACLs. The broker logs the denials and counts them in /metrics.
# timeout: 240
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
