#!/usr/bin/env bash
# Schema registry authorization: with the authorizer on and schema.registry.authentication.method
# =BASIC, each request is checked against the ACLs of the registry's resource types (SUBJECT,
# REGISTRY; made with `streampulse acl --registry-subject/--registry-global`) for the Basic
# user's principal. alice may READ and WRITE the subjects prefixed orders- (but a LITERAL DENY
# WRITE on orders-secret-value beats that), bob may READ orders-value only, admin is a super
# user. Through Debian's confluent-kafka SchemaRegistryClient (basic.auth.user.info) and raw
# HTTP: alice registers, bob reads and is refused registering (403, 40301 with Confluent's
# message), GET /subjects lists only what each may describe, GET /schemas/ids/{id} follows
# Confluent's SCHEMA_READ rule (READ on a subject using the id), the global config is refused
# to alice and allowed to admin; denials are counted (streampulse_authorizations_total) and
# logged (api=SchemaRegistry); a subject longer than any binding's name is a super user's only.
# On three nodes, ACLs made at node 1 are enforced at a node without a replica of `_schemas`
# (which forwards its writes to the leader, and answers listings and ids from its own store),
# and decided there. Then HTTPS on the listener
# (schema.registry.listener.ssl.*) bound beyond loopback, with SchemaRegistryClient's
# ssl.ca.location, its certificate reloaded on SIGHUP; the startup refused for BASIC beyond
# loopback without a keystore; with NONE and the authorizer on, requests are User:ANONYMOUS's.
# timeout: 60
source "$(dirname "$0")/lib.sh"
P=$TMP/pki
make_pki "$P"

AUTHZ=(--set authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
    --set "super.users=User:admin;User:ANONYMOUS" --set schema.registry.authentication.method=BASIC)
start_broker "${AUTHZ[@]}"
for u in admin alice bob; do
    echo "$u-pw" | "$SP" user create "$u" --password-stdin -b "$BROKER" >/dev/null || fail "user create $u"
done
acl() { "$SP" acl add -b "$BROKER" "$@" >/dev/null || fail "acl add $*"; }
acl --allow-principal User:alice --operation Read --operation Write --registry-subject orders- \
    --resource-pattern-type prefixed
acl --deny-principal User:alice --operation Write --registry-subject orders-secret-value
acl --allow-principal User:bob --operation Read --registry-subject orders-value

# code USER METHOD PATH [BODY]: the HTTP status; the body in $TMP/body
code() {
    curl -s -o "$TMP/body" -w '%{http_code}' -u "$1:$1-pw" -X "$2" \
        -H 'Content-Type: application/vnd.schemaregistry.v1+json' ${4:+--data-binary "$4"} \
        "http://$REGISTRY$3"
}
denied_count() {
    curl -s "http://$ADMIN/metrics" |
        sed -n 's/^streampulse_authorizations_total{result="denied"} \([0-9]*\)$/\1/p'
}
# the bindings are committed when acl add returns; the first registration waits for nothing else
alice_registered() { [ "$(code alice POST /subjects/orders-key/versions '{"schema":"\"string\""}')" = 200 ]; }
poll_until alice_registered || fail "alice cannot register orders-key: $(cat "$TMP/body")"
denied_before=$(denied_count)

note "SchemaRegistryClient as alice, bob and admin"
$PY - "http://$REGISTRY" <<'PYEOF' || fail "SchemaRegistryClient with the registry's ACLs"
import sys
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

url = sys.argv[1]
def client(user):
    return SchemaRegistryClient({"url": url, "basic.auth.user.info": f"{user}:{user}-pw"})

def refused(what, call, code=40301):
    try:
        call()
    except SchemaRegistryError as e:
        assert e.http_status_code == 403 and e.error_code == code, (what, e.http_status_code,
                                                                   e.error_code, e.error_message)
        return e.error_message
    raise AssertionError(f"{what}: not refused")

alice, bob, admin = client("alice"), client("bob"), client("admin")
rec = '{"type":"record","name":"Order","fields":[{"name":"id","type":"long"}]}'
orders_id = alice.register_schema("orders-value", Schema(rec, "AVRO"))
pay_id = admin.register_schema("pay-value", Schema('"bytes"', "AVRO"))
assert pay_id != orders_id

# bob reads orders-value, and may not register there
assert bob.get_latest_version("orders-value").schema_id == orders_id
assert bob.get_schema(orders_id).schema_str == rec
msg = refused("bob registers", lambda: bob.register_schema("orders-value", Schema('"int"', "AVRO")))
assert msg == "User is denied operation Write on Subject: orders-value", msg

# listings: only what each may describe (READ and WRITE imply DESCRIBE)
assert bob.get_subjects() == ["orders-value"], bob.get_subjects()
assert alice.get_subjects() == ["orders-key", "orders-value"], alice.get_subjects()
assert admin.get_subjects() == ["orders-key", "orders-value", "pay-value"], admin.get_subjects()

# ids: READ on some subject that uses it
refused("bob reads pay-value's id", lambda: bob.get_schema(pay_id))
refused("alice reads pay-value's id", lambda: alice.get_schema(pay_id))
assert admin.get_schema(pay_id).schema_str == '"bytes"'

# the global config: alice may not, admin may
refused("alice sets the global level", lambda: alice.set_compatibility(level="NONE"))
refused("alice reads the global level", lambda: alice.get_compatibility())
assert admin.set_compatibility(level="FULL")["compatibility"] == "FULL"
assert admin.get_compatibility() == "FULL"
# a subject's config needs ALTER_CONFIGS on it: alice has READ and WRITE only
refused("alice sets orders-value's level",
        lambda: alice.set_compatibility("orders-value", level="NONE"))

# a LITERAL DENY beats the PREFIXED ALLOW
refused("alice registers orders-secret-value",
        lambda: alice.register_schema("orders-secret-value", Schema('"int"', "AVRO")))
assert "orders-secret-value" not in admin.get_subjects()
print("SchemaRegistryClient: registry ACLs enforced, ids", orders_id, pay_id)
PYEOF

note "raw HTTP: Confluent's 403 body, and what needs no permission"
got=$(code bob POST /subjects/orders-value/versions '{"schema":"\"int\""}')
[ "$got" = 403 ] && [ "$(cat "$TMP/body")" = '{"error_code":40301,"message":"User is denied operation Write on Subject: orders-value"}' ] ||
    fail "bob's registration: $got $(cat "$TMP/body")"
got=$(code alice PUT /config '{"compatibility":"NONE"}')
[ "$got" = 403 ] && grep -qF '"message":"User is denied operation AlterConfigs on Registry"' "$TMP/body" ||
    fail "alice's global config: $got $(cat "$TMP/body")"
got=$(code bob GET /subjects)
[ "$got" = 200 ] && [ "$(cat "$TMP/body")" = '["orders-value"]' ] || fail "bob's subjects: $got $(cat "$TMP/body")"
[ "$(code bob GET /schemas/types)" = 200 ] || fail "GET /schemas/types as bob: $(cat "$TMP/body")"
[ "$(code bob GET /subjects/orders-value/versions/latest)" = 200 ] || fail "bob reads: $(cat "$TMP/body")"
[ "$(code bob DELETE /subjects/orders-value)" = 403 ] || fail "bob deletes: $(cat "$TMP/body")"
[ "$(code admin GET /subjects/orders-value/versions)" = 200 ] || fail "admin: $(cat "$TMP/body")"
# a subject longer than any binding's name (255 bytes): a super user's, nobody else's
long=orders-$(printf 'x%.0s' $(seq 1 300))
[ "$(code admin POST "/subjects/$long/versions" '{"schema":"\"int\""}')" = 200 ] ||
    fail "admin registers a 307-byte subject: $(cat "$TMP/body")"
[ "$(code alice POST "/subjects/$long/versions" '{"schema":"\"int\""}')" = 403 ] ||
    fail "alice registers a 307-byte subject: $(cat "$TMP/body")"
denied_after=$(denied_count)
[ -n "$denied_before" ] && [ "$denied_after" -ge $((denied_before + 10)) ] ||
    fail "denials not counted: $denied_before -> $denied_after"
grep 'authorization_denied' "$BROKER_LOG" | grep -q 'api=SchemaRegistry' ||
    fail "no authorization_denied line for the registry in the broker log"
stop_broker

note "three nodes: ACLs made at node 1 enforced at a node without a replica of _schemas"
# replication factor 2: one node has no replica; it forwards writes to the leader, and
# answers listings and ids from its own store, which follows the topic through the leader
start_cluster 3 "${AUTHZ[@]}" --set schema.registry.topic.replication.factor=2
B1=127.0.0.1:${CL_PORT[1]}
for u in admin alice bob; do
    echo "$u-pw" | "$SP" user create "$u" --password-stdin -b "$B1" >/dev/null || fail "user create $u at node 1"
done
"$SP" acl add -b "$B1" --allow-principal User:alice --operation Write --registry-subject orders-value >/dev/null &&
    "$SP" acl add -b "$B1" --allow-principal User:bob --operation Read --registry-subject orders-value >/dev/null ||
    fail "acl add at node 1"
at() { # NODE USER METHOD PATH [BODY]: as code, at node NODE's registry
    local n=$1
    shift
    REGISTRY=${CL_REG[$n]} code "$@"
}
seeded() { [ "$(at 1 admin POST /subjects/seed-value/versions '{"schema":"\"int\""}')" = 200 ]; }
WAIT_S=20 poll_until seeded || fail "admin cannot register at node 1: $(cat "$TMP/body")"
replicas=$(kcat -L -b "$B1" -t _schemas 2>/dev/null | sed -n 's/.*partition 0, leader [0-9]*, replicas: \([0-9,]*\),.*/\1/p')
[ -n "$replicas" ] || fail "no replicas of _schemas"
f=""
for i in 1 2 3; do case ",$replicas," in *",$i,"*) ;; *) f=$i ;; esac; done
[ -n "$f" ] || fail "every node holds a replica of _schemas ($replicas)"

alice_at_f() { [ "$(at $f alice POST /subjects/orders-value/versions '{"schema":"\"long\""}')" = 200 ]; }
poll_until alice_at_f || fail "alice at node $f (no replica; _schemas on $replicas): $(cat "$TMP/body")"
got=$(at $f bob POST /subjects/orders-value/versions '{"schema":"\"string\""}')
[ "$got" = 403 ] && grep -qF '"error_code":40301' "$TMP/body" || fail "bob at node $f: $got $(cat "$TMP/body")"
grep 'authorization_denied' "$TMP/node$f.log" | grep -q 'principal=User:bob' ||
    fail "bob's denial not decided at node $f, the one he asked"
bob_lists() { [ "$(at $f bob GET /subjects)" = 200 ] && [ "$(cat "$TMP/body")" = '["orders-value"]' ]; }
poll_until bob_lists || fail "bob's subjects at node $f: $(cat "$TMP/body")"
got=$(at $f bob GET /subjects/orders-value/versions/1)
[ "$got" = 200 ] || fail "bob reads orders-value at node $f: $got $(cat "$TMP/body")"
oid=$(sed -n 's/.*"id":\([0-9]*\).*/\1/p' "$TMP/body")
[ "$(at $f bob GET "/schemas/ids/$oid")" = 200 ] || fail "bob reads id $oid at node $f: $(cat "$TMP/body")"
sid=$(at 1 admin GET /subjects/seed-value/versions/1 >/dev/null; sed -n 's/.*"id":\([0-9]*\).*/\1/p' "$TMP/body")
got=$(at $f bob GET "/schemas/ids/$sid")
[ "$got" = 403 ] || fail "bob reads seed-value's id $sid at node $f: $got $(cat "$TMP/body")"
for i in 1 2 3; do stop_node "$i"; done

note "refused: BASIC beyond loopback without schema.registry.listener.ssl.keystore.location"
RPORT=$(free_port)
rc=0
timeout 20 "$SP" serve --set "log.dirs=$TMP/refused" --set "listeners=PLAINTEXT://127.0.0.1:$(free_port)" \
    --set admin.listener= --set "schema.registry.listener=0.0.0.0:$RPORT" \
    --set schema.registry.authentication.method=BASIC >"$TMP/refused.out" 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -qF "schema.registry.listener=0.0.0.0:$RPORT is not a loopback address" "$TMP/refused.out" &&
    grep -qF "set schema.registry.listener.ssl.keystore.location" "$TMP/refused.out" ||
    fail "BASIC on 0.0.0.0 without TLS: exit $rc: $(cat "$TMP/refused.out")"

note "HTTPS beyond loopback: SchemaRegistryClient with ssl.ca.location"
RKS=$TMP/registry-keystore.pem
cp "$P/keystore.pem" "$RKS"
start_broker "${AUTHZ[@]}" --set "schema.registry.listener=0.0.0.0:$RPORT" \
    --set "schema.registry.listener.ssl.keystore.location=$RKS"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$RPORT/subjects" || true)" != 200 ] ||
    fail "plain HTTP answered on the HTTPS port"
# requests lets REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE override the session's verify, which is
# where SchemaRegistryClient puts ssl.ca.location: without them the client's own CA is used
env -u REQUESTS_CA_BUNDLE -u CURL_CA_BUNDLE \
    $PY - "https://127.0.0.1:$RPORT" "$P/ca.pem" <<'PYEOF' || fail "SchemaRegistryClient over HTTPS"
import sys
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError
url, ca = sys.argv[1], sys.argv[2]
def client(user):
    return SchemaRegistryClient({"url": url, "ssl.ca.location": ca,
                                 "basic.auth.user.info": f"{user}:{user}-pw"})
bob = client("bob")
assert bob.get_subjects() == ["orders-value"], bob.get_subjects()
try:
    bob.register_schema("orders-value", Schema('"int"', "AVRO"))
    raise AssertionError("bob registered over HTTPS")
except SchemaRegistryError as e:
    assert e.http_status_code == 403 and e.error_code == 40301, e
assert client("alice").register_schema("orders-tls-value", Schema('"int"', "AVRO")) > 0
print("SchemaRegistryClient over HTTPS: ok")
PYEOF
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$P/evil-ca.pem" -u bob:bob-pw \
    "https://127.0.0.1:$RPORT/subjects" || true)
[ "$code" = 000 ] || fail "a client trusting another CA got an answer: $code"
# a new certificate on SIGHUP, as the admin listener's
R=127.0.0.1:$RPORT
[ "$(cert_serial "$R" "$P/ca.pem")" = 1001 ] || fail "first registry certificate: $(cert_serial "$R" "$P/ca.pem")"
cp "$P/keystore2.pem" "$RKS.new" && mv "$RKS.new" "$RKS"
kill -HUP "$BROKER_PID"
poll_until grep -q "event=tls_reloaded listener=schema-registry why=sighup .*serial=1002" "$BROKER_LOG" ||
    fail "SIGHUP did not reload the registry's keystore"
[ "$(cert_serial "$R" "$P/ca.pem")" = 1002 ] || fail "after SIGHUP: serial $(cert_serial "$R" "$P/ca.pem")"
stop_broker

note "authentication NONE with the authorizer on: requests are User:ANONYMOUS's"
start_broker --set authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer \
    --set super.users=User:admin
got=$(curl -s -o "$TMP/body" -w '%{http_code}' "http://$REGISTRY/subjects")
[ "$got" = 200 ] && [ "$(cat "$TMP/body")" = '[]' ] || fail "anonymous subjects: $got $(cat "$TMP/body")"
got=$(curl -s -o "$TMP/body" -w '%{http_code}' -X POST -H "Content-Type: application/json" \
    --data-binary '{"schema":"\"int\""}' "http://$REGISTRY/subjects/orders-value/versions")
[ "$got" = 403 ] && grep -qF 'denied operation Write on Subject: orders-value' "$TMP/body" ||
    fail "anonymous registration: $got $(cat "$TMP/body")"
stop_broker
note "ok"
