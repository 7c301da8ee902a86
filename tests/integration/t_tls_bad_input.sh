#!/usr/bin/env bash
# Bad input on a TLS listener never crashes or leaks: garbage, plaintext requests, stalled and
# silent handshakes (closed at ssl.handshake.timeout.ms), oversized TLS records and frames; a
# healthy TLS connection keeps being answered, RSS does not grow over a bounded loop of hostile
# connections, and the failures are logged rate-limited (a count per line, not a line each).
# timeout: 180
source "$(dirname "$0")/lib.sh"
P=$TMP/pki
make_pki "$P"
PORT=$(free_port)
SPORT=$(free_port)
start_broker --set "listeners=PLAINTEXT://127.0.0.1:$PORT,SECURE://127.0.0.1:$SPORT" \
    --set "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SECURE:SSL" \
    --set "ssl.keystore.location=$P/keystore.pem" --set ssl.handshake.timeout.ms=400
PYTHONPATH="$ROOT/tests/integration" $PY "$ROOT/tests/integration/tls_bad_input.py" 127.0.0.1 \
    "$SPORT" "$P/ca.pem" "$BROKER_PID" 400 25 || fail "hostile TLS input"
grep -q 'event=tls_handshake_failed .*reason="handshake timed out"' "$BROKER_LOG" ||
    fail "the handshake deadline is not logged"
lines=$(grep -c event=tls_handshake_failed "$BROKER_LOG")
[ "$lines" -lt 100 ] || fail "$lines handshake failure lines for ~170 failures: not rate-limited"
SSL=(-X security.protocol=ssl -X "ssl.ca.location=$P/ca.pem")
echo after | kcat -P -b "127.0.0.1:$SPORT" -t after "${SSL[@]}"
[ "$(kcat -C -b "127.0.0.1:$SPORT" -t after -e -q "${SSL[@]}")" = after ] || fail "TLS clients afterwards"
kill -0 "$BROKER_PID" || fail "broker died"
stop_broker
