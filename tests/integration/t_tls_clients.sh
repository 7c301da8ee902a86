#!/usr/bin/env bash
# TLS listeners beside a plaintext one, with every client: kcat/librdkafka, confluent-kafka,
# kafka-python, kafkajs and @platformatic/kafka each produce and consume (in a consumer group: FindCoordinator must
# name the TLS listener) over SSL, and over mTLS (ssl.client.auth=required, per listener) with a
# client certificate whose mapped principal the broker logs. Metadata on each listener
# advertises that listener's address (an advertised.listeners entry included). The plaintext
# listener keeps working beside them.
# timeout: 300
source "$(dirname "$0")/lib.sh"
[ -d "$NODE_DIR/node_modules/kafkajs" ] || (cd "$NODE_DIR" && npm ci --no-audit --no-fund >/dev/null)
P=$TMP/pki
make_pki "$P"
PORT=$(free_port)
SPORT=$(free_port)
MPORT=$(free_port)
EPORT=$(free_port)
SECURE=127.0.0.1:$SPORT
MTLS=127.0.0.1:$MPORT
start_broker --set "listeners=PLAINTEXT://127.0.0.1:$PORT,SECURE://127.0.0.1:$SPORT,MTLS://127.0.0.1:$MPORT,EXTERNAL://127.0.0.1:$EPORT" \
    --set "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SECURE:SSL,MTLS:SSL,EXTERNAL:PLAINTEXT" \
    --set "advertised.listeners=EXTERNAL://localhost:$EPORT" \
    --set "ssl.keystore.location=$P/keystore.pem" --set "ssl.truststore.location=$P/ca.pem" \
    --set listener.name.mtls.ssl.client.auth=required \
    --set 'listener.name.mtls.ssl.principal.mapping.rules=RULE:^CN=(.*?),.*$/$1/L,DEFAULT'
grep -q "listeners=PLAINTEXT/PLAINTEXT@127.0.0.1:$PORT,SECURE/SSL@127.0.0.1:$SPORT,MTLS/SSL@127.0.0.1:$MPORT" "$BROKER_LOG" ||
    fail "startup line does not list the listeners with their protocols"

SSL=(-X security.protocol=ssl -X "ssl.ca.location=$P/ca.pem")
CERT=(-X "ssl.certificate.location=$P/client.pem" -X "ssl.key.location=$P/client.key")

note "Metadata on each listener advertises that listener's address"
kcat -L -b "$BROKER" | grep -q "broker 1 at 127.0.0.1:$PORT " || fail "PLAINTEXT metadata"
kcat -L -b "$SECURE" "${SSL[@]}" | grep -q "broker 1 at 127.0.0.1:$SPORT " || fail "SECURE metadata"
kcat -L -b "$MTLS" "${SSL[@]}" "${CERT[@]}" | grep -q "broker 1 at 127.0.0.1:$MPORT " || fail "MTLS metadata"
kcat -L -b "127.0.0.1:$EPORT" | grep -q "broker 1 at localhost:$EPORT " || fail "EXTERNAL metadata (advertised.listeners)"

note "kcat over SSL and mTLS"
printf 'one\ntwo\nthree\n' | kcat -P -b "$SECURE" -t kcat-ssl "${SSL[@]}"
[ "$(kcat -C -b "$SECURE" -t kcat-ssl -e -q "${SSL[@]}")" = $'one\ntwo\nthree' ] || fail "kcat SSL round trip"
printf 'four\nfive\n' | kcat -P -b "$MTLS" -t kcat-mtls "${SSL[@]}" "${CERT[@]}"
[ "$(kcat -C -b "$MTLS" -t kcat-mtls -e -q "${SSL[@]}" "${CERT[@]}")" = $'four\nfive' ] || fail "kcat mTLS round trip"
grep -q "event=tls_handshake_done .*listener=MTLS .*principal=\"User:alice\"" "$BROKER_LOG" ||
    fail "the mTLS principal (mapped by the listener's rules) is not logged"
grep -q "event=tls_handshake_done .*listener=SECURE .*principal=\"User:ANONYMOUS\"" "$BROKER_LOG" ||
    fail "a TLS connection without a certificate should be User:ANONYMOUS"
grep -q "event=tls_handshake_done .*sendfile=" "$BROKER_LOG" || fail "the sendfile path is not logged"

note "the plaintext listener beside them"
printf 'plain\n' | kcat -P -b "$BROKER" -t kcat-ssl
[ "$(kcat -C -b "$BROKER" -t kcat-ssl -e -q | tail -1)" = "plain" ] || fail "plaintext beside TLS"

for client in confluent kafka-python; do
    note "$client over SSL and mTLS"
    $PY "$ROOT/tests/integration/tls_clients.py" "$client" "$SECURE" "$client-ssl" --ca "$P/ca.pem" ||
        fail "$client over SSL"
    $PY "$ROOT/tests/integration/tls_clients.py" "$client" "$MTLS" "$client-mtls" --ca "$P/ca.pem" \
        --cert "$P/client.pem" --key "$P/client.key" || fail "$client over mTLS"
done
note "kafkajs over SSL and mTLS"
(cd "$NODE_DIR" && node tls_kafkajs.js "$SECURE" kafkajs-ssl "$P/ca.pem" - - ok) || fail "kafkajs over SSL"
(cd "$NODE_DIR" && node tls_kafkajs.js "$MTLS" kafkajs-mtls "$P/ca.pem" "$P/client.pem" "$P/client.key" ok) ||
    fail "kafkajs over mTLS"
note "@platformatic/kafka over SSL and mTLS"
(cd "$NODE_DIR" && node secure_platformatic.mjs "$SECURE" plt-ssl - - - ok "$P/ca.pem") ||
    fail "@platformatic/kafka over SSL"
(cd "$NODE_DIR" && node secure_platformatic.mjs "$MTLS" plt-mtls - - - ok "$P/ca.pem" "$P/client.pem" \
    "$P/client.key") || fail "@platformatic/kafka over mTLS"
kill -0 "$BROKER_PID" || fail "broker died"
stop_broker
