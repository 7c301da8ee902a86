// @platformatic/kafka's Admin.alterClientQuotas (AlterClientQuotas v1) and
// Admin.describeClientQuotas (DescribeClientQuotas v0) against StreamPulse: quotas set for a
// named user + default client-id, a default user and a named client-id are described back by
// an exact filter, a default filter, an any filter and a strict one; a value is replaced and
// removed. (Bad entries: quota_bad_input.py, raw, as this client refuses them itself.)
//
// usage: node platformatic_quotas.mjs BROKER
import assert from 'node:assert/strict'
import { Admin } from '@platformatic/kafka'

const admin = new Admin({ clientId: 'plt-quotas', bootstrapBrokers: [process.argv[2]] })
const U = (name) => ({ entityType: 'user', entityName: name })
const C = (name) => ({ entityType: 'client-id', entityName: name })
const set = (key, value) => ({ key, value, remove: false })

let res = await admin.alterClientQuotas({
  entries: [
    { entities: [U('alice'), C(null)], ops: [set('producer_byte_rate', 1048576), set('consumer_byte_rate', 2097152)] },
    { entities: [U(null)], ops: [set('producer_byte_rate', 4096)] },
    { entities: [C('slow')], ops: [set('producer_byte_rate', 100000)] }
  ]
})
assert.deepEqual(res.map((e) => e.errorCode), [0, 0, 0], JSON.stringify(res))
assert.deepEqual(res[0].entity, [{ entityType: 'user', entityName: 'alice' }, { entityType: 'client-id', entityName: null }])
console.log('alterClientQuotas: 3 entities set')

const describe = async (components, strict = false) => {
  // a quota just set reaches this broker's image shortly after AlterClientQuotas answers
  const deadline = Date.now() + 5000
  for (;;) {
    const r = await admin.describeClientQuotas({ components, strict })
    const norm = r.map((e) => ({ entity: e.entity.map((p) => `${p.entityType}=${p.entityName}`).join(','),
      values: Object.fromEntries(e.values.map((v) => [v.key, v.value])) }))
    if (norm.length > 0 || Date.now() > deadline) return norm
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
let d = await describe([{ entityType: 'user', matchType: 0, match: 'alice' }])
assert.deepEqual(d, [{ entity: 'user=alice,client-id=null', values: { consumer_byte_rate: 2097152, producer_byte_rate: 1048576 } }])
d = await describe([{ entityType: 'user', matchType: 1 }])
assert.deepEqual(d, [{ entity: 'user=null', values: { producer_byte_rate: 4096 } }])
d = await describe([{ entityType: 'user', matchType: 2 }])
assert.equal(d.length, 2, JSON.stringify(d))
d = await describe([{ entityType: 'user', matchType: 2 }], true) // strict: no client-id part
assert.deepEqual(d, [{ entity: 'user=null', values: { producer_byte_rate: 4096 } }])
d = await describe([{ entityType: 'client-id', matchType: 0, match: 'slow' }])
assert.deepEqual(d, [{ entity: 'client-id=slow', values: { producer_byte_rate: 100000 } }])
console.log('describeClientQuotas: exact, default, any and strict filters give what was set')

res = await admin.alterClientQuotas({
  entries: [{ entities: [U(null)], ops: [{ key: 'producer_byte_rate', remove: true }] },
    { entities: [U('alice'), C(null)], ops: [set('producer_byte_rate', 512)] }]
})
assert.deepEqual(res.map((e) => e.errorCode), [0, 0])
const deadline = Date.now() + 5000
for (;;) {
  d = await describe([{ entityType: 'user', matchType: 2 }])
  if (d.length === 1 || Date.now() > deadline) break
  await new Promise((resolve) => setTimeout(resolve, 50))
}
assert.deepEqual(d, [{ entity: 'user=alice,client-id=null', values: { consumer_byte_rate: 2097152, producer_byte_rate: 512 } }])
console.log('alterClientQuotas: a removal and a replacement are described back')
await admin.close()
