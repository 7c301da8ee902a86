#!/usr/bin/env bash
# The admin listener beyond loopback: HTTPS and HTTP Basic authentication of a super user.
# Startup is refused for admin.listener on a non-loopback address (0.0.0.0) without
# admin.listener.ssl.keystore.location, and with it but without super.users, each with a message
# naming the keys; a keystore that does not load is refused naming the file. On loopback
# (127.0.0.2) without a keystore it is plain HTTP without authentication, as before.
# With admin.listener=0.0.0.0 and a keystore (curl --cacert): /healthz answers 200 without
# credentials; /metrics (and any other path, unknown ones too) 401 with
# `WWW-Authenticate: Basic realm="streampulse"` without credentials, with malformed ones
# (another scheme, bad base64, no colon), an unknown user or a wrong password; 403 for a valid
# user not in super.users; 200 with Prometheus text for super users whose credential is
# SCRAM-SHA-512 or SCRAM-SHA-256. A wrong password's answer is held longer after each failure
# (connection.failed.authentication.delay.ms x failures); failures are logged and counted.
# Plain HTTP, garbage and a silent client on the HTTPS port are closed (the silent one at
# admin.listener.ssl.handshake.timeout.ms) and the listener keeps serving; an oversized
# Authorization header gets 431. A new keystore and SIGHUP give new connections the new
# certificate, and so does a replaced file without a signal. `streampulse cluster status` with --admin-cafile, --admin-user and the password
# on stdin or in $STREAMPULSE_ADMIN_PASSWORD prints the cluster; without credentials, with a
# wrong password, a non-super user, an untrusted CA, a host the certificate does not name, or
# without --admin-cafile it fails naming the reason.
# timeout: 180
source "$(dirname "$0")/lib.sh"
P=$TMP/pki
make_pki "$P"
PORT=$(free_port)
APORT=$(free_port)
A=127.0.0.1:$APORT
KS=$TMP/admin-keystore.pem
cp "$P/keystore.pem" "$KS"

# serve_refused WANT [--set k=v ...]: startup must fail (exit 2) with WANT in its message
serve_refused() {
    local want=$1 rc=0
    shift
    timeout 20 "$SP" serve --set "log.dirs=$TMP/refused" --set "listeners=PLAINTEXT://127.0.0.1:$PORT" \
        "$@" >"$TMP/refused.out" 2>&1 || rc=$?
    [ $rc -eq 2 ] || fail "startup with $* exited $rc, not 2: $(cat "$TMP/refused.out")"
    grep -qF -- "$want" "$TMP/refused.out" || fail "startup with $*: no '$want' in: $(cat "$TMP/refused.out")"
}
note "refused: beyond loopback without a keystore, without super users, with a bad keystore"
serve_refused "admin.listener=0.0.0.0:$APORT is not a loopback address" \
    --set "admin.listener=0.0.0.0:$APORT" --set super.users=User:admin
grep -qF "set admin.listener.ssl.keystore.location" "$TMP/refused.out" &&
    grep -qF "and super.users" "$TMP/refused.out" || fail "the refusal names no keys: $(cat "$TMP/refused.out")"
serve_refused "super.users is empty" --set "admin.listener=0.0.0.0:$APORT" \
    --set "admin.listener.ssl.keystore.location=$KS"
serve_refused "$TMP/missing.pem" --set "admin.listener=0.0.0.0:$APORT" \
    --set "admin.listener.ssl.keystore.location=$TMP/missing.pem" --set super.users=User:admin
grep -qF "admin.listener (admin.listener.ssl.*)" "$TMP/refused.out" || fail "bad keystore: $(cat "$TMP/refused.out")"

note "loopback without a keystore: plain HTTP, no credentials asked"
start_broker --set admin.listener=127.0.0.2:0
case $ADMIN in 127.0.0.2:*) ;; *) fail "admin listener at '$ADMIN', not 127.0.0.2" ;; esac
grep broker_started "$BROKER_LOG" | tail -1 | grep -q ' admin_tls=off ' || fail "startup line lacks admin_tls=off"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://$ADMIN/metrics")" = 200 ] || fail "plain /metrics on 127.0.0.2"

note "/v1/users over plain HTTP: bad bodies, methods, framing; the broker keeps serving"
# users STATUS WANT [curl args...]: curl on http://$ADMIN must answer STATUS with WANT in its body
users() {
    local want_status=$1 want=$2 code
    shift 2
    code=$(curl -s -o "$TMP/body" -w '%{http_code}' "$@") || true
    [ "$code" = "$want_status" ] && grep -qF -- "$want" "$TMP/body" ||
        fail "curl $*: $code, expected $want_status with '$want': $(head -c 300 "$TMP/body")"
}
post() { # STATUS WANT BODY [curl args...]
    local st=$1 want=$2 body=$3
    shift 3
    users "$st" "$want" -H 'Content-Type: application/json' --data-binary "$body" "$@" "http://$ADMIN/v1/users"
}
post 400 '"error":"the body is not a JSON object' '{"name":'
post 400 'at byte 8: expected' '{"name" "x"}'
post 400 'the body must be a JSON object' '["alice"]'
post 400 '\"name\" must be a string' '{"name":1,"password":"x"}'
post 400 '\"iterations\" must be an integer from 4096 to 16384' '{"name":"a","password":"x","iterations":"4096"}'
post 400 '\"iterations\" must be an integer' '{"name":"a","password":"x","iterations":4096.5}'
post 400 '\"iterations\" must be an integer' '{"name":"a","password":"x","iterations":100}'
post 400 '\"mechanism\" must be SCRAM-SHA-256 or SCRAM-SHA-512' '{"name":"a","password":"x","mechanism":"SCRAM-SHA-1"}'
post 400 '\"password\" must be 1 to 1024 bytes' '{"name":"a","password":""}'
post 400 '\"password\" must be 1 to 1024 bytes' '{"name":"a","password":"a\u0000b"}'
post 400 '\"name\" must be 1 to 255 bytes' '{"name":"a\nb","password":"x"}'
post 400 '\"name\" is missing' '{"password":"x"}'
post 400 'give \"password\", or \"salt\" with' '{"name":"a"}'
post 400 'not both' '{"name":"a","password":"x","salt":"AAAA","salted_password":"AAAA"}'
post 400 '\"salted_password\" must be 32 bytes for SCRAM-SHA-256 (got 3)' '{"name":"a","salt":"AAAA","salted_password":"AAAA"}'
post 400 '\"salt\" must be the base64' '{"name":"a","salt":"AA=A","salted_password":"AAAA"}'
post 400 'unknown member \"pasword\"' '{"name":"a","pasword":"x"}'
post 400 'an object gives a member name twice' '{"name":"a","name":"b","password":"x"}'
head -c 70000 /dev/zero | tr '\0' ' ' >"$TMP/big.json"
post 413 'at most 65536 bytes' "@$TMP/big.json"
post 411 'chunked transfer coding is not accepted' '{"name":"a","password":"x"}' -H 'Transfer-Encoding: chunked'
post 403 'Host must be an IP address or localhost' '{"name":"a","password":"x"}' -H 'Host: evil.example'
users 415 'Content-Type: application/json' --data-binary '{"name":"a","password":"x"}' -H 'Content-Type: text/plain' "http://$ADMIN/v1/users"
users 405 'use GET, HEAD, POST' -X PUT --data-binary '{}' "http://$ADMIN/v1/users"
grep -qx 'Allow: GET, HEAD, POST' <(curl -s -D - -o /dev/null -X PUT --data-binary '{}' "http://$ADMIN/v1/users" | tr -d '\r') ||
    fail "405 without Allow"
users 405 'use GET, HEAD' -X POST --data-binary '{}' "http://$ADMIN/metrics"
users 405 'use DELETE' "http://$ADMIN/v1/users/alice"
users 404 'user nobody has no SCRAM credential' -X DELETE "http://$ADMIN/v1/users/nobody"
users 400 'the only query parameter is mechanism' -X DELETE "http://$ADMIN/v1/users/nobody?mechanism=MD5&x=1"
users 400 'mechanism must be SCRAM-SHA-256 or SCRAM-SHA-512' -X DELETE "http://$ADMIN/v1/users/nobody?mechanism=MD5"
users 400 'percent-encoded' -X DELETE "http://$ADMIN/v1/users/a%00b"
$PY - "${ADMIN%:*}" "${ADMIN##*:}" <<'PYEOF' || fail "raw requests"
import socket, sys
host, port = sys.argv[1], int(sys.argv[2])
def ask(raw, close_early=False):
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(raw)
    if close_early:
        s.close()
        return b""
    out = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        out += b
    s.close()
    return out
head = b"POST /v1/users HTTP/1.1\r\nHost: 127.0.0.2\r\nContent-Type: application/json\r\n"
# no Content-Length: 411
r = ask(head + b"\r\n" + b'{"name":"a","password":"x"}')
assert r.startswith(b"HTTP/1.1 411 "), r[:80]
# a body announced and cut off: nothing to answer; the broker stays up
ask(head + b"Content-Length: 100\r\n\r\n{\"name\"", close_early=True)
# garbage where a head should be
assert ask(b"\x00\x01garbage\r\n\r\n").startswith(b"HTTP/1.1 400 ")
# a request and a pipelined one behind it: one answer, for the first (a valid set)
body = b'{"name":"pipe","password":"pipe-secret","mechanism":"SCRAM-SHA-512"}'
r = ask(head + b"Content-Length: %d\r\n\r\n" % len(body) + body +
        b"DELETE /v1/users/pipe HTTP/1.1\r\nHost: 127.0.0.2\r\n\r\n")
assert r.startswith(b"HTTP/1.1 202 Accepted\r\n") and r.count(b"HTTP/1.1") == 1, r
assert b'"name":"pipe","mechanism":"SCRAM-SHA-512","iterations":4096,"salt":"' in r, r
print("ok: raw requests answered 411, nothing, 400 and one 202")
PYEOF
poll_until grep -q 'event=user_changed op=set name="pipe" mechanism=SCRAM-SHA-512' "$BROKER_LOG" ||
    fail "the pipelined set not committed"
users 200 '{"users":[{"name":"pipe","credentials":[{"mechanism":"SCRAM-SHA-512","iterations":4096,"salt":"' "http://$ADMIN/v1/users"
grep -q "pipe-secret\|stored_key\|server_key" "$TMP/body" && fail "GET /v1/users shows secrets"
users 202 '{"name":"pipe","mechanisms":["SCRAM-SHA-512"]}' -X DELETE "http://$ADMIN/v1/users/pipe?mechanism=SCRAM-SHA-512"
poll_until grep -q 'event=user_changed op=delete name="pipe"' "$BROKER_LOG" || fail "the delete not committed"
users 200 '{"users":[]}' "http://$ADMIN/v1/users"
users 200 ok "http://$ADMIN/healthz"
grep -q "pipe-secret" "$BROKER_LOG" && fail "a password is in the broker's log"
stop_broker

note "HTTPS on 0.0.0.0:$APORT"
start_broker --set "admin.listener=0.0.0.0:$APORT" --set "admin.listener.ssl.keystore.location=$KS" \
    --set "super.users=User:admin;User:ops;User:erin" --set connection.failed.authentication.delay.ms=200 \
    --set admin.listener.ssl.handshake.timeout.ms=1000
grep broker_started "$BROKER_LOG" | tail -1 | grep -q " admin=0.0.0.0:$APORT admin_tls=https_basic_auth " ||
    fail "startup line: $(grep broker_started "$BROKER_LOG" | tail -1)"
echo 'admin-secret' | "$SP" user create admin --mechanism SCRAM-SHA-512 --password-stdin -b "$BROKER" >/dev/null ||
    fail "user create admin"
echo 'ops-secret' | "$SP" user create ops --password-stdin -b "$BROKER" >/dev/null || fail "user create ops"
echo 'bob-secret' | "$SP" user create bob --password-stdin -b "$BROKER" >/dev/null || fail "user create bob"

# get PATH [curl args...]: the status; body in $TMP/body, head in $TMP/head (CRs removed)
get() {
    local path=$1 code
    shift
    code=$(curl -s --cacert "$P/ca.pem" -o "$TMP/body" -D "$TMP/head.raw" -w '%{http_code}' "$@" "https://$A$path") || true
    tr -d '\r' <"$TMP/head.raw" >"$TMP/head" 2>/dev/null || : >"$TMP/head"
    echo "$code"
}
expect() { # STATUS PATH [curl args...]
    local want=$1 got
    shift
    got=$(get "$@")
    [ "$got" = "$want" ] || fail "GET $1 ${*:2}: $got, expected $want: $(head -c 300 "$TMP/body")"
}
challenged() { grep -qx 'WWW-Authenticate: Basic realm="streampulse"' "$TMP/head" || fail "no challenge: $(cat "$TMP/head")"; }

expect 200 /healthz
[ "$(cat "$TMP/body")" = ok ] || fail "/healthz body: $(cat "$TMP/body")"
expect 401 /metrics
challenged
grep -q "^# TYPE" "$TMP/body" && fail "a 401 carried metrics"
expect 401 /metrics -I
challenged
expect 401 /v1/cluster
expect 401 /no-such-path
challenged
expect 401 /metrics -u admin:wrong
challenged
expect 401 /metrics -u nobody:admin-secret
expect 401 /metrics -u admin:
expect 401 /metrics -H 'Authorization: Bearer YWRtaW46YWRtaW4tc2VjcmV0'
expect 401 /metrics -H 'Authorization: Basic YWRtaW46YWRtaW4tc2VjcmV0!'
expect 401 /metrics -H "Authorization: Basic $(printf admin | base64)"
expect 403 /metrics -u bob:bob-secret
grep -q "super.users" "$TMP/body" || fail "403 body: $(cat "$TMP/body")"
expect 200 /metrics -u admin:admin-secret
grep -qx 'Content-Type: text/plain; version=0.0.4; charset=utf-8' "$TMP/head" || fail "content type: $(cat "$TMP/head")"
grep -qx '# TYPE streampulse_build_info gauge' "$TMP/body" || fail "no Prometheus text"
cp "$TMP/body" "$TMP/metrics.txt"
PYTHONPATH="$ROOT/tests/integration" $PY - "$TMP/metrics.txt" <<'PYEOF' || fail "the metrics over HTTPS do not parse"
import sys
from metrics_check import parse_prometheus, EXPECTED
fams = parse_prometheus(open(sys.argv[1]).read())
for name, typ in EXPECTED.items():
    assert fams[name]["type"] == typ, name
PYEOF
expect 200 /v1/cluster -u ops:ops-secret
$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["node_id"] == 1' "$TMP/body" ||
    fail "/v1/cluster: $(cat "$TMP/body")"
expect 404 /no-such-path -u admin:admin-secret
big=$(head -c 9000 /dev/zero | tr '\0' A)
expect 431 /metrics -H "Authorization: Basic $big"

note "failed passwords are held back longer each time, logged and counted"
for i in 1 2 3; do
    t=$(curl -s --cacert "$P/ca.pem" -o /dev/null -w '%{http_code} %{time_total}' -u "admin:wrong$i" "https://$A/metrics")
done
# at least three failures from 127.0.0.1 in the last minute: held >= 3 x 200 ms
$PY -c 'import sys; c, s = sys.argv[1].split(); assert c == "401" and float(s) >= 0.55, sys.argv[1]' "$t" ||
    fail "the third wrong password was answered after $t s"
grep -q 'event=admin_authentication_failed peer=127.0.0.1 ' "$BROKER_LOG" || fail "failures not logged"
get /metrics -u admin:admin-secret >/dev/null
$PY - "$TMP/body" <<'PYEOF' || fail "authentication counters: $(grep authentications_total "$TMP/body")"
import re, sys
text = open(sys.argv[1]).read()
v = {m.group(1): float(m.group(2)) for m in
     re.finditer(r'^streampulse_admin_authentications_total\{result="(\w+)"\} (\S+)$', text, re.M)}
# failed: admin:wrong, nobody, the three above (admin: with no password never reaches the check)
assert v["failed"] >= 5 and v["forbidden"] == 1 and v["ok"] >= 3, v
m = re.search(r'^streampulse_admin_http_responses_total\{code="401"\} (\S+)$', text, re.M)
assert float(m.group(1)) >= 12, m.group(0)
PYEOF

note "plain HTTP, garbage and silent clients on the HTTPS port"
rc=0
code=$(curl -s -o /dev/null -w '%{http_code}' "http://$A/healthz") || rc=$?
[ $rc -ne 0 ] && [ "$code" = 000 ] || fail "plain HTTP on the HTTPS port: exit $rc, status $code"
poll_until grep -q 'event=admin_tls_handshake_failed .*reason="http request"' "$BROKER_LOG" ||
    fail "the plaintext request is not logged"
$PY - 127.0.0.1 "$APORT" <<'PYEOF' || fail "garbage TLS"
import os, socket, sys, time
host, port = sys.argv[1], int(sys.argv[2])
def closed_within(s, secs):
    s.settimeout(secs)
    try:
        while s.recv(4096):
            pass
        return True
    except (socket.timeout, TimeoutError):
        return False
    except ConnectionResetError:
        return True
# random bytes, a record header announcing 16 KiB then silence, a ClientHello cut short
for payload in (os.urandom(3000), b"\x16\x03\x01\x40\x00", b"\x16\x03\x01\x00\x30\x01\x00\x00\x2c\x03\x03"):
    s = socket.create_connection((host, port))
    s.sendall(payload)
    t0 = time.monotonic()
    assert closed_within(s, 5), payload[:8]
    s.close()
# silent: closed at the handshake timeout (1 s), not at the 10 s head timeout
s = socket.create_connection((host, port))
t0 = time.monotonic()
assert closed_within(s, 5)
took = time.monotonic() - t0
assert 0.8 <= took < 4, took
print("silent client closed after %.2f s" % took)
PYEOF
expect 200 /healthz
expect 200 /metrics -u admin:admin-secret
$PY -c 'import re,sys; t=open(sys.argv[1]).read(); v=float(re.search(r"^streampulse_admin_tls_handshake_failures_total (\S+)$", t, re.M).group(1)); assert v >= 5, v' "$TMP/body" ||
    fail "handshake failures: $(grep tls_handshake_failures "$TMP/body")"

note "a new certificate: SIGHUP"
[ "$(cert_serial "$A" "$P/ca.pem")" = 1001 ] || fail "first admin certificate: $(cert_serial "$A" "$P/ca.pem")"
cp "$P/keystore2.pem" "$KS.new" && mv "$KS.new" "$KS"
kill -HUP "$BROKER_PID"
poll_until grep -q "event=tls_reloaded listener=admin why=sighup .*serial=1002" "$BROKER_LOG" ||
    fail "SIGHUP did not reload the admin keystore"
[ "$(cert_serial "$A" "$P/ca.pem")" = 1002 ] || fail "after SIGHUP: serial $(cert_serial "$A" "$P/ca.pem")"
expect 200 /metrics -u admin:admin-secret
note "a new certificate: the file changes, no signal"
cp "$P/keystore.pem" "$KS.new" && mv "$KS.new" "$KS"
serial_is() { [ "$(cert_serial "$A" "$P/ca.pem")" = "$1" ]; }
poll_until serial_is 1001 || fail "the replaced keystore was not picked up: $(cert_serial "$A" "$P/ca.pem")"
grep -q "event=tls_reloaded listener=admin why=file_changed .*serial=1001" "$BROKER_LOG" ||
    fail "the file change is not logged"

note "streampulse cluster status over HTTPS"
CS=("$SP" cluster status --admin "$A" --admin-cafile "$P/ca.pem" --timeout 5)
echo 'admin-secret' | "${CS[@]}" --admin-user admin --admin-password-stdin >"$TMP/cs.out" 2>"$TMP/cs.err" ||
    fail "cluster status: $(cat "$TMP/cs.err")"
grep -q "^controller: leader 1," "$TMP/cs.out" && grep -q "^  1 *127.0.0.1:$PORT .* live$" "$TMP/cs.out" ||
    fail "cluster status output: $(cat "$TMP/cs.out")"
STREAMPULSE_ADMIN_PASSWORD=ops-secret "${CS[@]}" --admin-user ops >"$TMP/cs.out" 2>"$TMP/cs.err" ||
    fail "cluster status with the password in the environment: $(cat "$TMP/cs.err")"
grep -q "^controller: leader 1," "$TMP/cs.out" || fail "cluster status output: $(cat "$TMP/cs.out")"
cs_fails() { # RC WANT [args...]: cluster status exits RC with WANT on stderr
    local want_rc=$1 want=$2 rc=0
    shift 2
    "$@" >"$TMP/cs.out" 2>"$TMP/cs.err" || rc=$?
    [ $rc -eq "$want_rc" ] || fail "$* exited $rc, not $want_rc: $(cat "$TMP/cs.err")"
    grep -qF -- "$want" "$TMP/cs.err" || fail "$*: no '$want' in: $(cat "$TMP/cs.err")"
}
cs_fails 1 "answered HTTP 401 to GET /v1/cluster (this admin listener asks for credentials" "${CS[@]}"
echo 'nope' | cs_fails 1 "answered HTTP 401 to GET /v1/cluster (the user name or password is wrong)" \
    "${CS[@]}" --admin-user admin --admin-password-stdin
echo 'bob-secret' | cs_fails 1 "answered HTTP 403" "${CS[@]}" --admin-user bob --admin-password-stdin
echo 'admin-secret' | cs_fails 1 "the server's certificate: self-signed certificate in certificate chain" \
    "$SP" cluster status --admin "$A" --admin-cafile "$P/evil-ca.pem" --admin-user admin --admin-password-stdin
echo 'admin-secret' | cs_fails 1 "the server's certificate: IP address mismatch" \
    "$SP" cluster status --admin "127.0.0.2:$APORT" --admin-cafile "$P/ca.pem" --admin-user admin --admin-password-stdin
cs_fails 1 "did not answer HTTP (an admin listener with HTTPS? give --admin-cafile)" \
    "$SP" cluster status --admin "$A" --timeout 5
echo 'admin-secret' | cs_fails 2 "--admin-user needs --admin-cafile" \
    "$SP" cluster status --admin "$A" --admin-user admin --admin-password-stdin
cs_fails 2 "--admin-user needs a password" env -u STREAMPULSE_ADMIN_PASSWORD "${CS[@]}" --admin-user admin
note "streampulse user --admin over HTTPS with a super user's credentials"
UA=("$SP" user --admin "$A" --admin-cafile "$P/ca.pem" --timeout 5)
echo 'carol-secret' | "${UA[@]}" create carol --password-stdin --admin-user admin \
    --admin-password-file <(echo admin-secret) >"$TMP/u.out" 2>"$TMP/u.err" || fail "user create --admin over HTTPS: $(cat "$TMP/u.err")"
STREAMPULSE_ADMIN_PASSWORD=ops-secret "${UA[@]}" list --admin-user ops >"$TMP/u.out" 2>"$TMP/u.err" ||
    fail "user list --admin over HTTPS: $(cat "$TMP/u.err")"
grep -qx $'carol\tSCRAM-SHA-256\titerations=4096' "$TMP/u.out" || fail "carol not listed: $(cat "$TMP/u.out")"
# carol is no super user: she is refused, as anybody without credentials
expect 403 /v1/users -u carol:carol-secret
expect 401 /v1/users
code=$(curl -s --cacert "$P/ca.pem" -o "$TMP/body" -w '%{http_code}' -u bob:bob-secret -H 'Content-Type: application/json' \
    --data-binary '{"name":"eve","password":"eve-secret"}' "https://$A/v1/users")
[ "$code" = 403 ] || fail "POST /v1/users as bob: $code"
echo 'dave-secret' | cs_fails 1 "answered HTTP 403" "${UA[@]}" create dave --password-stdin --admin-user bob \
    --admin-password-file <(echo bob-secret)
cs_fails 1 "answered HTTP 401" "${UA[@]}" list
echo x | cs_fails 2 "cannot both read standard input" "${UA[@]}" create dave --password-stdin --admin-user admin --admin-password-stdin
# a super user through HTTPS with a password (the broker salts it) in the body
code=$(curl -s --cacert "$P/ca.pem" -o "$TMP/body" -w '%{http_code}' -u admin:admin-secret -H 'Content-Type: application/json' \
    --data-binary '{"name":"erin","password":"erin-secret","mechanism":"SCRAM-SHA-512","iterations":8192}' "https://$A/v1/users")
[ "$code" = 202 ] || fail "POST /v1/users as admin: $code $(cat "$TMP/body")"
STREAMPULSE_ADMIN_PASSWORD=admin-secret "${UA[@]}" delete carol --admin-user admin >/dev/null 2>"$TMP/u.err" ||
    fail "user delete --admin over HTTPS: $(cat "$TMP/u.err")"
poll_until grep -q 'event=user_changed op=set name="erin" mechanism=SCRAM-SHA-512' "$BROKER_LOG" || fail "erin not set"
STREAMPULSE_ADMIN_PASSWORD=admin-secret "${UA[@]}" list --admin-user admin >"$TMP/u.out" || fail "user list"
grep -q '^carol' "$TMP/u.out" && fail "carol listed after delete"
grep -qx $'erin\tSCRAM-SHA-512\titerations=8192' "$TMP/u.out" || fail "erin not listed: $(cat "$TMP/u.out")"
expect 200 /metrics -u erin:erin-secret # the credential the broker made from her password
grep -q "admin-secret\|ops-secret\|carol-secret\|erin-secret" "$BROKER_LOG" && fail "a password is in the broker's log"
stop_broker
note "ok"
