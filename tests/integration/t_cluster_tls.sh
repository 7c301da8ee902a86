#!/usr/bin/env bash
# cluster.ssl.*: TLS with client certificates (mTLS) on the inter-broker listener and on every
# inter-broker connection, together with cluster.secret.file.
#  - startup refuses half a configuration (keystore or trust store alone, a password without a
#    keystore), a keystore without a key, an encrypted key without or with a wrong password;
#  - a wiretap: every voter's entry in controller.quorum.voters is a recording relay
#    (tap_proxy.py), so every Raft, heartbeat and controller connection between the voters
#    passes through it. A control cluster without TLS shows the produced records' marker on the
#    wire and plaintext frames; the TLS cluster shows only TLS records from the first byte of
#    every connection to its last, and the marker nowhere, after the same produce;
#  - three TLS nodes (one with an encrypted key) replicate a topic with replication factor 3
#    (kcat, acks=all, read back), and a leader killed with SIGKILL still fails over (an
#    idempotent acks=all producer gets every record in, bounded by its message timeout) and
#    comes back over TLS;
#  - refusals, each logged and counted (streampulse_transport_tls_failures_total): a node
#    without cluster.ssl.* (plaintext) cannot bootstrap; a node whose certificate comes from
#    another CA is refused at the handshake (the listener logs the verify failure); a node that
#    trusts another CA refuses the cluster's certificate; a plaintext process speaking the
#    transport's frames (fake_peer.py --tls-listener: HELLO, AUTH, VOTE, APPEND,
#    QUORUM_DESCRIBE) gets no frame back and every Raft hard state and the metadata log are
#    unchanged;
#  - a fourth node bootstraps over TLS (through the tap) and registers; on SIGHUP it takes a
#    new certificate (its listener shows it) and, restarted with it, registers again.
# timeout: 300
source "$(dirname "$0")/lib.sh"
PKI=$TMP/pki
make_pki "$PKI"
SECRET=$TMP/cluster.secret
openssl rand -hex 32 >"$SECRET"
chmod 600 "$SECRET"
TLS=(--set "cluster.ssl.keystore.location=$PKI/keystore.pem"
     --set "cluster.ssl.truststore.location=$PKI/ca.pem")
TLS_ENC=(--set "cluster.ssl.keystore.location=$PKI/keystore-enc.pem"
         --set "cluster.ssl.key.password=s3cret"
         --set "cluster.ssl.truststore.location=$PKI/ca.pem")
TAP_PY=$ROOT/tests/integration/tap_proxy.py

# refused WHAT PATTERN ARGS...: serve exits at startup with an error that matches PATTERN
refused() {
    local what=$1 pat=$2 rc=0
    shift 2
    rm -rf "$TMP/bad"
    timeout 20 "$SP" serve --set "log.dirs=$TMP/bad" --set admin.listener= \
        --set listeners=PLAINTEXT://127.0.0.1:0 "$@" >"$TMP/bad.out" 2>&1 || rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "$what: the broker started (rc $rc)"
    grep -q -- "$pat" "$TMP/bad.out" || fail "$what: $(cat "$TMP/bad.out")"
}

note "config: half a configuration, a keystore without a key, a wrong key password"
refused "keystore alone" "cluster.ssl.keystore.location is set but cluster.ssl.truststore.location is not" \
    --set "cluster.ssl.keystore.location=$PKI/keystore.pem"
refused "trust store alone" "cluster.ssl.truststore.location is set but cluster.ssl.keystore.location is not" \
    --set "cluster.ssl.truststore.location=$PKI/ca.pem"
refused "password alone" "cluster.ssl.key.password is set but cluster.ssl.keystore.location is not" \
    --set "cluster.ssl.key.password=x"
refused "no key in the keystore" "cluster.ssl.keystore.location $PKI/ca.pem: cannot read the private key" \
    --set "cluster.ssl.keystore.location=$PKI/ca.pem" --set "cluster.ssl.truststore.location=$PKI/ca.pem"
refused "encrypted key, no password" "set cluster.ssl.key.password" \
    --set "cluster.ssl.keystore.location=$PKI/keystore-enc.pem" \
    --set "cluster.ssl.truststore.location=$PKI/ca.pem"
refused "encrypted key, wrong password" "is cluster.ssl.key.password right" \
    --set "cluster.ssl.keystore.location=$PKI/keystore-enc.pem" --set cluster.ssl.key.password=nope \
    --set "cluster.ssl.truststore.location=$PKI/ca.pem"
refused "no trust store file" "cluster.ssl.truststore.location $TMP/nothing.pem" \
    --set "cluster.ssl.keystore.location=$PKI/keystore.pem" \
    --set "cluster.ssl.truststore.location=$TMP/nothing.pem"

declare -a TAP=()
TAP_PID=""
# tapped_cluster DIR ARGS_OF_NODE_1 -- ARGS_OF_NODE_2 -- ARGS_OF_NODE_3: three voters whose
# voter entries are taps recording into DIR; each listens on its own cluster.listener
tapped_cluster() {
    local dir=$1 i
    shift
    init_cluster 3
    CL_VOTERS=""
    for i in 1 2 3; do
        TAP[$i]=$(free_port)
        CL_VOTERS="${CL_VOTERS:+$CL_VOTERS,}$i@127.0.0.1:${TAP[$i]}"
    done
    $PY "$TAP_PY" relay "$dir" "${TAP[1]}:${CL_CPORT[1]}" "${TAP[2]}:${CL_CPORT[2]}" \
        "${TAP[3]}:${CL_CPORT[3]}" >"$TMP/tap.out" 2>&1 &
    TAP_PID=$!
    WAIT_S=10 poll_until grep -q ready "$TMP/tap.out" || fail "the tap did not start: $(cat "$TMP/tap.out")"
    for i in 1 2 3; do
        local args=()
        while [ $# -gt 0 ] && [ "$1" != "--" ]; do args+=("$1"); shift; done
        [ $# -gt 0 ] && shift
        start_node "$i" --set "cluster.listener=127.0.0.1:${CL_CPORT[$i]}" "${args[@]}"
    done
    for i in 1 2 3; do
        wait_log "$i" 'event=cluster_registered' 1 15 || fail "node $i did not register within 15 s"
    done
    BOOT="127.0.0.1:${CL_PORT[1]},127.0.0.1:${CL_PORT[2]},127.0.0.1:${CL_PORT[3]}"
}

MARK=ibtls-$(openssl rand -hex 8)
# produce_marked TOPIC FIRST LAST: records "$MARK-<n>", acks=all, uncompressed
produce_marked() {
    seq "$2" "$3" | sed "s/^/$MARK-/" |
        kcat -P -b "$BOOT" -t "$1" -X acks=all -z none 2>"$TMP/kcat.err" || fail "produce: $(cat "$TMP/kcat.err")"
}
scan() { $PY "$TAP_PY" scan "$1" "$MARK"; }
field() { sed -n "s/.*\b$2=\([0-9]*\).*/\1/p" <<<"$1"; }

note "control: a cluster without TLS, through the taps: the marker is on the wire"
tapped_cluster "$TMP/tap-plain" -- --
create_topic_retrying "$BOOT" orders --partitions 1 --replication-factor 3 || fail "create: $(cat "$TMP/create.out")"
produce_marked orders 1 2000
[ "$(kcat -C -b "$BOOT" -t orders -e -q | grep -c "^$MARK-")" = 2000 ] || fail "control: did not read back 2000 records"
plain=$(scan "$TMP/tap-plain")
note "plaintext wire: $plain"
[ "$(field "$plain" marker_hits)" -ge 2000 ] || fail "control: the tap did not see the records in clear ($plain)"
[ "$(field "$plain" frame_streams)" -ge 6 ] && [ "$(field "$plain" tls_streams)" = 0 ] ||
    fail "control: expected plaintext frames on the wire ($plain)"
for i in 1 2 3; do stop_node "$i"; done
kill "$TAP_PID"
wait "$TAP_PID" 2>/dev/null || true
for i in 1 2 3; do mv "$TMP/node$i.log" "$TMP/plain-node$i.log"; rm -rf "$TMP/data$i"; done

note "three TLS nodes (and the secret), through the taps: they form a cluster and replicate"
# node 1 also serves /metrics (its later --set admin.listener wins over start_node's)
tapped_cluster "$TMP/tap-tls" "${TLS[@]}" --set "cluster.secret.file=$SECRET" --set admin.listener=127.0.0.1:0 \
    -- "${TLS[@]}" --set "cluster.secret.file=$SECRET" -- "${TLS_ENC[@]}" --set "cluster.secret.file=$SECRET"
for i in 1 2 3; do
    grep -q 'event=tls_loaded listener=cluster role=server client_auth=required' "$TMP/node$i.log" ||
        fail "node $i: no cluster TLS server context"
    wait_log "$i" 'event=tls_handshake_done .*listener=cluster .*version=TLSv1.[23]' 2 10 ||
        fail "node $i: fewer than 2 inbound TLS handshakes"
    wait_log "$i" 'event=raft_peer_connected' 2 10 || fail "node $i: not connected to both peers"
done
create_topic_retrying "$BOOT" orders --partitions 1 --replication-factor 3 || fail "create: $(cat "$TMP/create.out")"
produce_marked orders 1 2000
[ "$(kcat -C -b "$BOOT" -t orders -e -q | grep -c "^$MARK-")" = 2000 ] || fail "did not read back 2000 records"
tls=$(scan "$TMP/tap-tls")
note "TLS wire: $tls"
[ "$(field "$tls" marker_hits)" = 0 ] || fail "the records' marker is on the wire in clear ($tls)"
[ "$(field "$tls" frame_streams)" = 0 ] && [ "$(field "$tls" other_streams)" = 0 ] ||
    fail "a connection between the nodes is not TLS from its first byte ($tls)"
[ "$(field "$tls" tls_streams)" -ge 12 ] || fail "fewer TLS streams than 6 connections both ways ($tls)"
[ "$(field "$tls" bytes)" -ge $(( $(field "$plain" bytes) / 2 )) ] ||
    fail "the tap saw too few bytes to have carried the records ($tls, plaintext: $plain)"

ADMIN1=$(grep broker_started "$TMP/node1.log" | tail -1 | sed -n 's/.* admin=\([^ ]*:[0-9]*\) .*/\1/p')
tls_fail_in() {
    curl -sf "http://$ADMIN1/metrics" |
        sed -n 's/^streampulse_transport_tls_failures_total{direction="inbound"} \([0-9]*\)$/\1/p'
}
[ "$(tls_fail_in)" = 0 ] || fail "node 1 counts inbound TLS failures before any ($(tls_fail_in))"

note "refusals: a plaintext node, a node with another CA's certificate, one trusting another CA"
P5=$(free_port)
C5=$(free_port)
join5() { # BOOTSTRAP_PORT ARGS...: a fifth node that tries to bootstrap (1.5 s)
    local port=$1
    shift
    rm -rf "$TMP/data5"
    timeout 20 "$SP" serve --set node.id=5 --set "log.dirs=$TMP/data5" \
        --set "listeners=PLAINTEXT://127.0.0.1:$P5" --set "cluster.listener=127.0.0.1:$C5" \
        --set admin.listener= --set "controller.quorum.bootstrap.servers=127.0.0.1:$port" \
        --set controller.quorum.bootstrap.timeout.ms=1500 --set "cluster.secret.file=$SECRET" \
        "$@" >"$TMP/node5.out" 2>&1
}
if join5 "${CL_CPORT[1]}"; then fail "a plaintext node joined the TLS cluster"; fi
grep -q 'closed the connection without an answer.*requires TLS' "$TMP/node5.out" ||
    fail "plaintext node: $(tail -3 "$TMP/node5.out")"
wait_log 1 'event=tls_handshake_failed listener=cluster ' 1 5 || fail "node 1 did not log the plaintext node's refusal"
cat "$PKI/evil.key" "$PKI/evil.pem" "$PKI/evil-ca.pem" >"$PKI/evil-keystore.pem"
if join5 "${CL_CPORT[2]}" --set "cluster.ssl.keystore.location=$PKI/evil-keystore.pem" \
    --set "cluster.ssl.truststore.location=$PKI/ca.pem"; then
    fail "a node with another CA's certificate joined"
fi
grep -q 'TLS session refused: .*alert' "$TMP/node5.out" || fail "another CA's certificate: $(tail -3 "$TMP/node5.out")"
wait_log 2 'event=tls_handshake_failed listener=cluster .*reason="certificate verify failed: [^"]*"' 1 5 ||
    fail "node 2 did not log the verify failure of another CA's certificate"
if join5 "${CL_CPORT[3]}" --set "cluster.ssl.keystore.location=$PKI/evil-keystore.pem" \
    --set "cluster.ssl.truststore.location=$PKI/evil-ca.pem"; then
    fail "a node trusting another CA joined"
fi
grep -q 'its certificate is not trusted: certificate verify failed' "$TMP/node5.out" ||
    fail "trusting another CA: $(tail -3 "$TMP/node5.out")"
wait_log 3 'event=tls_handshake_failed listener=cluster .*reason=".*unknown ca"' 1 5 ||
    fail "node 3 did not log that the peer refused its certificate"
n1=$(tls_fail_in)
[ "${n1:-0}" -ge 1 ] || fail "node 1 did not count the plaintext node's refusals ($n1)"

note "a plaintext process speaking the transport's frames gets nothing, and changes nothing"
cid=$(grep -h -o 'quorum=[A-Za-z0-9_-]*' "$TMP/node1.log" | head -1 | cut -d= -f2)
[ -n "$cid" ] || fail "no cluster id"
state() { # every Raft hard state and the metadata log, as bytes
    local i
    for i in 1 2 3; do
        cat "$TMP/data$i"/*/raft-hard-state "$TMP/data$i/__cluster_metadata-0/"*.log | md5sum
    done
}
before=$(state)
sleep 1.1 # the listener logs one handshake failure a second
targets=()
for i in 1 2 3; do targets+=("$i:127.0.0.1:${CL_CPORT[$i]}"); done
$PY "$ROOT/tests/integration/fake_peer.py" --tls-listener "$cid" 7 "${targets[@]}" >"$TMP/fake.out" 2>&1 ||
    fail "fake peer: $(cat "$TMP/fake.out")"
[ "$(grep -c 'closed at the TLS handshake' "$TMP/fake.out")" = 15 ] || fail "fake peer: $(cat "$TMP/fake.out")"
n2=$(tls_fail_in)
[ $((n2 - n1)) -ge 5 ] || fail "node 1 counted $((n2 - n1)) of the fake peer's 5 refusals"
for i in 1 2 3; do
    wait_log "$i" 'event=tls_handshake_failed listener=cluster ' 2 5 || fail "node $i did not log the fake peer's refusal"
done
produce_marked orders 2001 2010
[ "$(kcat -C -b "$BOOT" -t orders -e -q | grep -c "^$MARK-")" = 2010 ] || fail "did not read back 2010 records"
after=$(state)
[ "$before" = "$after" ] || fail "a node's Raft state changed after the fake peer: $before / $after"

note "kill -9 of the partition's leader: a new leader takes acks=all writes, the node rejoins over TLS"
lead=$(kcat -L -b "$BOOT" -t orders 2>/dev/null | sed -n 's/.*partition 0, leader \([0-9]*\),.*/\1/p' | head -1)
[ -n "$lead" ] || fail "no leader for orders"
surv=""
for i in 1 2 3; do [ "$i" = "$lead" ] || surv="${surv:+$surv,}127.0.0.1:${CL_PORT[$i]}"; done
kill9_node "$lead"
t0=$(date +%s%N)
$PY - "$surv" "$MARK" <<'PYEOF' || fail "no new leader took the acks=all writes within the producer's 20 s"
import sys
from confluent_kafka import Producer
errors = []
p = Producer({"bootstrap.servers": sys.argv[1], "acks": "all", "enable.idempotence": True,
              "message.timeout.ms": 20000, "compression.type": "none", "log_level": 2})
for n in range(2011, 2111):
    p.produce("orders", value=("%s-%d" % (sys.argv[2], n)).encode(), partition=0,
              on_delivery=lambda err, msg: errors.append(err) if err else None)
left = p.flush(25)
assert left == 0 and not errors, (left, errors[:3])
PYEOF
note "failover: 100 acks=all records in after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
[ "$(kcat -C -b "$surv" -t orders -e -q | grep -c "^$MARK-")" = 2110 ] || fail "did not read back 2110 records after the failover"
before=$(grep -c 'event=raft_peer_connected' "$TMP/node$lead.log")
case $lead in
    1) start_node 1 --set "cluster.listener=127.0.0.1:${CL_CPORT[1]}" "${TLS[@]}" --set "cluster.secret.file=$SECRET" ;;
    2) start_node 2 --set "cluster.listener=127.0.0.1:${CL_CPORT[2]}" "${TLS[@]}" --set "cluster.secret.file=$SECRET" ;;
    3) start_node 3 --set "cluster.listener=127.0.0.1:${CL_CPORT[3]}" "${TLS_ENC[@]}" --set "cluster.secret.file=$SECRET" ;;
esac
wait_log "$lead" 'event=raft_peer_connected' $((before + 2)) 15 || fail "node $lead did not reconnect to both peers over TLS"

note "a fourth node bootstraps over TLS (through node 1's tap) and registers"
CL_PORT[4]=$(free_port)
CL_CPORT[4]=$(free_port)
cp "$PKI/keystore.pem" "$TMP/node4-keystore.pem"
"$SP" serve --set node.id=4 --set "log.dirs=$TMP/data4" --set "listeners=PLAINTEXT://127.0.0.1:${CL_PORT[4]}" \
    --set "cluster.listener=127.0.0.1:${CL_CPORT[4]}" --set admin.listener= \
    --set "controller.quorum.bootstrap.servers=127.0.0.1:${TAP[1]}" \
    --set "cluster.ssl.keystore.location=$TMP/node4-keystore.pem" \
    --set "cluster.ssl.truststore.location=$PKI/ca.pem" \
    --set "cluster.secret.file=$SECRET" --set group.initial.rebalance.delay.ms=0 >>"$TMP/node4.log" 2>&1 &
CL_PID[4]=$!
wait_log 4 'event=cluster_bootstrapped' 1 15 || fail "node 4 did not bootstrap: $(tail -3 "$TMP/node4.log")"
wait_log 4 'event=cluster_registered' 1 15 || fail "node 4 did not register"
# registered means the controller committed node 4; node 4's own image takes it a moment later
sees_four() { [ "$(kcat -L -b "127.0.0.1:${CL_PORT[4]}" 2>/dev/null | grep -c '^  broker ')" = 4 ]; }
WAIT_S=10 poll_until sees_four || fail "node 4 does not see 4 brokers within 10 s"

note "SIGHUP: node 4's cluster listener takes a new certificate, and the node stays in the cluster"
[ "$(cert_serial "127.0.0.1:${CL_CPORT[4]}" "$PKI/ca.pem")" = 1001 ] || fail "node 4 does not show certificate 0x1001"
cp "$PKI/keystore2.pem" "$TMP/node4-keystore.pem"
kill -HUP "${CL_PID[4]}"
wait_log 4 'event=tls_reloaded listener=cluster why=sighup .*serial=1002' 1 5 || fail "node 4 did not reload its server context"
wait_log 4 'event=tls_reloaded listener=cluster-client why=sighup .*serial=1002' 1 5 || fail "node 4 did not reload its client context"
[ "$(cert_serial "127.0.0.1:${CL_CPORT[4]}" "$PKI/ca.pem")" = 1002 ] || fail "node 4 still shows the old certificate"
kill9_node 4 # its peers reconnect to it when it is back: with the new certificate
"$SP" serve --set node.id=4 --set "log.dirs=$TMP/data4" --set "listeners=PLAINTEXT://127.0.0.1:${CL_PORT[4]}" \
    --set "cluster.listener=127.0.0.1:${CL_CPORT[4]}" --set admin.listener= \
    --set "cluster.ssl.keystore.location=$TMP/node4-keystore.pem" \
    --set "cluster.ssl.truststore.location=$PKI/ca.pem" \
    --set "cluster.secret.file=$SECRET" --set group.initial.rebalance.delay.ms=0 >>"$TMP/node4.log" 2>&1 &
CL_PID[4]=$!
wait_log 4 'event=cluster_registered' 2 15 || fail "node 4 did not register again with the new certificate"
tls=$(scan "$TMP/tap-tls")
note "TLS wire at the end: $tls"
[ "$(field "$tls" marker_hits)" = 0 ] && [ "$(field "$tls" frame_streams)" = 0 ] &&
    [ "$(field "$tls" other_streams)" = 0 ] || fail "plaintext on the wire ($tls)"
for i in 4 1 2 3; do stop_node "$i"; done
kill "$TAP_PID"
wait "$TAP_PID" 2>/dev/null || true
