# Shared helpers for integration tests (source it). Each test runs the real broker binary on
# 127.0.0.1 with a temporary data directory and stops everything it started on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SP=${SP:-$ROOT/build/streampulse}
PY=/usr/bin/python3                 # Debian's python3: the one with python3-kafka & confluent
ITEST_BIN=$ROOT/build/itest
NODE_DIR=$ROOT/tests/integration/node
TMP=$(mktemp -d "${ITEST_TMP:-/tmp/sp-itest}.XXXXXX")   # ITEST_TMP: another prefix
DATA=$TMP/data
BROKER_LOG=$TMP/broker.log
BROKER_PID=""
PORT=""
BROKER=""
ADMIN=""                            # host:port of the broker's HTTP admin listener
REGISTRY=""                         # host:port of its schema registry listener

cleanup() {
    local rc=$?
    if [ -n "$BROKER_PID" ] && kill -0 "$BROKER_PID" 2>/dev/null; then
        kill -9 "$BROKER_PID" 2>/dev/null || true
        wait "$BROKER_PID" 2>/dev/null || true
    fi
    # cluster nodes (start_cluster)
    local i
    for i in "${!CL_PID[@]}"; do
        [ -n "${CL_PID[$i]}" ] && kill -9 "${CL_PID[$i]}" 2>/dev/null || true
    done
    if [ $rc -ne 0 ]; then
        for i in "${!CL_PID[@]}"; do
            echo "--- node $i log (last 30 lines) ---"
            tail -n 30 "$TMP/node$i.log" 2>/dev/null || true
        done
    fi
    # anything else this test started (clients in the background)
    jobs -p | xargs -r kill -9 2>/dev/null || true
    # test-specific undo (e.g. unmounting), set by the test in EXTRA_CLEANUP
    if [ -n "${EXTRA_CLEANUP:-}" ]; then eval "$EXTRA_CLEANUP" || true; fi
    if [ $rc -ne 0 ] && [ -f "$BROKER_LOG" ]; then
        echo "--- broker log (last 40 lines) ---"
        tail -n 40 "$BROKER_LOG"
    fi
    if [ $rc -ne 0 ] && [ -n "${ITEST_KEEP:-}" ]; then echo "--- kept $TMP ---"; else rm -rf "$TMP"; fi
    exit $rc
}
trap cleanup EXIT

declare -a CL_PID=() CL_PORT=() CL_CPORT=() CL_REG=()
CL_VOTERS=""

fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "# $*"; }

# free_port: a port free on 127.0.0.1 now, below the kernel's ephemeral range (32768-60999
# here), so that no client connection of the test can take it before the broker binds it (a
# port the kernel hands out for bind(0) is one connect() may pick next: measured, a restarted
# node failed with "Address already in use"). Each test counts up from its own base (from its
# name) in 20000-31999 (ITEST_PORTS=LOW-HIGH confines a run to another range, e.g. to keep
# concurrent runs apart); a port something else holds is skipped.
free_port() {
    $PY - "$TMP/.ports" "$(basename "$0")" "${ITEST_PORTS:-20000-31999}" <<'PYEOF'
import os, socket, sys, zlib
state, name = sys.argv[1], sys.argv[2]
low, high = (int(x) for x in sys.argv[3].split("-"))
span = high - low + 1
try:
    n = int(open(state).read())
except (OSError, ValueError):
    n = (zlib.crc32(name.encode()) % 120) * 100
for _ in range(span):
    port = low + n % span
    n += 1
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        s.close()
    open(state, "w").write(str(n))
    print(port)
    sys.exit(0)
sys.exit(f"free_port: no free port in {low}-{high}")
PYEOF
}

# start_broker [--set k=v ...]: starts the broker on a free port (kept across restarts) with
# $DATA as its data directory; waits until it listens. Sets BROKER, BROKER_PID, and ADMIN to the
# admin listener's address (any free port; "" when a test disables it with admin.listener=), and
# REGISTRY to the schema registry's (any free port, likewise). START_WAIT_S (10) bounds the wait.
start_broker() {
    [ -n "$PORT" ] || PORT=$(free_port)
    BROKER=127.0.0.1:$PORT
    local before
    before=$(grep -c broker_started "$BROKER_LOG" 2>/dev/null || true)
    "$SP" serve --set "log.dirs=$DATA" --set "listeners=PLAINTEXT://127.0.0.1:$PORT" \
        --set group.initial.rebalance.delay.ms=0 --set admin.listener=127.0.0.1:0 \
        --set schema.registry.listener=127.0.0.1:0 "$@" >>"$BROKER_LOG" 2>&1 &
    BROKER_PID=$!
    for _ in $(seq 1 $((${START_WAIT_S:-10} * 20))); do
        if [ "$(grep -c broker_started "$BROKER_LOG" 2>/dev/null || true)" -gt "${before:-0}" ]; then
            ADMIN=$(grep broker_started "$BROKER_LOG" | tail -1 | sed -n 's/.* admin=\([^ ]*:[0-9]*\) .*/\1/p')
            REGISTRY=$(grep broker_started "$BROKER_LOG" | tail -1 |
                sed -n 's/.* schema_registry=\([^ ]*:[0-9]*\) .*/\1/p')
            return 0
        fi
        kill -0 "$BROKER_PID" 2>/dev/null || { cat "$BROKER_LOG"; fail "broker exited during startup"; }
        sleep 0.05
    done
    fail "broker did not start within ${START_WAIT_S:-10} s"
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

# ---- three-node clusters (cluster mode: controller.quorum.voters) ----

# init_cluster N: picks client and cluster ports for nodes 1..N and sets CL_VOTERS. Node i's data
# directory is $TMP/data$i and its log $TMP/node$i.log.
init_cluster() {
    local n=$1 i
    CL_VOTERS=""
    for i in $(seq 1 "$n"); do
        CL_PORT[$i]=$(free_port)
        CL_CPORT[$i]=$(free_port)
        CL_VOTERS="${CL_VOTERS:+$CL_VOTERS,}$i@127.0.0.1:${CL_CPORT[$i]}"
    done
}

# start_node I [--set k=v ...]: starts node I (init_cluster first) and waits until it listens.
# CL_REG[I] is its schema registry listener's address (any free port; "" if a test turns it off).
start_node() {
    local i=$1
    shift
    local log=$TMP/node$i.log before
    before=$(grep -c broker_started "$log" 2>/dev/null || true)
    "$SP" serve --set "node.id=$i" --set "log.dirs=$TMP/data$i" \
        --set "listeners=PLAINTEXT://127.0.0.1:${CL_PORT[$i]}" \
        --set "controller.quorum.voters=$CL_VOTERS" --set admin.listener= \
        --set schema.registry.listener=127.0.0.1:0 \
        --set group.initial.rebalance.delay.ms=0 "$@" >>"$log" 2>&1 &
    CL_PID[$i]=$!
    for _ in $(seq 1 200); do
        if [ "$(grep -c broker_started "$log" 2>/dev/null || true)" -gt "${before:-0}" ]; then
            CL_REG[$i]=$(grep broker_started "$log" | tail -1 |
                sed -n 's/.* schema_registry=\([^ ]*:[0-9]*\) .*/\1/p')
            return 0
        fi
        kill -0 "${CL_PID[$i]}" 2>/dev/null || { cat "$log"; fail "node $i exited during startup"; }
        sleep 0.05
    done
    fail "node $i did not start within 10 s"
}

# start_cluster N [--set k=v ...]: init_cluster N, starts nodes 1..N with those settings and
# waits until each has registered with the controller.
start_cluster() {
    local n=$1 i
    shift
    init_cluster "$n"
    for i in $(seq 1 "$n"); do start_node "$i" "$@"; done
    for i in $(seq 1 "$n"); do
        wait_log "$i" 'event=cluster_registered' 1 10 || fail "node $i did not register within 10 s"
    done
}

# ctl_leader: the node that logged the latest ctl_leader_elected (the metadata quorum's leader
# as the nodes' logs tell it; Metadata's controller id names the broker answering, as Kafka's
# KRaft brokers name a live broker, not the quorum leader). "" if none was elected yet.
ctl_leader() {
    grep -h 'event=ctl_leader_elected' "$TMP"/node*.log 2>/dev/null | sort | tail -1 |
        sed -n 's/.* node=\([0-9]*\) .*/\1/p'
}

# stop_node I: SIGTERM, and the node must exit 0.
stop_node() {
    local i=$1 rc=0
    kill -TERM "${CL_PID[$i]}"
    wait "${CL_PID[$i]}" || rc=$?
    CL_PID[$i]=""
    [ $rc -eq 0 ] || fail "node $i exited with $rc after SIGTERM"
}

kill9_node() {
    local i=$1
    kill -9 "${CL_PID[$i]}" 2>/dev/null || true
    wait "${CL_PID[$i]}" 2>/dev/null || true
    CL_PID[$i]=""
}

# wait_log I PATTERN COUNT SECONDS: waits until node I's log has COUNT lines matching PATTERN.
wait_log() {
    local i=$1 pat=$2 count=$3 secs=$4 n
    local end=$(( $(date +%s%N) / 1000000 + secs * 1000 ))
    while :; do
        n=$(grep -c -- "$pat" "$TMP/node$i.log" 2>/dev/null || true)
        [ "${n:-0}" -ge "$count" ] && return 0
        [ $(( $(date +%s%N) / 1000000 )) -lt $end ] || return 1
        sleep 0.05
    done
}

# ---- TLS (openssl CLI) ----

# make_pki DIR: throwaway keys and certificates, made fresh for each test:
#   ca.pem                     the CA the broker trusts (ssl.truststore.location)
#   keystore.pem               the broker's key + certificate (127.0.0.1, localhost; serial
#                              0x1001) + the CA, as a Kafka PEM keystore
#   keystore2.pem              another broker certificate from the same CA (serial 0x1002)
#   client.pem, client.key     CN=alice,OU=eng,O=acme (serial 0x2001)
#   evil-ca.pem, evil.pem/.key a CA nobody trusts, and a client certificate from it
#   keystore-enc.pem           keystore.pem's key encrypted with the password "s3cret"
make_pki() {
    local d=$1
    mkdir -p "$d"
    (
        cd "$d"
        ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
        openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.pem -days 2 -subj "/CN=StreamPulse Test CA"
        openssl req -x509 "${ec[@]}" -keyout evil-ca.key -out evil-ca.pem -days 2 -subj "/CN=Evil CA"
        printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n' >srv.ext
        printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n' >cli.ext
        sign() { # NAME SUBJECT SERIAL CA EXT
            openssl req "${ec[@]}" -keyout "$1.key" -out "$1.csr" -subj "$2"
            openssl x509 -req -in "$1.csr" -CA "$4.pem" -CAkey "$4.key" -set_serial "$3" \
                -days 2 -extfile "$5" -out "$1.pem"
        }
        sign server /CN=localhost 0x1001 ca srv.ext
        sign server2 /CN=localhost 0x1002 ca srv.ext
        sign client "/O=acme/OU=eng/CN=alice" 0x2001 ca cli.ext
        sign evil "/CN=mallory" 0x6666 evil-ca cli.ext
        cat server.key server.pem ca.pem >keystore.pem
        cat server2.key server2.pem ca.pem >keystore2.pem
        openssl pkcs8 -topk8 -v2 aes-256-cbc -passout pass:s3cret -in server.key -out server-enc.key
        cat server-enc.key server.pem ca.pem >keystore-enc.pem
    ) >"$d/openssl.log" 2>&1 || { cat "$d/openssl.log"; fail "make_pki: openssl failed"; }
}

# cert_serial HOST:PORT CAFILE: the serial of the certificate a new TLS connection is shown.
cert_serial() {
    openssl s_client -connect "$1" -CAfile "$2" </dev/null 2>/dev/null |
        openssl x509 -noout -serial 2>/dev/null | sed 's/^serial=//'
}

# spawn NAME CMD...: runs CMD (a command or a function of the test) in the background, its
# output in $TMP/spawn.NAME.out, for independent client runs to overlap. spawn_wait waits for
# every one spawned, shows their output, and fails naming those that failed (with the tail of
# each one's output). CMD's own `fail` ends only CMD.
declare -a SPAWN_PID=() SPAWN_NAME=()
spawn() {
    local name=$1
    shift
    (trap - EXIT; "$@") >"$TMP/spawn.$name.out" 2>&1 &
    SPAWN_PID+=($!)
    SPAWN_NAME+=("$name")
}
spawn_wait() {
    local i rc failed=()
    for i in "${!SPAWN_PID[@]}"; do
        rc=0
        wait "${SPAWN_PID[$i]}" || rc=$?
        [ $rc -eq 0 ] || failed+=("${SPAWN_NAME[$i]}")
        grep -v '^FAIL: ' "$TMP/spawn.${SPAWN_NAME[$i]}.out" | tail -n 5 || true
    done
    SPAWN_PID=()
    SPAWN_NAME=()
    [ ${#failed[@]} -eq 0 ] && return 0
    for i in "${failed[@]}"; do
        echo "--- $i (last lines) ---"
        tail -n 20 "$TMP/spawn.$i.out"
    done
    fail "failed: ${failed[*]}"
}

# poll_until CMD... : runs CMD every 50 ms until it succeeds, for at most WAIT_S (10) seconds.
poll_until() {
    local end=$(( $(date +%s%N) / 1000000 + ${WAIT_S:-10} * 1000 ))
    until "$@"; do
        [ $(( $(date +%s%N) / 1000000 )) -lt $end ] || return 1
        sleep 0.05
    done
}

# create_topic_retrying BROKER NAME [topic create options...]: `streampulse topic create`,
# asked again (10 s at most) while the metadata quorum has no controller yet (a voter was just
# lost); the last error is in $TMP/create.out.
create_topic_retrying() {
    local broker=$1 name=$2
    shift 2
    for _ in $(seq 1 100); do
        "$SP" topic create "$name" "$@" -b "$broker" --timeout 2 >"$TMP/create.out" 2>&1 && return 0
        sleep 0.1
    done
    return 1
}

# start_first_node N: init_cluster N with no controller.quorum.voters, then node 1 alone (the
# only voter of a quorum of its own) at a fixed cluster.listener, registered with itself; sets
# B1..BN to the nodes' client addresses. Nodes 2..N join later by bootstrap.
start_first_node() {
    local n=$1 i
    init_cluster "$n"
    CL_VOTERS=""
    start_node 1 --set "cluster.listener=127.0.0.1:${CL_CPORT[1]}"
    wait_log 1 'event=cluster_registered' 1 10 || fail "node 1 did not register with itself"
    for i in $(seq 1 "$n"); do printf -v "B$i" '%s' "127.0.0.1:${CL_PORT[$i]}"; done
}
