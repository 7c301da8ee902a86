#!/usr/bin/env bash
# Client quotas (DescribeClientQuotas / AlterClientQuotas, KIP-546): @platformatic/kafka's Admin
# sets, describes, replaces and removes quotas on users and client-ids (platformatic_quotas.mjs),
# and a producer over its producer_byte_rate is throttled (throttle_time_ms, responses held)
# while another client is not (quota_throttle.py); quotas survive a restart; the throttled
# responses are counted in /metrics; malformed entries and filters get INVALID_REQUEST
# (quota_bad_input.py, raw).
# timeout: 120
source "$(dirname "$0")/lib.sh"
[ -d "$NODE_DIR/node_modules/@platformatic/kafka" ] || (cd "$NODE_DIR" && npm ci --no-audit --no-fund >/dev/null)
start_broker
"$SP" topic create quota-topic -b "$BROKER" >/dev/null || fail "topic create"
(cd "$NODE_DIR" && node platformatic_quotas.mjs "$BROKER") || fail "platformatic_quotas.mjs"
$PY "$ROOT/tests/integration/quota_bad_input.py" "$BROKER" || fail "quota_bad_input.py"
$PY "$ROOT/tests/integration/quota_throttle.py" "$BROKER" || fail "quota_throttle.py"
n=$(curl -sf "http://$ADMIN/metrics" | sed -n 's/^streampulse_quota_throttled_responses_total{direction="produce"} //p')
[ "${n:-0}" -gt 0 ] || fail "no throttled produce responses counted: '$n'"
note "restart: the quotas are still there"
stop_broker
start_broker
(cd "$NODE_DIR" && node -e '
import("@platformatic/kafka").then(async ({ Admin }) => {
  const a = new Admin({ clientId: "q", bootstrapBrokers: [process.argv[1]] })
  const r = await a.describeClientQuotas({ components: [{ entityType: "client-id", matchType: 0, match: "slow" }] })
  await a.close()
  if (r.length !== 1 || r[0].values[0].value !== 100000) { console.error(JSON.stringify(r)); process.exit(1) }
  console.log("client-id=slow producer_byte_rate 100000 after the restart")
})' "$BROKER") || fail "the quota of client-id slow is gone after a restart"
stop_broker
