#!/usr/bin/env bash
# The schema registry on one node (schema.registry.listener): Debian's confluent-kafka client
# against it (registry_client.py: every SchemaRegistryClient call, Avro records through
# AvroProducer/AvroConsumer, Protobuf and JSON Schema records through the Protobuf and JSON
# serializers and deserializers), and @kafkajs/confluent-schema-registry
# (node/schema_registry.js: Avro, Protobuf with an import, JSON Schema); a
# `_schemas` topic written in Confluent's record formats by a plain producer loads as is; bad
# input gets Confluent's error codes and the broker keeps serving; after kill -9 every subject,
# version, id and config is the same.
# timeout: 150
source "$(dirname "$0")/lib.sh"

CT='Content-Type: application/vnd.schemaregistry.v1+json'
# req METHOD PATH [BODY]: prints "STATUS BODY"
req() {
    local out
    out=$(curl -s -o "$TMP/body" -w '%{http_code}' -X "$1" -H "$CT" ${3:+--data-binary "$3"} \
        "http://$REGISTRY$2")
    echo "$out $(cat "$TMP/body")"
}
expect() { # expect "STATUS ERROR_CODE" METHOD PATH [BODY]
    local want=$1 got
    shift
    got=$(req "$@")
    case "$got" in
    "${want%% *} "*'"error_code":'"${want##* }"*) ;;
    *) fail "$1 $2: expected $want, got: $got" ;;
    esac
}

start_broker
[ -n "$REGISTRY" ] || fail "no schema_registry address in the broker_started line"
note "registry at $REGISTRY: confluent-kafka's SchemaRegistryClient, Avro and Protobuf records"
$PY "$ROOT/tests/integration/registry_client.py" "$BROKER" "http://$REGISTRY" "py-" ||
    fail "registry_client.py"

note "@kafkajs/confluent-schema-registry: Avro, Protobuf with an import, JSON Schema, through kafkajs records"
node "$NODE_DIR/schema_registry.js" "$BROKER" "http://$REGISTRY" "js-" || fail "schema_registry.js"

note "streampulse schema: register, get, list, check, delete, config"
export STREAMPULSE_REGISTRY=$REGISTRY
echo '{"type":"record","name":"C","fields":[{"name":"a","type":"int"}]}' >"$TMP/c1.avsc"
echo '{"type":"record","name":"C","fields":[{"name":"a","type":"string"}]}' >"$TMP/c2.avsc"
cid=$("$SP" schema register cli-value --file "$TMP/c1.avsc") || fail "schema register"
[ "$("$SP" schema register cli-value <"$TMP/c1.avsc")" = "$cid" ] || fail "register again: another id"
[ "$("$SP" schema get cli-value)" = '{"type":"record","name":"C","fields":[{"name":"a","type":"int"}]}' ] ||
    fail "schema get: $("$SP" schema get cli-value)"
"$SP" schema get --id "$cid" --json | grep -q '^{"schema":' || fail "schema get --id --json"
"$SP" schema list | grep -qx cli-value || fail "schema list"
[ "$("$SP" schema list cli-value)" = 1 ] || fail "schema list cli-value"
if "$SP" schema check cli-value --file "$TMP/c2.avsc" >"$TMP/check.out"; then
    fail "schema check of an incompatible schema exited 0"
fi
grep -q '^incompatible' "$TMP/check.out" && grep -q "TYPE_MISMATCH" "$TMP/check.out" ||
    fail "schema check: $(cat "$TMP/check.out")"
[ "$("$SP" schema config cli-value --level NONE)" = NONE ] || fail "schema config --level"
[ "$("$SP" schema check cli-value --file "$TMP/c2.avsc")" = compatible ] || fail "check at NONE"
[ "$("$SP" schema config)" = BACKWARD ] || fail "schema config (global)"
[ "$("$SP" schema delete cli-value)" = 1 ] || fail "schema delete"
"$SP" schema get cli-value 2>"$TMP/get.err" && fail "schema get of a deleted subject exited 0"
grep -q "40401 Subject 'cli-value' not found" "$TMP/get.err" || fail "get.err: $(cat "$TMP/get.err")"
unset STREAMPULSE_REGISTRY

note "consume --decode: records printed as JSON through their schemas"
py_id2=$(curl -s "http://$REGISTRY/subjects/py-orders-value/versions/latest" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
"$SP" consume -b "$BROKER" -t py-orders -e -D --registry "$REGISTRY" -n 2 >"$TMP/dec1" ||
    fail "consume --decode py-orders"
[ "$(cat "$TMP/dec1")" = '{"id":0,"item":"item-0","qty":0}
{"id":1,"item":"item-1","qty":1}' ] || fail "Avro records decoded: $(cat "$TMP/dec1")"
"$SP" consume -b "$BROKER" -t py-events -e -D --registry "$REGISTRY" -f '%k %v\n' -n 2 \
    >"$TMP/dec2" || fail "consume --decode py-events"
[ "$(cat "$TMP/dec2")" = '0 {"name":"e0"}
1 {"id":"1","name":"e1"}' ] || fail "Protobuf records decoded: $(cat "$TMP/dec2")"
"$SP" consume -b "$BROKER" -t js-orders -e -D --registry "$REGISTRY" -J -n 1 >"$TMP/dec3" ||
    fail "consume --decode js-orders"
grep -q '"value":{"id":"o1","total":{"cents":5,"currency":"EUR"}}' "$TMP/dec3" ||
    fail "kafkajs' Protobuf records (no message indexes) decoded: $(cat "$TMP/dec3")"
"$SP" consume -b "$BROKER" -t py-readings -e -D --registry "$REGISTRY" -n 1 >"$TMP/dec5" ||
    fail "consume --decode py-readings"
[ "$(cat "$TMP/dec5")" = '{"sensor": "s0", "celsius": 0.0}' ] ||
    fail "JSON Schema records decoded: $(cat "$TMP/dec5")"
printf 'not framed\n' | "$SP" produce -b "$BROKER" -t py-orders >/dev/null || fail "produce"
"$SP" consume -b "$BROKER" -t py-orders -e -D --registry "$REGISTRY" -o -1 >"$TMP/dec4" \
    2>"$TMP/dec4.err" || fail "consume --decode of an unframed record"
[ "$(cat "$TMP/dec4")" = "not framed" ] || fail "an unframed record: $(cat "$TMP/dec4")"

note "worker --decode: the handler reads the value as JSON, its schema id in SP_SCHEMA_ID"
"$SP" worker -b "$BROKER" -t py-orders -g dec-workers --drain -D --registry "$REGISTRY" \
    -- sh -c 'printf "%s %s %s\n" "$SP_OFFSET" "${SP_SCHEMA_ID:--}" "$(cat)" >>"$0"' \
    "$TMP/handled" >"$TMP/worker.out" 2>&1 || fail "worker --decode: $(tail -3 "$TMP/worker.out")"
sort -n "$TMP/handled" >"$TMP/handled.sorted"
[ "$(sed -n 1p "$TMP/handled.sorted")" = "0 $py_id2 "'{"id":0,"item":"item-0","qty":0}' ] ||
    fail "worker --decode, first record: $(head -2 "$TMP/handled.sorted")"
[ "$(tail -1 "$TMP/handled.sorted")" = "20 - not framed" ] ||
    fail "worker --decode, the unframed record: $(tail -1 "$TMP/handled.sorted")"
[ "$(wc -l <"$TMP/handled.sorted")" = 21 ] || fail "worker handled $(wc -l <"$TMP/handled.sorted") records"

note "bad input: Confluent's error codes, never a crash"
expect "422 42201" POST /subjects/bad/versions '{"schema":"{\"type\":\"record\",\"name\":\"R\"}"}'
expect "422 42201" POST /subjects/bad/versions '{"schema":"syntax = \"proto3\"; message {","schemaType":"PROTOBUF"}'
expect "422 42201" POST /subjects/bad/versions '{"schema":"{}","schemaType":"XML"}'
expect "422 42201" POST /subjects/bad/versions '{"nothing":1}'
expect "400 400" POST /subjects/bad/versions '{"schema": '
expect "400 400" POST /subjects/bad/versions '[1,2]'
deep=$(printf '%.0s[' $(seq 1 5000))
expect "400 400" POST /subjects/bad/versions "$deep"
deep_schema=$(printf '%.0s{\\"type\\":\\"array\\",\\"items\\":' $(seq 1 300))
expect "422 42201" POST /subjects/bad/versions "{\"schema\":\"$deep_schema\\\"int\\\"\"}"
expect "422 42202" GET /subjects/py-orders-value/versions/zero
expect "422 42202" GET /subjects/py-orders-value/versions/0
expect "404 40402" GET /subjects/py-orders-value/versions/99
expect "404 40401" GET /subjects/nobody/versions
expect "404 40403" GET /schemas/ids/abc
expect "422 42203" PUT /config '{"compatibility":"SIDEWAYS"}'
expect "422 42204" PUT /mode '{"mode":"SLEEPY"}'
expect "404 404" GET /no/such/path
expect "405 405" PATCH /subjects
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: text/xml' \
    --data-binary '<a/>' "http://$REGISTRY/subjects/x/versions")
[ "$code" = 415 ] || fail "a text/xml body got $code, not 415"
head -c 1100000 /dev/zero | tr '\0' 'a' >"$TMP/huge"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "$CT" --data-binary @"$TMP/huge" \
    "http://$REGISTRY/subjects/x/versions")
[ "$code" = 413 ] || fail "a 1.1 MB body got $code, not 413"
kill -0 "$BROKER_PID" || fail "the broker died on bad input"

note "modes: READONLY refuses writes, IMPORT takes given ids"
got=$(req PUT /mode/py-orders-value '{"mode":"READONLY"}')
[ "$got" = '200 {"mode":"READONLY"}' ] || fail "PUT mode: $got"
expect "422 42205" POST /subjects/py-orders-value/versions '{"schema":"\"string\""}'
req DELETE /mode/py-orders-value >/dev/null
got=$(req PUT /mode/imported-value '{"mode":"IMPORT"}')
[ "$got" = '200 {"mode":"IMPORT"}' ] || fail "PUT mode IMPORT: $got"
got=$(req POST /subjects/imported-value/versions '{"schema":"\"string\"","id":500,"version":3}')
[ "$got" = '200 {"id":500}' ] || fail "import with id 500: $got"
got=$(req GET /subjects/imported-value/versions/3)
case "$got" in '200 {"subject":"imported-value","version":3,"id":500,'*) ;; *) fail "imported: $got" ;; esac
req DELETE /mode/imported-value >/dev/null
got=$(req POST /subjects/after-import-value/versions '{"schema":"\"bytes\""}')
[ "$got" = '200 {"id":501}' ] || fail "the next id after an import of 500: $got"

note "produce-side validation: a value must name an id registered under TOPIC-value"
"$SP" topic create validated -b "$BROKER" --config confluent.value.schema.validation=true \
    --config redpanda.key.schema.id.validation=true >/dev/null || fail "topic create validated"
got=$(req POST /subjects/validated-value/versions '{"schema":"\"string\""}')
good_id=$(echo "$got" | sed -n 's/^200 {"id":\([0-9]*\)}$/\1/p')
[ -n "$good_id" ] || fail "register validated-value: $got"
got=$(req POST /subjects/validated-key/versions '{"schema":"\"long\""}')
key_id=$(echo "$got" | sed -n 's/^200 {"id":\([0-9]*\)}$/\1/p')
[ -n "$key_id" ] || fail "register validated-key: $got"
$PY - "$BROKER" "$good_id" "$key_id" <<'PYEOF' || fail "produce-side validation"
import struct, sys
from confluent_kafka import Producer
broker, good, key = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
frame = lambda i, body: b"\0" + struct.pack(">i", i) + body
results = {}
def produce(name, k, v):
    p = Producer({"bootstrap.servers": broker, "linger.ms": 0, "enable.idempotence": False,
                  "message.send.max.retries": 0})
    p.produce("validated", key=k, value=v,
              on_delivery=lambda err, msg: results.__setitem__(name, err))
    p.flush(10)
    return results[name]
assert produce("good", frame(key, b"\x02"), frame(good, b"\x02hi")) is None
assert produce("null key", None, frame(good, b"\x02hi")) is None
for name, k, v in [("unknown value id", None, frame(good + 1000, b"x")),
                   ("unframed value", None, b"plain text"),
                   ("key id of another subject", frame(good, b"x"), frame(good, b"x")),
                   ("unframed key", b"k", frame(good, b"x"))]:
    err = produce(name, k, v)
    assert err is not None and err.name() == "INVALID_RECORD", (name, err)
    print("refused (%s): %s" % (name, err.str()))
PYEOF

note "a _schemas topic written in Confluent's formats (by any producer) loads as is"
# soft-deleted version 1 then live 2 of legacy-value; a subject config; a NOOP; a subject
# deleted for good (its tombstone after its soft delete); one record not understood
{
    printf '%s\t%s\n' '{"keytype":"NOOP","magic":0}' '{}'
    printf '%s\t%s\n' '{"keytype":"SCHEMA","subject":"legacy-value","version":1,"magic":1}' \
        '{"subject":"legacy-value","version":1,"id":900,"schema":"\"string\"","deleted":true}'
    printf '%s\t%s\n' '{"keytype":"SCHEMA","subject":"legacy-value","version":2,"magic":1}' \
        '{"subject":"legacy-value","version":2,"id":901,"schema":"\"long\"","deleted":false}'
    printf '%s\t%s\n' '{"keytype":"CONFIG","subject":"legacy-value","magic":0}' \
        '{"compatibilityLevel":"NONE"}'
    printf '%s\t%s\n' '{"keytype":"SCHEMA","subject":"gone-value","version":1,"magic":1}' \
        '{"subject":"gone-value","version":1,"id":902,"schema":"\"int\"","deleted":false}'
    printf '%s\t%s\n' '{"keytype":"DELETE_SUBJECT","subject":"gone-value","magic":0}' \
        '{"subject":"gone-value","version":1}'
    printf '%s\t%s\n' '{"keytype":"FUTURE_KIND","magic":0}' '{"x":1}'
} >"$TMP/export.tsv"
kcat -P -b "$BROKER" -t _schemas -K '\t' -l "$TMP/export.tsv" || fail "kcat -P _schemas"
kcat -P -b "$BROKER" -t _schemas -K '\t' -Z -l <(printf '%s\t\n' \
    '{"keytype":"SCHEMA","subject":"gone-value","version":1,"magic":1}') ||
    fail "kcat tombstone"
imported() { [ "$(req GET /subjects/legacy-value/versions)" = "200 [2]" ]; }
WAIT_S=10 poll_until imported || fail "legacy-value: $(req GET /subjects/legacy-value/versions)"
[ "$(req GET '/subjects/legacy-value/versions?deleted=true')" = "200 [1,2]" ] || fail "deleted=true"
[ "$(req GET /config/legacy-value)" = '200 {"compatibilityLevel":"NONE"}' ] || fail "config"
expect "404 40401" GET '/subjects/gone-value/versions?deleted=true'
got=$(req GET /schemas/ids/901)
[ "$got" = '200 {"schema":"\"long\""}' ] || fail "id 901: $got"
got=$(req POST /subjects/legacy-value/versions '{"schema":"\"double\""}')
[ "$got" = '200 {"id":903}' ] || fail "the next id after the import's 902: $got"

dump() { # every subject (deleted too), version and id, and the configs
    local s v
    for s in $(req GET '/subjects?deleted=true' | cut -d' ' -f2- | tr -d '[]"' | tr ',' ' '); do
        for v in $(req GET "/subjects/$s/versions?deleted=true" | cut -d' ' -f2- | tr -d '[]' | tr ',' ' '); do
            req GET "/subjects/$s/versions/$v?deleted=true"
        done
        req GET "/config/$s"
    done
    req GET /config
}
dump >"$TMP/before"
[ "$(wc -l <"$TMP/before")" -ge 10 ] || fail "dump too short: $(cat "$TMP/before")"
note "kill -9: every subject, version, id and config is the same after the restart"
kill9_broker
start_broker
same() { dump >"$TMP/after" && cmp -s "$TMP/before" "$TMP/after"; }
WAIT_S=10 poll_until same || fail "state differs after kill -9: $(diff "$TMP/before" "$TMP/after")"
got=$(req POST /subjects/after-restart-value/versions '{"schema":"\"float\""}')
[ "$got" = '200 {"id":904}' ] || fail "the first id after the restart: $got"

note "schema.registry.authentication.method=BASIC: a SCRAM user's name and password, else 401"
echo "alice-secret" | "$SP" user create alice --password-stdin -b "$BROKER" >/dev/null ||
    fail "user create alice"
stop_broker
start_broker --set schema.registry.authentication.method=BASIC
code=$(curl -s -o "$TMP/body" -w '%{http_code}' "http://$REGISTRY/subjects")
[ "$code" = 401 ] && grep -q '"error_code":401' "$TMP/body" || fail "no credentials: $code $(cat "$TMP/body")"
code=$(curl -s -o /dev/null -w '%{http_code}' -u alice:wrong "http://$REGISTRY/subjects")
[ "$code" = 401 ] || fail "a wrong password: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -u nobody:alice-secret "http://$REGISTRY/subjects")
[ "$code" = 401 ] || fail "an unknown user: $code"
$PY - "http://$REGISTRY" <<'PYEOF' || fail "SchemaRegistryClient with basic.auth.user.info"
import sys
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
sr = SchemaRegistryClient({"url": sys.argv[1], "basic.auth.user.info": "alice:alice-secret"})
assert "after-restart-value" in sr.get_subjects()
i = sr.register_schema("authed-value", Schema('"boolean"', "AVRO"))
assert sr.get_schema(i).schema_str == '"boolean"'
print("SchemaRegistryClient as alice: registered id", i)
PYEOF
stop_broker
note "ok"
