#!/usr/bin/env bash
# serve: no arguments gives a working broker on 127.0.0.1:9092 with ./data; unknown keys and
# bad values are named and refused; a second broker on the same data directory is refused;
# SIGINT and SIGTERM shut down cleanly with exit 0.
# timeout: 120
source "$(dirname "$0")/lib.sh"

expect_refusal() { # expected-exit-code expected-text args...
    local code=$1 text=$2
    shift 2
    local rc=0
    "$SP" serve "$@" >"$TMP/refusal.out" 2>&1 || rc=$?
    [ $rc -eq "$code" ] || fail "serve $* exited $rc, expected $code: $(cat "$TMP/refusal.out")"
    grep -q -- "$text" "$TMP/refusal.out" || fail "serve $*: message lacks '$text': $(cat "$TMP/refusal.out")"
}
expect_refusal 2 "no.such.key" --set no.such.key=1
expect_refusal 2 "num.partitions" --set num.partitions=-3
expect_refusal 2 "listeners" --set listeners=PLAINTEXT://127.0.0.1:notaport
expect_refusal 2 "cannot read config file" --config "$TMP/missing.properties"
printf 'log.dirs=%s\nmessage.max.bytes=big\n' "$TMP/x" >"$TMP/bad.properties"
expect_refusal 2 "bad.properties:2" --config "$TMP/bad.properties"
expect_refusal 2 "unknown or incomplete option" --bogus

# a config file works, and a second broker on the same data directory is refused
printf 'num.partitions=2\n# comment\nauto.create.topics.enable=true\n' >"$TMP/good.properties"
start_broker --config "$TMP/good.properties"
port2=$(free_port)
rc=0
"$SP" serve --set "log.dirs=$DATA" --set "listeners=PLAINTEXT://127.0.0.1:$port2" >"$TMP/second.out" 2>&1 || rc=$?
[ $rc -eq 1 ] || fail "second broker on the same data dir exited $rc"
grep -q "locked by another broker" "$TMP/second.out" || fail "no lock message: $(cat "$TMP/second.out")"
# the port is taken: clear error
rc=0
"$SP" serve --set "log.dirs=$TMP/other" --set "listeners=PLAINTEXT://127.0.0.1:$PORT" >"$TMP/port.out" 2>&1 || rc=$?
[ $rc -eq 1 ] || fail "broker on a busy port exited $rc"
grep -qi "address already in use" "$TMP/port.out" || fail "no port message: $(cat "$TMP/port.out")"
kcat -L -b "$BROKER" -t two >/dev/null
kcat -L -b "$BROKER" -t two | grep -q 'with 2 partitions' || fail "num.partitions from the file not applied"
# SIGINT is a clean shutdown too
kill -INT "$BROKER_PID"
rc=0; wait "$BROKER_PID" || rc=$?; BROKER_PID=""
[ $rc -eq 0 ] || fail "SIGINT exit code $rc"
grep -q 'event=broker_stopping signal=SIGINT' "$BROKER_LOG" || fail "no SIGINT stop logged"
[ -f "$DATA/.clean_shutdown" ] || fail "no clean-shutdown marker after SIGINT"

# no arguments at all: 127.0.0.1:9092 and ./data
if ! (exec 3<>/dev/tcp/127.0.0.1/9092) 2>/dev/null; then
    mkdir -p "$TMP/cwd" && cd "$TMP/cwd"
    "$SP" serve >"$TMP/default.log" 2>&1 &
    BROKER_PID=$!
    for _ in $(seq 1 100); do grep -q broker_started "$TMP/default.log" && break; sleep 0.05; done
    grep -q 'listener=127.0.0.1:9092' "$TMP/default.log" || fail "default listener: $(cat "$TMP/default.log")"
    # the admin listener's default, or (port taken on this machine) a warning and no listener
    grep -q 'admin=127.0.0.1:9644 \|event=admin_listener_unavailable' "$TMP/default.log" ||
        fail "default admin listener: $(cat "$TMP/default.log")"
    echo hello | kcat -P -b 127.0.0.1:9092 -t defaults
    [ "$(kcat -C -b 127.0.0.1:9092 -t defaults -e -q)" = hello ] || fail "default broker round trip"
    [ -d "$TMP/cwd/data/defaults-0" ] || fail "data not in ./data"
    stop_broker
else
    note "port 9092 busy on this machine: skipping the no-argument check"
fi
