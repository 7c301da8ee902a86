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
# Time: independent client runs overlap (lib.sh spawn), since a refused client mostly waits out
# its own timeout: ~17 s, where one after the other took ~56 s.
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
# Independent client runs overlap (spawn): each has its own topic and group, and a refused
# client waits out its own timeout (kcat -m 3, kafka-python 3 s, confluent 5 s), which is most
# of their time.
kcat_refused() { # MECHANISM USER PASSWORD: kcat fails with librdkafka's authentication error
    local out
    if out=$(timeout 20 kcat -L -b "$SASL" -m 3 -X security.protocol=SASL_PLAINTEXT \
        -X "sasl.mechanisms=$1" -X "sasl.username=$2" -X "sasl.password=$3" 2>&1); then
        fail "kcat authenticated with '$*'"
    fi
    grep -q "Authentication failed" <<<"$out" || fail "kcat '$*': $(tail -2 <<<"$out")"
}
kcat_without_sasl() {
    if timeout 20 kcat -L -b "$SASL" -m 3 >/dev/null 2>&1; then fail "kcat without SASL was served"; fi
}
client() { $PY "$ROOT/tests/integration/tls_clients.py" "$@"; }
in_node() { cd "$NODE_DIR" && node "$@"; }

note "kcat with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512; confluent-kafka, kafka-python, kafkajs and @platformatic/kafka"
spawn kcat-256-wrong kcat_refused SCRAM-SHA-256 alice wrong
spawn kcat-plain-wrong kcat_refused PLAIN alice wrong
spawn kcat-256-nobody kcat_refused SCRAM-SHA-256 nobody x
spawn kcat-plain-nobody kcat_refused PLAIN nobody x
spawn kcat-512-bob kcat_refused SCRAM-SHA-512 bob bob-secret # bob has no SCRAM-SHA-512 credential
spawn kcat-nosasl kcat_without_sasl
for c in confluent kafka-python; do
    for m in PLAIN SCRAM-SHA-256; do
        spawn "$c-$m" client "$c" "$SASL" "$c-$m" --plaintext --sasl "$m" --user bob --password bob-secret
    done
    spawn "$c-ssl-512" client "$c" "$SSL_SASL" "$c-ssl-512" --ca "$P/ca.pem" --sasl SCRAM-SHA-512 \
        --user alice --password alice-512
    spawn "$c-bad" client "$c" "$SASL" "$c-bad" --plaintext --sasl SCRAM-SHA-256 --user bob \
        --password wrong --expect fail
done
spawn kp-nosasl client kafka-python "$SASL" kp-nosasl --plaintext --expect fail
for m in plain scram-sha-256 scram-sha-512; do
    pw=bob-secret user=bob
    [ $m = scram-sha-512 ] && pw=alice-512 user=alice
    spawn "kafkajs-$m" in_node tls_kafkajs.js "$SASL" "kafkajs-$m" - - - ok plaintext $m $user $pw
done
spawn kafkajs-ssl in_node tls_kafkajs.js "$SSL_SASL" kafkajs-ssl "$P/ca.pem" - - ok tls scram-sha-512 alice alice-512
spawn kafkajs-bad in_node tls_kafkajs.js "$SASL" kafkajs-bad - - - fail plaintext scram-sha-256 bob wrong
for m in PLAIN SCRAM-SHA-256 SCRAM-SHA-512; do
    pw=bob-secret user=bob
    [ $m = SCRAM-SHA-512 ] && pw=alice-512 user=alice
    spawn "plt-$m" in_node secure_platformatic.mjs "$SASL" "plt-$m" $m $user $pw ok
done
spawn plt-ssl in_node secure_platformatic.mjs "$SSL_SASL" plt-ssl SCRAM-SHA-512 alice alice-512 ok "$P/ca.pem"
spawn plt-bad in_node secure_platformatic.mjs "$SASL" plt-bad SCRAM-SHA-256 nobody x fail
for m in PLAIN SCRAM-SHA-256; do
    printf '%s-1\n%s-2\n' "$m" "$m" | kc "$m" alice alice-secret -P -t "kcat-$m" || fail "kcat $m produce"
    [ "$(kc "$m" alice alice-secret -C -t "kcat-$m" -e -q)" = "$m-1"$'\n'"$m-2" ] || fail "kcat $m consume"
done
printf 'x\n' | kc SCRAM-SHA-512 alice alice-512 -P -t kcat-512 || fail "kcat SCRAM-SHA-512"
printf 'x\n' | kc PLAIN alice alice-512 -P -t kcat-512 || fail "PLAIN against alice's SCRAM-SHA-512 credential"
spawn_wait
grep -q "event=request_rejected .*reason=not_authenticated" "$BROKER_LOG" ||
    fail "a request before authentication is not logged as refused"

note "failures are logged and counted; a deleted user is refused; bad SASL input gets Kafka's errors or a closed connection, the broker keeps serving"
grep -q "event=sasl_authentication_failed" "$BROKER_LOG" || fail "failures not logged"
metrics=$(curl -sf "http://$ADMIN/metrics") # whole, then matched (grep -q would cut the pipe)
grep -q '^streampulse_sasl_authentications_total{result="failure"} [1-9]' <<<"$metrics" ||
    fail "failures not counted: $(grep sasl <<<"$metrics")"
"${U[@]}" delete bob >/dev/null || fail "user delete bob"
[ "$("${U[@]}" list | cut -f1 | sort -u | xargs)" = alice ] || fail "bob listed after user delete"
spawn bob-deleted kcat_refused PLAIN bob bob-secret
$PY "$ROOT/tests/integration/sasl_bad_input.py" 127.0.0.1 "$SPORT" "$BROKER_PID" 20 ||
    fail "bad SASL input"
spawn_wait

note "users survive kill -9"
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
note "sessions of 3 s (connections.max.reauth.ms): they lapse unless renewed; kafkajs renews them; failed attempts from one address are slowed down"
spawn lapse $PY "$ROOT/tests/integration/sasl_bad_input.py" --reauth 127.0.0.1 "$SPORT" 3000 alice alice-secret
spawn kafkajs-reauth in_node reauth_kafkajs.js "$SASL" kafkajs-reauth scram-sha-256 alice alice-secret 7
# the delay's lower bounds hold whatever runs beside it (successful logins add no failures)
$PY "$ROOT/tests/integration/sasl_bad_input.py" --delay 127.0.0.1 "$SPORT" 200 ||
    fail "the failure delay"
spawn_wait
# the same connection (peer address and port) authenticated more than once: re-authentication
reauths=$(grep 'event=sasl_authenticated peer=.*mechanism=SCRAM-SHA-256' "$BROKER_LOG" |
    sed -n 's/.* peer=\([^ ]*\) .*/\1/p' | sort | uniq -c | awk '$1 >= 2' | wc -l)
[ "$reauths" -ge 1 ] || fail "no connection re-authenticated"
stop_broker
