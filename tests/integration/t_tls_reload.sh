#!/usr/bin/env bash
# A new certificate without a restart: replace the keystore (same CA) and send SIGHUP, and a new
# connection is shown the new certificate while a connection opened before keeps working on the
# old one; replacing the file again is picked up without a signal (mtime, checked at accept at
# most once a second). A bad keystore (garbage, a key of another certificate) is logged and the
# old certificate stays, and the same bad file is not retried at every connection.
# timeout: 120
source "$(dirname "$0")/lib.sh"
P=$TMP/pki
make_pki "$P"
PORT=$(free_port)
SPORT=$(free_port)
SECURE=127.0.0.1:$SPORT
KS=$TMP/keystore.pem
cp "$P/keystore.pem" "$KS"
start_broker --set "listeners=PLAINTEXT://127.0.0.1:$PORT,SECURE://127.0.0.1:$SPORT" \
    --set "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SECURE:SSL" \
    --set "ssl.keystore.location=$KS"
SSL=(-X security.protocol=ssl -X "ssl.ca.location=$P/ca.pem")
serial_is() { [ "$(cert_serial "$SECURE" "$P/ca.pem")" = "$1" ]; }
replace_keystore() { cp "$1" "$KS.new" && mv "$KS.new" "$KS"; }
log_count() { grep -c -- "$1" "$BROKER_LOG" || true; }

serial_is 1001 || fail "first certificate: serial $(cert_serial "$SECURE" "$P/ca.pem"), expected 1001"

note "an old connection, then a new certificate and SIGHUP"
PYTHONPATH="$ROOT/tests/integration" $PY "$ROOT/tests/integration/tls_hold.py" 127.0.0.1 "$SPORT" \
    "$P/ca.pem" "$TMP/ready" "$TMP/go" >"$TMP/hold.out" 2>&1 &
HOLD=$!
poll_until test -s "$TMP/ready" || { cat "$TMP/hold.out"; fail "the old connection did not start"; }
replace_keystore "$P/keystore2.pem"
kill -HUP "$BROKER_PID"
poll_until grep -q "event=tls_reloaded listener=SECURE why=sighup .*serial=1002" "$BROKER_LOG" ||
    fail "SIGHUP did not reload the keystore"
serial_is 1002 || fail "a new connection after SIGHUP got serial $(cert_serial "$SECURE" "$P/ca.pem")"
touch "$TMP/go"
wait "$HOLD" || { cat "$TMP/hold.out"; fail "the old connection broke across the reload"; }
grep -q "old_serial=1001 ok" "$TMP/hold.out" || { cat "$TMP/hold.out"; fail "the old connection's certificate"; }
echo reloaded | kcat -P -b "$SECURE" -t reload "${SSL[@]}"
[ "$(kcat -C -b "$SECURE" -t reload -e -q "${SSL[@]}")" = reloaded ] || fail "clients after the reload"

note "a changed file is picked up without a signal"
replace_keystore "$P/keystore.pem"
poll_until serial_is 1001 || fail "the changed keystore was not picked up at accept"
grep -q "event=tls_reloaded listener=SECURE why=file_changed .*serial=1001" "$BROKER_LOG" ||
    fail "the reload on file change is not logged"

note "a bad keystore is logged and the old certificate stays"
echo "not a PEM file" >"$KS.new" && mv "$KS.new" "$KS"
kill -HUP "$BROKER_PID"
poll_until grep -q 'event=tls_reload_failed listener=SECURE why=sighup .*action=keep_old_certificate' "$BROKER_LOG" ||
    fail "a bad keystore on SIGHUP is not reported"
serial_is 1001 || fail "after a failed reload the old certificate must stay"
failures=$(log_count event=tls_reload_failed)
# the same bad file is not rebuilt at every accept: the once-a-second check must pass twice
for _ in 1 2; do
    sleep 1.1
    serial_is 1001 || fail "the old certificate went away"
done
[ "$(log_count event=tls_reload_failed)" = "$failures" ] || fail "the same bad keystore was retried"
cat "$P/server2.key" "$P/server.pem" >"$KS.new" && mv "$KS.new" "$KS"
mismatch_logged() { # a connection makes the broker look at the file
    cert_serial "$SECURE" "$P/ca.pem" >/dev/null
    grep -q 'event=tls_reload_failed listener=SECURE why=file_changed .*private key does not belong' "$BROKER_LOG"
}
poll_until mismatch_logged || fail "a keystore whose key does not match is not reported"
serial_is 1001 || fail "after a mismatched key the old certificate must stay"
replace_keystore "$P/keystore2.pem"
poll_until serial_is 1002 || fail "a good keystore after bad ones was not picked up"
kill -0 "$BROKER_PID" || fail "broker died"
stop_broker
