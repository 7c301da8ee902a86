#!/usr/bin/env bash
# streampulse acl add|list|remove (kafka-acls' semantics and output). Bad command lines: one
# line on stderr and exit 2, before any connection (-b points where nothing listens). A broker
# without an authorizer: SECURITY_DISABLED said once, exit 1, over PLAINTEXT (raw requests) and
# over SASL_PLAINTEXT (librdkafka, whose DescribeAcls cannot report it: a note instead). With
# the authorizer: add/list/remove round trips asserted on the exact output (LITERAL, PREFIXED,
# "*", allow and deny, hosts, --producer/--idempotent/--consumer, the any and match filters,
# --principal), remove's confirmation on a terminal (script(1)) and its refusal without one;
# over SASL_PLAINTEXT as a super user through librdkafka, with the bindings made enforced on
# Produce (a PREFIXED allow, no binding, a LITERAL deny), and CLUSTER_AUTHORIZATION_FAILED for
# a principal that lacks the cluster permissions.
# timeout: 180
source "$(dirname "$0")/lib.sh"

AUTHZ=(--set authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer)

# run SUB ARGS...: streampulse acl SUB, the connection options ${CONN[@]}, ARGS, with stdin not
# a terminal; stdout in $TMP/out, stderr in $TMP/err, exit status in RC.
CONN=(-b 127.0.0.1:1 --timeout 2) # nothing listens: bad command lines must not get that far
run() {
    local sub=$1
    shift
    LAST="acl $sub ${CONN[*]} $*"
    RC=0
    "$SP" acl "$sub" "${CONN[@]}" "$@" </dev/null >"$TMP/out" 2>"$TMP/err" || RC=$?
}
# sasl CMD ARGS...: CMD (run, ok) over SASL_PLAINTEXT as the super user admin (librdkafka).
sasl() {
    local saved=("${CONN[@]}")
    CONN=("${S[@]}")
    "$@"
    CONN=("${saved[@]}")
}
# ok ARGS...: run, which must exit 0 with nothing on stderr.
ok() {
    run "$@"
    [ $RC -eq 0 ] || fail "$LAST: exit $RC: $(cat "$TMP/err")"
    [ ! -s "$TMP/err" ] || fail "$LAST: stderr: $(cat "$TMP/err")"
}
# same FILE: FILE holds exactly stdin's text, "\t" in it read as a tab.
same() {
    sed 's/\\t/\t/g' >"$TMP/expected"
    diff -u "$TMP/expected" "$1" >&2 || fail "$LAST: unexpected output (diff above)"
}
# usage MESSAGE ARGS...: exit 2, MESSAGE on the first line of stderr, nothing on stdout.
usage() {
    local msg=$1
    shift
    run "$@"
    [ $RC -eq 2 ] || fail "$LAST: exit $RC, not 2: $(cat "$TMP/err")"
    head -1 "$TMP/err" | grep -qF -- "$msg" || fail "$LAST: no '$msg' in: $(cat "$TMP/err")"
    [ ! -s "$TMP/out" ] || fail "$LAST: printed: $(cat "$TMP/out")"
}
# disabled SUB: stderr is exactly the one SECURITY_DISABLED line of sub-command SUB, exit 1.
disabled() {
    [ $RC -eq 1 ] || fail "$LAST: exit $RC, not 1"
    [ "$(cat "$TMP/err")" = "streampulse acl $1: the broker has no authorizer (set authorizer.class.name): SECURITY_DISABLED" ] ||
        fail "$LAST: stderr: $(cat "$TMP/err")"
}

note "help and bad command lines"
"$SP" acl --help | grep -q '^Usage: streampulse acl add' || fail "acl --help"
"$SP" help acl | grep -q 'kafka-acls' || fail "streampulse help acl"
"$SP" nosuchcommand 2>"$TMP/err" || true
grep -q '^  acl  ' "$TMP/err" || fail "acl not in the command list"
rc=0; "$SP" acl >/dev/null 2>"$TMP/err" || rc=$?
[ $rc -eq 2 ] && grep -q '^Usage: streampulse acl' "$TMP/err" || fail "bare acl: exit $rc"
P=(--allow-principal User:a)
usage "unknown sub-command 'grant' (add, list, remove)" grant
usage "unknown option: '--bogus'" add "${P[@]}" --operation Read --topic t --bogus
usage "missing value: '--topic'" add "${P[@]}" --operation Read --topic
usage "unexpected argument 'orders'" list orders
usage "-X needs KEY=VALUE" list -X nonsense
usage "name a resource: --topic, --group, --cluster, --transactional-id, --registry-subject or --registry-global" add "${P[@]}" --operation Read
usage "name a resource" remove --force
usage "give --allow-principal or --deny-principal" add --operation Read --topic t
usage "give --operation, --producer or --consumer" add "${P[@]}" --topic t
usage "--allow-principal: 'alice' is not a principal (User:NAME" add --allow-principal alice --operation Read --topic t
usage "--deny-principal: 'Group:x' is not a principal" add --deny-principal Group:x --operation Read --topic t
usage "--principal: 'bob' is not a principal" list --principal bob
usage "--allow-host: 'example.com' is not * or an IP address" add "${P[@]}" --allow-host example.com --operation Read --topic t
usage "--deny-host needs --deny-principal" add "${P[@]}" --deny-host 10.0.0.1 --operation Read --topic t
usage "--allow-host needs --allow-principal" remove --allow-host 10.0.0.1 --topic t --force
usage "--operation: 'Frob' is not one of All, Read, Write" add "${P[@]}" --operation Frob --topic t
usage "--operation: 'any' is not one of" add "${P[@]}" --operation any --topic t
usage "--operation Write is not valid for --group g (a group takes All, Read, Delete, Describe, DescribeConfigs, AlterConfigs)" \
    add "${P[@]}" --operation read --operation Write --group g
usage "--operation IdempotentWrite is not valid for --topic t" add "${P[@]}" --operation IdempotentWrite --topic t
usage "--operation Read is not valid for --cluster (the cluster takes" add "${P[@]}" --operation Read --cluster
usage "--operation Read is not valid for --transactional-id x" remove --operation Read --transactional-id x --force
usage "--resource-pattern-type match is not valid when adding ACLs (literal or prefixed)" \
    add "${P[@]}" --operation Read --topic t --resource-pattern-type match
usage "--resource-pattern-type any is not valid when adding ACLs" add "${P[@]}" --operation Read --topic t --resource-pattern-type any
usage "--resource-pattern-type: 'glob' is not literal, prefixed, any or match" list --topic t --resource-pattern-type glob
usage "--cluster: the cluster resource has a literal pattern only" add "${P[@]}" --operation Alter --cluster --resource-pattern-type prefixed
usage "--cluster: the cluster resource has a literal pattern only" list --cluster --resource-pattern-type prefixed
usage "--consumer needs a --topic and a --group" add "${P[@]}" --consumer --topic t
usage "--producer needs a --topic" add "${P[@]}" --producer --transactional-id x
usage "--producer and --consumer take no --operation, --deny-principal or --deny-host" add "${P[@]}" --producer --operation Read --topic t
usage "--producer and --consumer take no --operation" add --deny-principal User:b --consumer --topic t --group g
usage "--idempotent goes with --producer" add "${P[@]}" --idempotent --operation Write --topic t
usage "--consumer takes no --cluster or --transactional-id" add "${P[@]}" --consumer --topic t --group g --cluster
usage "--group g: --producer grants nothing on a group" add "${P[@]}" --producer --topic t --group g
usage "--cluster: --producer grants nothing on the cluster (--idempotent: IdempotentWrite)" add "${P[@]}" --producer --topic t --cluster
usage "list takes resources, --resource-pattern-type and --principal only" list --operation Read
usage "list takes resources" list "${P[@]}"
usage "--principal is for list and remove" add --principal User:a --operation Read --topic t
usage "--principal does not go with --allow-principal or --deny-principal" remove --principal User:a "${P[@]}" --topic t --force
usage "--force is for remove only" add "${P[@]}" --operation Read --topic t --force
usage "--topic: a name of 1 to 255 bytes" add "${P[@]}" --operation Read --topic ''
usage "standard input is not a terminal: pass --force to remove without confirmation" remove --topic t
usage "--transactional-id: librdkafka 2.0.2 has no TransactionalId resource type" \
    add "${P[@]}" --operation Write --transactional-id x -X security.protocol=SASL_PLAINTEXT
# the schema registry's resources (Redpanda's --registry-subject and --registry-global)
usage "--registry-global: the registry resource has a literal pattern only" \
    add "${P[@]}" --operation Read --registry-global --resource-pattern-type prefixed
usage "--operation Create is not valid for --registry-subject s (a subject takes All, Read, Write, Delete, Describe, DescribeConfigs, AlterConfigs)" \
    add "${P[@]}" --operation Create --registry-subject s
usage "--operation IdempotentWrite is not valid for --registry-global (the registry takes" \
    add "${P[@]}" --operation IdempotentWrite --registry-global
usage "--registry-subject: a name of 1 to 255 bytes" add "${P[@]}" --operation Read --registry-subject ''
usage "--registry-subject: librdkafka 2.0.2 has no Subject resource type" \
    add "${P[@]}" --operation Read --registry-subject s -X security.protocol=SASL_PLAINTEXT
usage "--registry-global: librdkafka 2.0.2 has no Registry resource type" \
    list --registry-global -X security.protocol=SASL_PLAINTEXT

note "a broker without an authorizer: SECURITY_DISABLED"
PORT=$(free_port)
SPORT=$(free_port)
SASL_ARGS=(--set "listeners=PLAINTEXT://127.0.0.1:$PORT,SASL://127.0.0.1:$SPORT"
    --set "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL:SASL_PLAINTEXT"
    --set connection.failed.authentication.delay.ms=0)
start_broker "${SASL_ARGS[@]}"
CONN=(-b "$BROKER")
run add "${P[@]}" --operation Read --topic t --group g --operation Describe
disabled add
grep -q '^Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`: $' "$TMP/out" ||
    fail "add did not say what it adds: $(cat "$TMP/out")"
run list
disabled list
[ ! -s "$TMP/out" ] || fail "list printed: $(cat "$TMP/out")"
run list --topic t --group g
disabled list
run remove --topic t --force
disabled remove
echo 'admin-pw' | "$SP" user create admin --password-stdin -b "$BROKER" >/dev/null || fail "user create admin"
S=(-b "127.0.0.1:$SPORT" -X security.protocol=SASL_PLAINTEXT -X sasl.mechanism=SCRAM-SHA-256
    -X sasl.username=admin -X sasl.password=admin-pw)
sasl run add "${P[@]}" --operation Read --topic t
disabled add
sasl run remove --topic t --group g --force
disabled remove
# librdkafka 2.0.2 drops DescribeAcls' error: the listing is empty, and says it may be a refusal
sasl run list
[ $RC -eq 0 ] && [ ! -s "$TMP/out" ] && grep -q "note: no ACLs listed; through librdkafka 2.0.2" "$TMP/err" ||
    fail "$LAST over librdkafka: exit $RC, stdout $(cat "$TMP/out"), stderr $(cat "$TMP/err")"
stop_broker
rm -rf "$DATA"

note "the authorizer on, PLAINTEXT as a super user: add"
start_broker "${AUTHZ[@]}" --set super.users=User:ANONYMOUS
CONN=(-b "$BROKER")
ok add --allow-principal User:alice --operation Write --operation read --topic orders- \
    --resource-pattern-type PREFIXED
same "$TMP/out" <<'EOF'
Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders-, patternType=PREFIXED)`: 
 \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)
\t(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)

EOF
ok add --allow-principal User:bob --allow-host 10.0.0.1 --allow-host ::1 \
    --deny-principal User:eve --operation describe --topic orders --group g1
ok add --allow-principal 'User:*' --operation Describe --topic '*'
ok add --allow-principal User:carol --producer --idempotent --topic p --transactional-id tx
same "$TMP/out" <<'EOF'
Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=p, patternType=LITERAL)`: 
 \t(principal=User:carol, host=*, operation=WRITE, permissionType=ALLOW)
\t(principal=User:carol, host=*, operation=CREATE, permissionType=ALLOW)
\t(principal=User:carol, host=*, operation=DESCRIBE, permissionType=ALLOW)

Adding ACLs for resource `ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)`: 
 \t(principal=User:carol, host=*, operation=IDEMPOTENT_WRITE, permissionType=ALLOW)

Adding ACLs for resource `ResourcePattern(resourceType=TRANSACTIONAL_ID, name=tx, patternType=LITERAL)`: 
 \t(principal=User:carol, host=*, operation=WRITE, permissionType=ALLOW)
\t(principal=User:carol, host=*, operation=DESCRIBE, permissionType=ALLOW)

EOF
ok add --allow-principal User:dan --consumer --topic c --group cg
# adding what exists is not an error (CreateAcls is idempotent) and stores nothing twice
ok add --allow-principal User:dan --operation Read --topic c

note "list: everything, then by resource, pattern type and principal"
ok list
same "$TMP/out" <<'EOF'
Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=*, patternType=LITERAL)`:
\t(principal=User:*, host=*, operation=DESCRIBE, permissionType=ALLOW)

Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=c, patternType=LITERAL)`:
\t(principal=User:dan, host=*, operation=READ, permissionType=ALLOW)
\t(principal=User:dan, host=*, operation=DESCRIBE, permissionType=ALLOW)

Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`:
\t(principal=User:bob, host=10.0.0.1, operation=DESCRIBE, permissionType=ALLOW)
\t(principal=User:bob, host=::1, operation=DESCRIBE, permissionType=ALLOW)
\t(principal=User:eve, host=*, operation=DESCRIBE, permissionType=DENY)

Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders-, patternType=PREFIXED)`:
\t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)
\t(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)

Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=p, patternType=LITERAL)`:
\t(principal=User:carol, host=*, operation=WRITE, permissionType=ALLOW)
\t(principal=User:carol, host=*, operation=CREATE, permissionType=ALLOW)
\t(principal=User:carol, host=*, operation=DESCRIBE, permissionType=ALLOW)

Current ACLs for resource `ResourcePattern(resourceType=GROUP, name=cg, patternType=LITERAL)`:
\t(principal=User:dan, host=*, operation=READ, permissionType=ALLOW)

Current ACLs for resource `ResourcePattern(resourceType=GROUP, name=g1, patternType=LITERAL)`:
\t(principal=User:bob, host=10.0.0.1, operation=DESCRIBE, permissionType=ALLOW)
\t(principal=User:bob, host=::1, operation=DESCRIBE, permissionType=ALLOW)
\t(principal=User:eve, host=*, operation=DESCRIBE, permissionType=DENY)

Current ACLs for resource `ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)`:
\t(principal=User:carol, host=*, operation=IDEMPOTENT_WRITE, permissionType=ALLOW)

Current ACLs for resource `ResourcePattern(resourceType=TRANSACTIONAL_ID, name=tx, patternType=LITERAL)`:
\t(principal=User:carol, host=*, operation=WRITE, permissionType=ALLOW)
\t(principal=User:carol, host=*, operation=DESCRIBE, permissionType=ALLOW)

EOF
cp "$TMP/out" "$TMP/all"
# match: every pattern that covers the name (LITERAL "*", PREFIXED orders-), not LITERAL orders
ok list --topic orders-1 --resource-pattern-type match
same "$TMP/out" <<'EOF'
Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=*, patternType=LITERAL)`:
\t(principal=User:*, host=*, operation=DESCRIBE, permissionType=ALLOW)

Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders-, patternType=PREFIXED)`:
\t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)
\t(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)

EOF
# a resource named: LITERAL by default, that name only
ok list --topic orders
same "$TMP/out" <<'EOF'
Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`:
\t(principal=User:bob, host=10.0.0.1, operation=DESCRIBE, permissionType=ALLOW)
\t(principal=User:bob, host=::1, operation=DESCRIBE, permissionType=ALLOW)
\t(principal=User:eve, host=*, operation=DESCRIBE, permissionType=DENY)

EOF
ok list --topic orders --topic orders --group nosuch # two filters finding the same: listed once
same "$TMP/out" <<'EOF'
Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`:
\t(principal=User:bob, host=10.0.0.1, operation=DESCRIBE, permissionType=ALLOW)
\t(principal=User:bob, host=::1, operation=DESCRIBE, permissionType=ALLOW)
\t(principal=User:eve, host=*, operation=DESCRIBE, permissionType=DENY)

EOF
ok list --topic orders- # LITERAL orders- is not the PREFIXED one
[ ! -s "$TMP/out" ] || fail "$LAST: $(cat "$TMP/out")"
ok list --topic orders- --resource-pattern-type any
grep -c '^Current ACLs' "$TMP/out" | grep -qx 1 && grep -q 'name=orders-, patternType=PREFIXED' "$TMP/out" ||
    fail "$LAST: $(cat "$TMP/out")"
ok list --resource-pattern-type prefixed # no resource: every prefixed pattern
grep -c '^Current ACLs' "$TMP/out" | grep -qx 1 && grep -q 'name=orders-, patternType=PREFIXED' "$TMP/out" ||
    fail "$LAST: $(cat "$TMP/out")"
ok list --transactional-id tx --group cg --cluster
same "$TMP/out" <<'EOF'
Current ACLs for resource `ResourcePattern(resourceType=GROUP, name=cg, patternType=LITERAL)`:
\t(principal=User:dan, host=*, operation=READ, permissionType=ALLOW)

Current ACLs for resource `ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)`:
\t(principal=User:carol, host=*, operation=IDEMPOTENT_WRITE, permissionType=ALLOW)

Current ACLs for resource `ResourcePattern(resourceType=TRANSACTIONAL_ID, name=tx, patternType=LITERAL)`:
\t(principal=User:carol, host=*, operation=WRITE, permissionType=ALLOW)
\t(principal=User:carol, host=*, operation=DESCRIBE, permissionType=ALLOW)

EOF
ok list --principal User:bob --principal User:dan
same "$TMP/out" <<'EOF'
ACLs for principal `User:bob`
Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`:
\t(principal=User:bob, host=10.0.0.1, operation=DESCRIBE, permissionType=ALLOW)
\t(principal=User:bob, host=::1, operation=DESCRIBE, permissionType=ALLOW)

Current ACLs for resource `ResourcePattern(resourceType=GROUP, name=g1, patternType=LITERAL)`:
\t(principal=User:bob, host=10.0.0.1, operation=DESCRIBE, permissionType=ALLOW)
\t(principal=User:bob, host=::1, operation=DESCRIBE, permissionType=ALLOW)

ACLs for principal `User:dan`
Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=c, patternType=LITERAL)`:
\t(principal=User:dan, host=*, operation=READ, permissionType=ALLOW)
\t(principal=User:dan, host=*, operation=DESCRIBE, permissionType=ALLOW)

Current ACLs for resource `ResourcePattern(resourceType=GROUP, name=cg, patternType=LITERAL)`:
\t(principal=User:dan, host=*, operation=READ, permissionType=ALLOW)

EOF
ok list --topic nosuch
[ ! -s "$TMP/out" ] || fail "$LAST: $(cat "$TMP/out")"

note "the schema registry's resources: add, list (by type, match), remove"
ok add --allow-principal User:alice --operation Write --operation Read --registry-subject orders- \
    --resource-pattern-type prefixed
same "$TMP/out" <<'EOF'
Adding ACLs for resource `ResourcePattern(resourceType=SUBJECT, name=orders-, patternType=PREFIXED)`: 
 \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)
\t(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)

EOF
ok add --allow-principal User:ops --operation AlterConfigs --registry-global \
    --registry-subject orders-value
ok list --registry-subject orders-value --resource-pattern-type match --registry-global
same "$TMP/out" <<'EOF'
Current ACLs for resource `ResourcePattern(resourceType=REGISTRY, name=schema-registry, patternType=LITERAL)`:
\t(principal=User:ops, host=*, operation=ALTER_CONFIGS, permissionType=ALLOW)

Current ACLs for resource `ResourcePattern(resourceType=SUBJECT, name=orders-, patternType=PREFIXED)`:
\t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)
\t(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)

Current ACLs for resource `ResourcePattern(resourceType=SUBJECT, name=orders-value, patternType=LITERAL)`:
\t(principal=User:ops, host=*, operation=ALTER_CONFIGS, permissionType=ALLOW)

EOF
# the Kafka types' listing does not carry them: a TOPIC filter finds no SUBJECT binding
ok list --topic orders- --resource-pattern-type prefixed
grep -q 'SUBJECT' "$TMP/out" && fail "$LAST: $(cat "$TMP/out")"
ok remove --registry-subject orders- --resource-pattern-type prefixed --force
[ "$(grep -c $'^\t(principal=User:alice' "$TMP/out")" -eq 2 ] || fail "$LAST: $(cat "$TMP/out")"
ok remove --registry-global --registry-subject orders-value --force
[ "$(grep -c $'^\t(principal=User:ops' "$TMP/out")" -eq 2 ] || fail "$LAST: $(cat "$TMP/out")"
ok list
cmp -s "$TMP/out" "$TMP/all" || fail "registry bindings left behind: $(diff "$TMP/all" "$TMP/out")"

note "remove: by permission, host, operation, role, principal, match; and the confirmation"
ok remove --deny-principal User:eve --topic orders --force
same "$TMP/out" <<'EOF'
Removed ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`:
\t(principal=User:eve, host=*, operation=DESCRIBE, permissionType=DENY)

EOF
ok remove --allow-principal User:bob --allow-host 10.0.0.1 --topic orders --force
same "$TMP/out" <<'EOF'
Removed ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`:
\t(principal=User:bob, host=10.0.0.1, operation=DESCRIBE, permissionType=ALLOW)

EOF
ok remove --topic orders- --resource-pattern-type prefixed --operation write --force
same "$TMP/out" <<'EOF'
Removed ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders-, patternType=PREFIXED)`:
\t(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)

EOF
ok remove --allow-principal User:carol --producer --idempotent --topic p --transactional-id tx --force
[ "$(grep -c $'^\t(principal=User:carol' "$TMP/out")" -eq 6 ] || fail "$LAST: $(cat "$TMP/out")"
ok remove --topic nosuch --force
[ "$(cat "$TMP/out")" = "No ACLs matched; nothing removed." ] || fail "$LAST: $(cat "$TMP/out")"
# not a terminal and no --force: refused, nothing removed
run remove --topic c
[ $RC -eq 2 ] && grep -q "pass --force" "$TMP/err" || fail "$LAST: exit $RC: $(cat "$TMP/err")"
ok list --topic c
grep -q 'User:dan' "$TMP/out" || fail "remove without --force removed something"
# on a terminal: asks; "n" keeps, "y" removes
rc=0
printf 'n\n' | script -qec "$SP acl remove -b $BROKER --topic c" /dev/null >"$TMP/tty" 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -q "Are you sure you want to remove the ACLs that match:" "$TMP/tty" &&
    grep -q "nothing removed" "$TMP/tty" || fail "answering n: exit $rc: $(cat "$TMP/tty")"
ok list --topic c
grep -q 'User:dan' "$TMP/out" || fail "answering n removed something"
rc=0
printf 'y\n' | script -qec "$SP acl remove -b $BROKER --topic c" /dev/null >"$TMP/tty" 2>&1 || rc=$?
[ $rc -eq 0 ] && grep -q 'Removed ACLs for resource `ResourcePattern(resourceType=TOPIC, name=c, patternType=LITERAL)`' "$TMP/tty" ||
    fail "answering y: exit $rc: $(cat "$TMP/tty")"
ok list --topic c
[ ! -s "$TMP/out" ] || fail "answering y left: $(cat "$TMP/out")"
ok remove --principal User:dan --group cg --force
grep -q $'^\t(principal=User:dan, host=\\*, operation=READ, permissionType=ALLOW)$' "$TMP/out" ||
    fail "$LAST: $(cat "$TMP/out")"
# match removes every pattern that covers orders-9: LITERAL "*" and PREFIXED orders-
ok remove --topic orders-9 --resource-pattern-type match --force
same "$TMP/out" <<'EOF'
Removed ACLs for resource `ResourcePattern(resourceType=TOPIC, name=*, patternType=LITERAL)`:
\t(principal=User:*, host=*, operation=DESCRIBE, permissionType=ALLOW)

Removed ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders-, patternType=PREFIXED)`:
\t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)

EOF
# an allow principal without --allow-host: any host (bob's binding is from ::1, not *)
ok remove --allow-principal User:bob --topic orders --force
same "$TMP/out" <<'EOF'
Removed ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`:
\t(principal=User:bob, host=::1, operation=DESCRIBE, permissionType=ALLOW)

EOF
ok list
same "$TMP/out" <<'EOF'
Current ACLs for resource `ResourcePattern(resourceType=GROUP, name=g1, patternType=LITERAL)`:
\t(principal=User:bob, host=10.0.0.1, operation=DESCRIBE, permissionType=ALLOW)
\t(principal=User:bob, host=::1, operation=DESCRIBE, permissionType=ALLOW)
\t(principal=User:eve, host=*, operation=DESCRIBE, permissionType=DENY)

EOF
stop_broker
rm -rf "$DATA"

note "the authorizer on, SASL_PLAINTEXT through librdkafka; a principal without cluster rights"
start_broker "${AUTHZ[@]}" "${SASL_ARGS[@]}" --set super.users=User:admin \
    --set allow.everyone.if.no.acl.found=true
CONN=(-b "$BROKER")
for u in admin alice bob; do
    echo "$u-pw" | "$SP" user create "$u" --password-stdin -b "$BROKER" >/dev/null || fail "user create $u"
done
"$SP" topic create orders-1 -b "$BROKER" >/dev/null || fail "topic create orders-1"
sasl ok add --allow-principal User:alice --producer --idempotent --topic orders- --resource-pattern-type prefixed
sasl ok add --deny-principal User:mallory --deny-host 192.168.0.9 --operation All --group '*'
sasl ok list
same "$TMP/out" <<'EOF'
Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders-, patternType=PREFIXED)`:
\t(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)
\t(principal=User:alice, host=*, operation=CREATE, permissionType=ALLOW)
\t(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW)

Current ACLs for resource `ResourcePattern(resourceType=GROUP, name=*, patternType=LITERAL)`:
\t(principal=User:mallory, host=192.168.0.9, operation=ALL, permissionType=DENY)

Current ACLs for resource `ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)`:
\t(principal=User:alice, host=*, operation=IDEMPOTENT_WRITE, permissionType=ALLOW)

EOF
# the bindings are the ones the authorizer enforces: alice may write orders-1 (PREFIXED
# orders-), bob may not (the topic has ACLs, none his), and a LITERAL DENY beats the ALLOW
produce_as() { # USER: one record to orders-1 over SASL as USER (password USER-pw)
    echo x | "$SP" produce -t orders-1 --acks all --timeout 10 -b "127.0.0.1:$SPORT" \
        -X security.protocol=SASL_PLAINTEXT -X sasl.mechanism=SCRAM-SHA-256 \
        -X "sasl.username=$1" -X "sasl.password=$1-pw" >/dev/null 2>"$TMP/produce.err"
}
produce_as alice || fail "alice may not produce to orders-1: $(cat "$TMP/produce.err")"
produce_as bob && fail "bob produced to orders-1"
grep -q "Topic authorization failed" "$TMP/produce.err" || fail "bob: $(cat "$TMP/produce.err")"
sasl ok add --deny-principal User:alice --operation Write --topic orders-1
produce_as alice && fail "alice produced to orders-1 despite DENY WRITE"
sasl ok remove --deny-principal User:alice --topic orders-1 --force
grep -q $'^\t(principal=User:alice, host=\\*, operation=WRITE, permissionType=DENY)$' "$TMP/out" ||
    fail "$LAST: $(cat "$TMP/out")"
produce_as alice || fail "alice may not produce after the DENY went: $(cat "$TMP/produce.err")"
# the cluster has an ACL now, so the plaintext client (User:ANONYMOUS, no super user) may not
# use the ACL APIs: said once per command, exit 1
for args in "list" "add --allow-principal User:x --operation Read --operation Write --topic z" \
    "remove --topic orders- --topic z --force"; do
    # shellcheck disable=SC2086
    run $args
    [ $RC -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
        grep -q "^streampulse acl ${args%% *}: not authorized: CLUSTER_AUTHORIZATION_FAILED: " "$TMP/err" ||
        fail "$LAST as User:ANONYMOUS: exit $RC: $(cat "$TMP/err")"
done
# --idempotent's cluster binding is LITERAL beside prefixed topics, in remove as in add
sasl ok remove --allow-principal User:alice --producer --idempotent --topic orders- \
    --resource-pattern-type prefixed --force
same "$TMP/out" <<'EOF'
Removed ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders-, patternType=PREFIXED)`:
\t(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)
\t(principal=User:alice, host=*, operation=CREATE, permissionType=ALLOW)
\t(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW)

Removed ACLs for resource `ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)`:
\t(principal=User:alice, host=*, operation=IDEMPOTENT_WRITE, permissionType=ALLOW)

EOF
sasl ok remove --group '*' --deny-principal User:mallory --deny-host 192.168.0.9 --force
grep -q 'User:mallory, host=192.168.0.9' "$TMP/out" || fail "$LAST: $(cat "$TMP/out")"
sasl run list
[ $RC -eq 0 ] && [ ! -s "$TMP/out" ] || fail "$LAST: exit $RC: $(cat "$TMP/out")"
ok list # no cluster ACL any more: allow.everyone.if.no.acl.found lets ANONYMOUS in
[ ! -s "$TMP/out" ] || fail "$LAST: $(cat "$TMP/out")"
stop_broker
echo "ok"
