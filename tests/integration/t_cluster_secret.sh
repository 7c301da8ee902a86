#!/usr/bin/env bash
# cluster.secret.file: three nodes with the same secret form a cluster and replicate. A process
# that knows the cluster id (every client reads it from Metadata) but not the secret cannot
# join, vote or append (fake_peer.py: a HELLO without proof, a guessed proof, a VOTE at a far
# higher term and an APPEND in place of the proof, a QUORUM_DESCRIBE): each refused with
# RPC_ERR_AUTH, and every node's Raft hard state (term, vote) and metadata log are unchanged
# afterwards. A fourth node without the secret, or with another one, cannot bootstrap into
# the cluster and says why; with it, it joins. A secret file others may read, or a short one,
# is refused at startup.
# timeout: 120
source "$(dirname "$0")/lib.sh"
SECRET=$TMP/cluster.secret
openssl rand -hex 32 >"$SECRET"
chmod 600 "$SECRET"

note "config: a world-readable or short secret file is refused"
cp "$SECRET" "$TMP/open.secret"
chmod 644 "$TMP/open.secret"
if "$SP" serve --set "log.dirs=$TMP/x" --set "cluster.secret.file=$TMP/open.secret" \
    --set admin.listener= --set listeners=PLAINTEXT://127.0.0.1:0 >"$TMP/bad.out" 2>&1; then
    fail "a world-readable secret was taken"
fi
grep -q "chmod 600" "$TMP/bad.out" || fail "$(cat "$TMP/bad.out")"
printf 'short' >"$TMP/short.secret"
chmod 600 "$TMP/short.secret"
if "$SP" serve --set "log.dirs=$TMP/y" --set "cluster.secret.file=$TMP/short.secret" \
    --set admin.listener= --set listeners=PLAINTEXT://127.0.0.1:0 >"$TMP/bad.out" 2>&1; then
    fail "a 5-byte secret was taken"
fi
grep -q "holds 5 bytes" "$TMP/bad.out" || fail "$(cat "$TMP/bad.out")"

note "three nodes with the secret: a cluster that replicates"
start_cluster 3 --set "cluster.secret.file=$SECRET"
BOOT="127.0.0.1:${CL_PORT[1]},127.0.0.1:${CL_PORT[2]},127.0.0.1:${CL_PORT[3]}"
create_topic_retrying "$BOOT" orders --partitions 1 --replication-factor 3
seq 1 100 | kcat -P -b "$BOOT" -t orders -X acks=all 2>"$TMP/kcat.err" || fail "produce: $(cat "$TMP/kcat.err")"
[ "$(kcat -C -b "$BOOT" -t orders -e -q | wc -l)" = 100 ] || fail "did not read back 100 records"
cid=$(kcat -L -b "$BOOT" -J 2>/dev/null | $PY -c 'import json,sys; print(json.load(sys.stdin)["cluster_id"] or "")' 2>/dev/null || true)
[ -n "$cid" ] || cid=$(grep -h -o 'quorum=[A-Za-z0-9_-]*' "$TMP/node1.log" | head -1 | cut -d= -f2)
[ -n "$cid" ] || fail "no cluster id"
note "cluster id $cid (Metadata gives it to every client)"

state() { # every Raft hard state and the metadata log, as bytes
    local i
    for i in 1 2 3; do
        cat "$TMP/data$i"/*/raft-hard-state "$TMP/data$i/__cluster_metadata-0/"*.log | md5sum
    done
}
before=$(state)
targets=()
for i in 1 2 3; do targets+=("$i:127.0.0.1:${CL_CPORT[$i]}"); done
$PY "$ROOT/tests/integration/fake_peer.py" "$cid" 7 "${targets[@]}" || fail "a fake peer was not refused"
# every node logged each refusal
for i in 1 2 3; do
    wait_log "$i" 'event=raft_peer_refused .*code=5' 5 5 || fail "node $i did not log 5 refusals"
done
seq 101 110 | kcat -P -b "$BOOT" -t orders -X acks=all 2>"$TMP/kcat.err" || fail "produce after: $(cat "$TMP/kcat.err")"
[ "$(kcat -C -b "$BOOT" -t orders -e -q | wc -l)" = 110 ] || fail "did not read back 110 records"
after=$(state)
# the produce after the attack appended to orders only: the metadata log and every hard state
# (terms and votes of every group) are as they were
[ "$before" = "$after" ] || fail "a node's Raft state changed after the fake peer: $before / $after"
for i in 1 2 3; do
    n=$(grep -c 'event=ctl_leader_elected' "$TMP/node$i.log" || true)
    [ "${n:-0}" -le 1 ] || fail "node $i saw a new metadata election"
done

note "a fourth node without the secret, or with another, cannot bootstrap; with it, it joins"
P4=$(free_port)
C4=$(free_port)
join4() {
    "$SP" serve --set node.id=4 --set "log.dirs=$TMP/data4" --set "listeners=PLAINTEXT://127.0.0.1:$P4" \
        --set "cluster.listener=127.0.0.1:$C4" --set admin.listener= \
        --set "controller.quorum.bootstrap.servers=127.0.0.1:${CL_CPORT[1]}" \
        --set controller.quorum.bootstrap.timeout.ms=1500 "$@" >>"$TMP/node4.log" 2>&1
}
if join4; then fail "node 4 joined without the secret"; fi
grep -q 'requires the inter-broker secret' "$TMP/node4.log" || fail "node 4: $(tail -3 "$TMP/node4.log")"
openssl rand -hex 32 >"$TMP/other.secret"
chmod 600 "$TMP/other.secret"
rm -rf "$TMP/data4"
if join4 --set "cluster.secret.file=$TMP/other.secret"; then fail "node 4 joined with another secret"; fi
grep -q 'without a good proof' "$TMP/node4.log" || fail "node 4: $(tail -3 "$TMP/node4.log")"
rm -rf "$TMP/data4"
CL_PORT[4]=$P4
CL_CPORT[4]=$C4
"$SP" serve --set node.id=4 --set "log.dirs=$TMP/data4" --set "listeners=PLAINTEXT://127.0.0.1:$P4" \
    --set "cluster.listener=127.0.0.1:$C4" --set admin.listener= \
    --set "controller.quorum.bootstrap.servers=127.0.0.1:${CL_CPORT[1]}" \
    --set "cluster.secret.file=$SECRET" --set group.initial.rebalance.delay.ms=0 >>"$TMP/node4.log" 2>&1 &
CL_PID[4]=$!
wait_log 4 'event=cluster_registered' 1 15 || fail "node 4 did not register with the secret"
[ "$(kcat -L -b "127.0.0.1:$P4" 2>/dev/null | grep -c '^  broker ')" = 4 ] || fail "node 4 does not see 4 brokers"
for i in 4 1 2 3; do stop_node "$i"; done
