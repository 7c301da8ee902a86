// @platformatic/kafka 1.35.0 against a three-node cluster: every node gives the same topic id in
// Metadata v12 (the metadata image's); records go through the partition leaders and come back
// through Fetch v13, which names the topic by that id; DescribeCluster v1 lists the three
// brokers on every node; IncrementalAlterConfigs through one node (APPEND to cleanup.policy, SET
// retention.ms) goes through the controller (t_cluster_new_apis.sh then checks every node
// describes it).
//
// usage: node platformatic_cluster.mjs TOPIC BROKER1 BROKER2 BROKER3
import assert from 'node:assert/strict'
import {
  Admin,
  Connection,
  ConfigResourceTypes,
  Consumer,
  IncrementalAlterConfigOperationTypes as Op,
  MessagesStreamModes,
  Producer,
  describeClusterV1,
  stringDeserializers,
  stringSerializers
} from '@platformatic/kafka'

const [topic, ...brokers] = process.argv.slice(2)
const N = 300
const deadline = Date.now() + 60_000
async function until (what, fn) {
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > deadline) throw new Error('timed out waiting for ' + what)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

// ---- the same topic id from every node ----
const ids = []
for (const b of brokers) {
  const admin = new Admin({ clientId: 'plt-c', bootstrapBrokers: [b] })
  const md = await until('metadata with leaders for ' + topic + ' from ' + b, async () => {
    const m = await admin.metadata({ topics: [topic] })
    const t = m.topics.get(topic)
    return t && t.partitions.every(p => p.leader >= 1) ? m : null
  })
  ids.push(md.topics.get(topic).id)
  await admin.close()
}
assert.notEqual(ids[0], '00000000-0000-0000-0000-000000000000')
assert.deepEqual(ids, [ids[0], ids[0], ids[0]], 'one topic id, whichever node answers')

// ---- DescribeCluster v1 on each node: the three brokers ----
for (const b of brokers) {
  const [host, port] = [b.split(':')[0], Number(b.split(':')[1])]
  const conn = new Connection('plt-dc')
  await new Promise((resolve, reject) => conn.connect(host, port, e => (e ? reject(e) : resolve())))
  const dc = await until('three unfenced brokers from ' + b, async () => {
    const r = await describeClusterV1.api.async(conn, false, 1)
    return r.brokers.length === 3 ? r : null
  })
  assert.deepEqual(dc.brokers.map(x => x.brokerId).sort(), [1, 2, 3])
  assert.deepEqual(dc.brokers.map(x => x.port).sort(), brokers.map(x => Number(x.split(':')[1])).sort())
  assert.ok(dc.controllerId >= 1 && dc.controllerId <= 3, 'a controller: ' + dc.controllerId)
  conn.close(() => {})
}

// ---- produce through the leaders, consume back by topic id (Fetch v13) ----
const producer = new Producer({ clientId: 'plt-c-p', bootstrapBrokers: brokers,
  serializers: stringSerializers, acks: -1 })
for (let i = 0; i < N; i += 50) {
  const batch = []
  for (let j = i; j < i + 50; j++) batch.push({ topic, partition: j % 2, key: 'k', value: 'v' + j })
  await producer.send({ messages: batch })
}
await producer.close()
const consumer = new Consumer({ groupId: 'plt-c-g', clientId: 'plt-c-c', bootstrapBrokers: brokers,
  deserializers: stringDeserializers, maxWaitTime: 200 })
const stream = await consumer.consume({ topics: [topic], mode: MessagesStreamModes.EARLIEST })
const seen = new Set()
await new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error('consumed only ' + seen.size)), 45_000)
  stream.on('data', m => {
    seen.add(m.value)
    if (seen.size === N) { clearTimeout(timer); resolve() }
  })
  stream.on('error', reject)
})
for (let i = 0; i < N; i++) assert.ok(seen.has('v' + i), 'record ' + i)
await stream.close()
await consumer.close()

// ---- IncrementalAlterConfigs through the second node ----
const admin = new Admin({ clientId: 'plt-c-a', bootstrapBrokers: [brokers[1]] })
await admin.incrementalAlterConfigs({
  resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: topic, configs: [
    { name: 'cleanup.policy', configOperation: Op.APPEND, value: 'compact' },
    { name: 'retention.ms', configOperation: Op.SET, value: '5400000' }
  ] }]
})
await assert.rejects(admin.incrementalAlterConfigs({
  resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: topic, configs: [
    { name: 'segment.ms', configOperation: Op.SUBTRACT, value: '1' }] }]
}), err => Boolean(err.findBy?.('apiCode', 40)), 'SUBTRACT from a non-list: INVALID_CONFIG')
await admin.close()
console.log('ok: ' + N + ' records, topic id ' + ids[0])
