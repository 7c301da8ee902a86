#!/usr/bin/env bash
# TLS settings at startup: bad listener and ssl.* values are refused by name (exit 2) before
# anything listens; an encrypted key loads with ssl.key.password and is refused without it or
# with a wrong one; ssl.enabled.protocols and ssl.cipher.suites (IANA names) shape what clients
# can negotiate.
# timeout: 120
source "$(dirname "$0")/lib.sh"
P=$TMP/pki
make_pki "$P"
PORT=$(free_port)
SPORT=$(free_port)
LIS=(--set "listeners=PLAINTEXT://127.0.0.1:$PORT,SECURE://127.0.0.1:$SPORT"
     --set "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SECURE:SSL")

# refused SETTINGS... -- PATTERN: serve must exit 2 and say PATTERN
refused() {
    local args=() out rc=0
    while [ "$1" != -- ]; do args+=("$1"); shift; done
    shift
    out=$("$SP" serve --set "log.dirs=$DATA" --set admin.listener= "${args[@]}" 2>&1) || rc=$?
    [ $rc -eq 2 ] || { echo "$out"; fail "exit $rc (expected 2) for: ${args[*]}"; }
    grep -qF -- "$1" <<<"$out" || { echo "$out"; fail "no '$1' in the refusal of: ${args[*]}"; }
    note "refused: $(tail -1 <<<"$out" | cut -c1-160)"
}
refused --set "listeners=PLAINTEXT://127.0.0.1:$PORT,SECURE://127.0.0.1:$SPORT" \
    --set "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SECURE:SASL_SSL" -- \
    "listener SECURE (SASL_SSL) needs ssl.keystore.location"
refused --set "listeners=PLAINTEXT://127.0.0.1:$PORT,SECURE://127.0.0.1:$SPORT" \
    --set "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SECURE:SASL_PLAINTEXT" \
    --set sasl.enabled.mechanisms=GSSAPI -- "unknown or unsupported mechanism 'GSSAPI'"
refused --set "listener.security.protocol.map=PLAINTEXT:TLS" -- "unknown security protocol 'TLS'"
refused "${LIS[@]}" -- "listener SECURE (SSL) needs ssl.keystore.location"
refused "${LIS[@]}" --set ssl.keystore.location=/nonexistent/keystore.pem -- \
    "listener SECURE: ssl.keystore.location /nonexistent/keystore.pem"
refused "${LIS[@]}" --set "ssl.keystore.location=$P/keystore-enc.pem" -- \
    "if it is encrypted, set ssl.key.password"
refused "${LIS[@]}" --set "ssl.keystore.location=$P/keystore-enc.pem" --set ssl.key.password=wrong -- \
    "is ssl.key.password right?"
refused "${LIS[@]}" --set "ssl.keystore.location=$P/keystore.pem" --set ssl.cipher.suites=TLS_NOPE -- \
    "ssl.cipher.suites: unknown cipher suite 'TLS_NOPE'"
refused "${LIS[@]}" --set "ssl.keystore.location=$P/keystore.pem" --set ssl.client.auth=required -- \
    "needs ssl.truststore.location"
refused "${LIS[@]}" --set "ssl.keystore.location=$P/keystore.pem" \
    --set listener.name.other.ssl.client.auth=none -- "there is no listener OTHER in listeners"
refused "${LIS[@]}" --set "ssl.keystore.location=$P/keystore.pem" \
    --set "ssl.truststore.location=$P/nonexistent.pem" -- "ssl.truststore.location $P/nonexistent.pem"

SECURE=127.0.0.1:$SPORT
SSL=(-X security.protocol=ssl -X "ssl.ca.location=$P/ca.pem")
s_client() { openssl s_client -connect "$SECURE" -CAfile "$P/ca.pem" "$@" </dev/null 2>&1; }

note "an encrypted key with ssl.key.password; TLS 1.3 only"
start_broker "${LIS[@]}" --set "ssl.keystore.location=$P/keystore-enc.pem" --set ssl.key.password=s3cret \
    --set ssl.enabled.protocols=TLSv1.3
s_client -tls1_3 | grep -q "New, TLSv1.3, Cipher is" || fail "TLS 1.3 refused"
! s_client -tls1_2 | grep -q "New, TLSv1.2, Cipher is" || fail "TLS 1.2 accepted with ssl.enabled.protocols=TLSv1.3"
echo enc | kcat -P -b "$SECURE" -t enc "${SSL[@]}"
[ "$(kcat -C -b "$SECURE" -t enc -e -q "${SSL[@]}")" = enc ] || fail "clients with an encrypted key"
stop_broker

note "ssl.cipher.suites with an IANA TLS 1.2 name"
start_broker "${LIS[@]}" --set "ssl.keystore.location=$P/keystore.pem" \
    --set ssl.cipher.suites=TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
out=$(s_client)
grep -q "New, TLSv1.2, Cipher is ECDHE-ECDSA-AES256-GCM-SHA384" <<<"$out" || { echo "$out" | tail -20; fail "the configured suite was not used"; }
! s_client -tls1_2 -cipher ECDHE-ECDSA-AES128-GCM-SHA256 | grep -q "Cipher is ECDHE" ||
    fail "a suite that is not listed was accepted"
echo suite | kcat -P -b "$SECURE" -t suite "${SSL[@]}"
[ "$(kcat -C -b "$SECURE" -t suite -e -q "${SSL[@]}")" = suite ] || fail "clients with the configured suite"
stop_broker
