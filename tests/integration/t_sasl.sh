#!/usr/bin/env bash
# SASL on SASL_PLAINTEXT and SASL_SSL listeners, the broker's only Kafka listeners at first:
# its first users come through the admin listener (`streampulse user create --admin`, POST
# /v1/users; listed by `user list --admin`, deleted by `user delete --admin`), with no PLAINTEXT
# listener anywhere; after the restart a PLAINTEXT one is added beside them, and `user list -b`
# (DescribeUserScramCredentials) reads the same users through it. Every client produces and consumes (in a consumer
# group) with the right credentials: kcat/librdkafka, confluent-kafka, kafka-python (SaslHandshake
# v0 and raw tokens), kafkajs and @platformatic/kafka (SaslHandshake v1 and SaslAuthenticate), with
# PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512, and over TLS (SASL_SSL) with SCRAM-SHA-512. A wrong
# password, an unknown user, and a client that does not do SASL all fail with the client's normal
# error; the broker logs and counts the failures and keeps serving, also through bad SASL input
# sent raw (sasl_bad_input.py), and holds the answer to repeated failures from one address
# longer each time. A deleted user can no longer log in; users survive a kill -9 and restart.
# Without an authorizer the ACL APIs answer SECURITY_DISABLED, as Kafka's do (kafka-python).
# With connections.max.reauth.ms a session lapses unless the client authenticates again, which
# kafkajs does on the same connection (KIP-368).
# timeout: 300
source "$(dirname "$0")/lib.sh"
[ -d "$NODE_DIR/node_modules/kafkajs" ] || (cd "$NODE_DIR" && npm ci --no-audit --no-fund >/dev/null)
P=$TMP/pki
make_pki "$P"
PORT=$(free_port)
SPORT=$(free_port)
TPORT=$(free_port)
SASL=127.0.0.1:$SPORT
SSL_SASL=127.0.0.1:$TPORT
SASL_ARGS=(--set "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"
    --set connection.failed.authentication.delay.ms=0
    --set "ssl.keystore.location=$P/keystore.pem" --set "ssl.truststore.location=$P/ca.pem")
start_broker --set "listeners=SASL://127.0.0.1:$SPORT,SECURE://127.0.0.1:$TPORT" \
    --set "listener.security.protocol.map=SASL:SASL_PLAINTEXT,SECURE:SASL_SSL" "${SASL_ARGS[@]}"
grep broker_started "$BROKER_LOG" | tail -1 |
    grep -q " listeners=SASL/SASL_PLAINTEXT@$SASL,SECURE/SASL_SSL@$SSL_SASL admin=" ||
    fail "not SASL listeners only: $(grep broker_started "$BROKER_LOG" | tail -1)"

note "users: created through the admin listener (no PLAINTEXT listener), listed, refused when malformed"
U=("$SP" user --admin "$ADMIN")
echo 'alice-secret' | "${U[@]}" create alice --password-stdin >/dev/null || fail "user create alice"
echo 'alice-512' | "${U[@]}" create alice --mechanism SCRAM-SHA-512 --iterations 8192 \
    --password-stdin >/dev/null || fail "user create alice SCRAM-SHA-512"
echo 'bob-secret' | "${U[@]}" create bob --password-stdin >"$TMP/u.out" || fail "user create bob"
[ "$(cat "$TMP/u.out")" = "user bob: SCRAM-SHA-256 credential set" ] || fail "user create: $(cat "$TMP/u.out")"
USERS=$'alice\tSCRAM-SHA-256\titerations=4096\nalice\tSCRAM-SHA-512\titerations=8192\nbob\tSCRAM-SHA-256\titerations=4096'
[ "$("${U[@]}" list)" = "$USERS" ] || fail "user list --admin: $("${U[@]}" list)"
[ "$("${U[@]}" list bob)" = $'bob\tSCRAM-SHA-256\titerations=4096' ] || fail "user list --admin bob"
grep -q 'event=user_change_submitted op=set name="alice" mechanism=SCRAM-SHA-512 iterations=8192 form=salted peer=127.0.0.1 via=admin' "$BROKER_LOG" &&
    poll_until grep -q 'event=user_changed op=set name="bob" mechanism=SCRAM-SHA-256' "$BROKER_LOG" ||
    fail "user changes not logged: $(grep user_change "$BROKER_LOG")"
if echo x | "${U[@]}" create carol --iterations 100 --password-stdin 2>"$TMP/u.err"; then
    fail "100 iterations accepted"
fi
if "${U[@]}" create carol </dev/null 2>"$TMP/u.err"; then fail "no password accepted"; fi
grep -q "password-stdin" "$TMP/u.err" || fail "no --password-stdin: $(cat "$TMP/u.err")"
if "${U[@]}" delete carol 2>"$TMP/u.err"; then fail "deleting an unknown user succeeded"; fi
grep -qF "answered HTTP 404: user carol has no SCRAM credential" "$TMP/u.err" || fail "delete carol: $(cat "$TMP/u.err")"

kc() { # MECHANISM USER PASSWORD kcat-args...: kcat on the SASL_PLAINTEXT listener
    local m=$1 u=$2 pw=$3
    shift 3
    kcat -b "$SASL" -X security.protocol=SASL_PLAINTEXT -X "sasl.mechanisms=$m" \
        -X "sasl.username=$u" -X "sasl.password=$pw" "$@"
}
note "kcat with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512"
for m in PLAIN SCRAM-SHA-256; do
    printf '%s-1\n%s-2\n' "$m" "$m" | kc "$m" alice alice-secret -P -t "kcat-$m" || fail "kcat $m produce"
    [ "$(kc "$m" alice alice-secret -C -t "kcat-$m" -e -q)" = "$m-1"$'\n'"$m-2" ] || fail "kcat $m consume"
done
printf 'x\n' | kc SCRAM-SHA-512 alice alice-512 -P -t kcat-512 || fail "kcat SCRAM-SHA-512"
printf 'x\n' | kc PLAIN alice alice-512 -P -t kcat-512 || fail "PLAIN against alice's SCRAM-SHA-512 credential"
for bad in "SCRAM-SHA-256 alice wrong" "PLAIN alice wrong" "SCRAM-SHA-256 nobody x" "PLAIN nobody x" \
    "SCRAM-SHA-512 bob bob-secret"; do
    # shellcheck disable=SC2086
    if timeout 20 kcat -L -b "$SASL" -m 3 -X security.protocol=SASL_PLAINTEXT \
        -X "sasl.mechanisms=${bad%% *}" -X "sasl.username=$(echo $bad | cut -d' ' -f2)" \
        -X "sasl.password=$(echo $bad | cut -d' ' -f3)" >"$TMP/bad.out" 2>&1; then
        fail "kcat authenticated with '$bad'"
    fi
    grep -q "Authentication failed" "$TMP/bad.out" || fail "kcat '$bad': $(tail -2 "$TMP/bad.out")"
done
if timeout 20 kcat -L -b "$SASL" -m 3 >"$TMP/bad.out" 2>&1; then fail "kcat without SASL was served"; fi
grep -q "event=request_rejected .*reason=not_authenticated" "$BROKER_LOG" ||
    fail "a request before authentication is not logged as refused"

note "confluent-kafka and kafka-python"
for client in confluent kafka-python; do
    for m in PLAIN SCRAM-SHA-256; do
        $PY "$ROOT/tests/integration/tls_clients.py" "$client" "$SASL" "$client-$m" --plaintext \
            --sasl "$m" --user bob --password bob-secret || fail "$client with $m"
    done
    $PY "$ROOT/tests/integration/tls_clients.py" "$client" "$SSL_SASL" "$client-ssl-512" \
        --ca "$P/ca.pem" --sasl SCRAM-SHA-512 --user alice --password alice-512 ||
        fail "$client with SASL_SSL SCRAM-SHA-512"
    $PY "$ROOT/tests/integration/tls_clients.py" "$client" "$SASL" "$client-bad" --plaintext \
        --sasl SCRAM-SHA-256 --user bob --password wrong --expect fail || fail "$client, wrong password"
done
$PY "$ROOT/tests/integration/tls_clients.py" kafka-python "$SASL" kp-nosasl --plaintext --expect fail ||
    fail "kafka-python without SASL"

note "kafkajs and @platformatic/kafka"
for m in plain scram-sha-256 scram-sha-512; do
    pw=bob-secret user=bob
    [ $m = scram-sha-512 ] && pw=alice-512 user=alice
    (cd "$NODE_DIR" && node tls_kafkajs.js "$SASL" "kafkajs-$m" - - - ok plaintext $m $user $pw) ||
        fail "kafkajs with $m"
done
(cd "$NODE_DIR" && node tls_kafkajs.js "$SSL_SASL" kafkajs-ssl "$P/ca.pem" - - ok tls scram-sha-512 alice alice-512) ||
    fail "kafkajs with SASL_SSL SCRAM-SHA-512"
(cd "$NODE_DIR" && node tls_kafkajs.js "$SASL" kafkajs-bad - - - fail plaintext scram-sha-256 bob wrong) ||
    fail "kafkajs, wrong password"
for m in PLAIN SCRAM-SHA-256 SCRAM-SHA-512; do
    pw=bob-secret user=bob
    [ $m = SCRAM-SHA-512 ] && pw=alice-512 user=alice
    (cd "$NODE_DIR" && node sasl_platformatic.mjs "$SASL" "plt-$m" $m $user $pw ok) ||
        fail "@platformatic/kafka with $m"
done
(cd "$NODE_DIR" && node sasl_platformatic.mjs "$SASL" plt-bad SCRAM-SHA-256 nobody x fail) ||
    fail "@platformatic/kafka, unknown user"

note "bad SASL input: Kafka's errors or a closed connection, the broker keeps serving"
$PY "$ROOT/tests/integration/sasl_bad_input.py" 127.0.0.1 "$SPORT" "$BROKER_PID" 20 ||
    fail "bad SASL input"

note "failures are logged and counted; a deleted user is refused; users survive kill -9"
grep -q "event=sasl_authentication_failed" "$BROKER_LOG" || fail "failures not logged"
metrics=$(curl -sf "http://$ADMIN/metrics") # whole, then matched (grep -q would cut the pipe)
grep -q '^streampulse_sasl_authentications_total{result="failure"} [1-9]' <<<"$metrics" ||
    fail "failures not counted: $(grep sasl <<<"$metrics")"
"${U[@]}" delete bob >/dev/null || fail "user delete bob"
[ "$("${U[@]}" list | cut -f1 | sort -u | xargs)" = alice ] || fail "bob listed after user delete"
if timeout 20 kcat -L -b "$SASL" -m 3 -X security.protocol=SASL_PLAINTEXT -X sasl.mechanisms=PLAIN \
    -X sasl.username=bob -X sasl.password=bob-secret >/dev/null 2>&1; then fail "deleted bob logged in"; fi
kill -9 "$BROKER_PID"
wait "$BROKER_PID" 2>/dev/null || true
start_broker --set "listeners=PLAINTEXT://127.0.0.1:$PORT,SASL://127.0.0.1:$SPORT,SECURE://127.0.0.1:$TPORT" \
    --set "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL:SASL_PLAINTEXT,SECURE:SASL_SSL" \
    "${SASL_ARGS[@]}" --set connection.failed.authentication.delay.ms=200 \
    --set connections.max.reauth.ms=3000
kc SCRAM-SHA-256 alice alice-secret -L -m 5 >/dev/null || fail "alice after kill -9"
[ "$("$SP" user list -b "$BROKER" | cut -f1 | sort -u | xargs)" = alice ] || fail "users after kill -9"
note "no authorizer yet: the ACL APIs answer SECURITY_DISABLED"
$PY "$ROOT/tests/integration/acl_disabled.py" "$BROKER" || fail "ACL APIs without an authorizer"
note "sessions of 3 s (connections.max.reauth.ms): they lapse unless renewed; kafkajs renews them"
$PY "$ROOT/tests/integration/sasl_bad_input.py" --reauth 127.0.0.1 "$SPORT" 3000 alice alice-secret ||
    fail "session lifetime"
(cd "$NODE_DIR" && node reauth_kafkajs.js "$SASL" kafkajs-reauth scram-sha-256 alice alice-secret 7) ||
    fail "kafkajs re-authenticating"
# the same connection (peer address and port) authenticated more than once: re-authentication
reauths=$(grep 'event=sasl_authenticated peer=.*mechanism=SCRAM-SHA-256' "$BROKER_LOG" |
    sed -n 's/.* peer=\([^ ]*\) .*/\1/p' | sort | uniq -c | awk '$1 >= 2' | wc -l)
[ "$reauths" -ge 1 ] || fail "no connection re-authenticated"
note "failed attempts from one address are slowed down"
$PY "$ROOT/tests/integration/sasl_bad_input.py" --delay 127.0.0.1 "$SPORT" 200 ||
    fail "the failure delay"
stop_broker
