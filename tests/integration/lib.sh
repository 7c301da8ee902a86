# Shared helpers for integration tests (source it). Each test runs the real broker binary on
# 127.0.0.1 with a temporary data directory and stops everything it started on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SP=${SP:-$ROOT/build/streampulse}
PY=/usr/bin/python3                 # Debian's python3: the one with python3-kafka & confluent
ITEST_BIN=$ROOT/build/itest
NODE_DIR=$ROOT/tests/integration/node
TMP=$(mktemp -d /tmp/sp-itest.XXXXXX)
DATA=$TMP/data
BROKER_LOG=$TMP/broker.log
BROKER_PID=""
PORT=""
BROKER=""

cleanup() {
    local rc=$?
    if [ -n "$BROKER_PID" ] && kill -0 "$BROKER_PID" 2>/dev/null; then
        kill -9 "$BROKER_PID" 2>/dev/null || true
        wait "$BROKER_PID" 2>/dev/null || true
    fi
    # anything else this test started (clients in the background)
    jobs -p | xargs -r kill -9 2>/dev/null || true
    # test-specific undo (e.g. unmounting), set by the test in EXTRA_CLEANUP
    if [ -n "${EXTRA_CLEANUP:-}" ]; then eval "$EXTRA_CLEANUP" || true; fi
    if [ $rc -ne 0 ] && [ -f "$BROKER_LOG" ]; then
        echo "--- broker log (last 40 lines) ---"
        tail -n 40 "$BROKER_LOG"
    fi
    rm -rf "$TMP"
    exit $rc
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "# $*"; }

free_port() {
    $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# start_broker [--set k=v ...]: starts the broker on a free port (kept across restarts) with
# $DATA as its data directory; waits until it listens. Sets BROKER, BROKER_PID.
start_broker() {
    [ -n "$PORT" ] || PORT=$(free_port)
    BROKER=127.0.0.1:$PORT
    local before
    before=$(grep -c broker_started "$BROKER_LOG" 2>/dev/null || true)
    "$SP" serve --set "log.dirs=$DATA" --set "listeners=PLAINTEXT://127.0.0.1:$PORT" \
        --set group.initial.rebalance.delay.ms=0 "$@" >>"$BROKER_LOG" 2>&1 &
    BROKER_PID=$!
    for _ in $(seq 1 200); do
        if [ "$(grep -c broker_started "$BROKER_LOG" 2>/dev/null || true)" -gt "${before:-0}" ]; then
            return 0
        fi
        kill -0 "$BROKER_PID" 2>/dev/null || { cat "$BROKER_LOG"; fail "broker exited during startup"; }
        sleep 0.05
    done
    fail "broker did not start within 10 s"
}

# stop_broker: SIGTERM, and the broker must exit 0.
stop_broker() {
    kill -TERM "$BROKER_PID"
    local rc=0
    wait "$BROKER_PID" || rc=$?
    BROKER_PID=""
    [ $rc -eq 0 ] || fail "broker exited with $rc after SIGTERM"
}

kill9_broker() {
    kill -9 "$BROKER_PID" 2>/dev/null || true
    wait "$BROKER_PID" 2>/dev/null || true
    BROKER_PID=""
}

broker_rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$BROKER_PID/status"; }
