#!/usr/bin/env bash
# What must fail over TLS fails, with each client's normal error, and the broker keeps serving:
# a client that does not trust the broker's CA; a client without a certificate, or with one from
# an untrusted CA, on an ssl.client.auth=required listener; a PLAINTEXT client on an SSL
# listener; an SSL client on the PLAINTEXT listener.
# timeout: 300
source "$(dirname "$0")/lib.sh"
[ -d "$NODE_DIR/node_modules/kafkajs" ] || (cd "$NODE_DIR" && npm ci --no-audit --no-fund >/dev/null)
P=$TMP/pki
make_pki "$P"
PORT=$(free_port)
SPORT=$(free_port)
MPORT=$(free_port)
SECURE=127.0.0.1:$SPORT
MTLS=127.0.0.1:$MPORT
start_broker --set "listeners=PLAINTEXT://127.0.0.1:$PORT,SECURE://127.0.0.1:$SPORT,MTLS://127.0.0.1:$MPORT" \
    --set "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SECURE:SSL,MTLS:SSL" \
    --set "ssl.keystore.location=$P/keystore.pem" --set "ssl.truststore.location=$P/ca.pem" \
    --set listener.name.mtls.ssl.client.auth=required
TC=("$ROOT/tests/integration/tls_clients.py")
SSL=(-X security.protocol=ssl -X "ssl.ca.location=$P/ca.pem")

# kcat_fails WHAT PATTERN kcat-args...: kcat -L must fail and its output match PATTERN (a
# refused handshake on loopback takes milliseconds: kcat gives up on Metadata after 1 s)
kcat_fails() {
    local what=$1 pat=$2 out
    shift 2
    if out=$(kcat -L -m 1 "$@" 2>&1); then fail "kcat: $what succeeded"; fi
    grep -qiE "$pat" <<<"$out" || { echo "$out" | tail -5; fail "kcat: $what: no '$pat' in its error"; }
    note "kcat: $what: refused ($(grep -oiE "$pat" <<<"$out" | head -1))"
}
js_fails() { # WHAT node-args...
    local what=$1
    shift
    (cd "$NODE_DIR" && node tls_kafkajs.js "$@" fail) || fail "kafkajs: $what"
}
plt_fails() { # WHAT BROKER [CA [CERT KEY]]: @platformatic/kafka must fail to connect
    local what=$1 broker=$2
    shift 2
    (cd "$NODE_DIR" && node secure_platformatic.mjs "$broker" t - - - fail "$@") ||
        fail "@platformatic/kafka: $what"
}

note "a client that does not trust the CA"
kcat_fails "untrusted CA" "certificate verify failed" -b "$SECURE" -X security.protocol=ssl \
    -X "ssl.ca.location=$P/evil-ca.pem"
for c in confluent kafka-python; do
    $PY "${TC[@]}" "$c" "$SECURE" t --ca "$P/evil-ca.pem" --expect fail || fail "$c: untrusted CA"
done
js_fails "untrusted CA" "$SECURE" t "$P/evil-ca.pem" - -
plt_fails "untrusted CA" "$SECURE" "$P/evil-ca.pem"

note "no client certificate on a required listener"
kcat_fails "no certificate" "alert certificate required" -b "$MTLS" "${SSL[@]}"
for c in confluent kafka-python; do
    $PY "${TC[@]}" "$c" "$MTLS" t --ca "$P/ca.pem" --expect fail || fail "$c: no certificate"
done
js_fails "no certificate" "$MTLS" t "$P/ca.pem" - -
plt_fails "no certificate" "$MTLS" "$P/ca.pem"

note "a certificate from an untrusted CA on a required listener"
kcat_fails "untrusted client certificate" "alert unknown ca" -b "$MTLS" "${SSL[@]}" \
    -X "ssl.certificate.location=$P/evil.pem" -X "ssl.key.location=$P/evil.key"
$PY "${TC[@]}" confluent "$MTLS" t --ca "$P/ca.pem" --cert "$P/evil.pem" --key "$P/evil.key" \
    --expect fail || fail "confluent: untrusted client certificate"
js_fails "untrusted client certificate" "$MTLS" t "$P/ca.pem" "$P/evil.pem" "$P/evil.key"
plt_fails "untrusted client certificate" "$MTLS" "$P/ca.pem" "$P/evil.pem" "$P/evil.key"
grep -q 'event=tls_handshake_failed listener=MTLS .*reason=".*certificate' "$BROKER_LOG" ||
    fail "the refused client certificate is not logged with its reason"

note "a PLAINTEXT client on the SSL listener"
kcat_fails "plaintext on SSL" "Disconnected|incorrect security.protocol" -b "$SECURE"
for c in confluent kafka-python; do
    $PY "${TC[@]}" "$c" "$SECURE" t --plaintext --expect fail || fail "$c: plaintext on SSL"
done
(cd "$NODE_DIR" && node tls_kafkajs.js "$SECURE" t - - - fail plaintext) || fail "kafkajs: plaintext on SSL"
plt_fails "plaintext on SSL" "$SECURE"
grep -q 'event=tls_handshake_failed listener=SECURE .*reason="wrong version number"' "$BROKER_LOG" ||
    fail "a plaintext client on the SSL listener is not logged"

note "an SSL client on the PLAINTEXT listener"
kcat_fails "SSL on plaintext" "SSL handshake failed" -b "$BROKER" "${SSL[@]}"
$PY "${TC[@]}" confluent "$BROKER" t --ca "$P/ca.pem" --expect fail || fail "confluent: SSL on plaintext"
grep -q 'event=frame_too_large .*hint=tls_client_on_plaintext_listener' "$BROKER_LOG" ||
    fail "an SSL client on the plaintext listener is not named in the log"

note "the broker still serves every listener"
printf 'after\n' | kcat -P -b "$SECURE" -t after "${SSL[@]}"
[ "$(kcat -C -b "$MTLS" -t after -e -q "${SSL[@]}" -X "ssl.certificate.location=$P/client.pem" \
    -X "ssl.key.location=$P/client.key")" = after ] || fail "mTLS after the refusals"
[ "$(kcat -C -b "$BROKER" -t after -e -q)" = after ] || fail "plaintext after the refusals"
stop_broker
