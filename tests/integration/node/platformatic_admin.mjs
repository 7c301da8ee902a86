// @platformatic/kafka 1.35.0's admin calls beyond topics and groups, against StreamPulse:
// Admin.incrementalAlterConfigs (IncrementalAlterConfigs v1: SET, DELETE, APPEND, SUBTRACT and
// the errors Kafka gives), Admin.describeConfigs (DescribeConfigs v4, which the client reads with
// config types), Admin.describeLogDirs (DescribeLogDirs v4), and the client's own DescribeCluster
// (v0, v1) and OffsetForLeaderEpoch (v4) requests over one of its connections.
//
// usage: node platformatic_admin.mjs BROKER
import assert from 'node:assert/strict'
import {
  Admin,
  Connection,
  ConfigResourceTypes,
  ConfigSources,
  IncrementalAlterConfigOperationTypes as Op,
  Producer,
  describeClusterV0,
  describeClusterV1,
  offsetForLeaderEpochV4,
  stringSerializers
} from '@platformatic/kafka'

const broker = process.argv[2]
const [host, port] = [broker.split(':')[0], Number(broker.split(':')[1])]
const TOPIC = 'plt-admin'

const admin = new Admin({ clientId: 'plt-admin', bootstrapBrokers: [broker] })
await admin.createTopics({ topics: [TOPIC], partitions: 2, replicas: 1 })

const topicConfigs = async () => {
  const r = await admin.describeConfigs({
    resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: TOPIC }]
  })
  return new Map(r[0].configs.map(c => [c.name, c]))
}
// whether the client's error (nested as it reports them) carries Kafka error code `code`
const has = code => err => Boolean(err.findBy?.('apiCode', code))
const alter = configs => admin.incrementalAlterConfigs({
  resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: TOPIC, configs }]
})

// ---- describeConfigs (v4): defaults, with their types ----
let cfg = await topicConfigs()
assert.equal(cfg.get('retention.ms').configSource, ConfigSources.DEFAULT_CONFIG)
assert.equal(cfg.get('retention.ms').configType, 5, 'LONG')
assert.equal(cfg.get('cleanup.policy').value, 'delete')
assert.equal(cfg.get('cleanup.policy').configType, 7, 'LIST')
assert.equal(cfg.get('min.cleanable.dirty.ratio').configType, 6, 'DOUBLE')

// ---- incrementalAlterConfigs: SET and APPEND, then SUBTRACT and DELETE ----
await alter([
  { name: 'retention.ms', configOperation: Op.SET, value: '7200000' },
  { name: 'cleanup.policy', configOperation: Op.APPEND, value: 'compact' }
])
cfg = await topicConfigs()
assert.equal(cfg.get('retention.ms').value, '7200000')
assert.equal(cfg.get('retention.ms').configSource, ConfigSources.TOPIC_CONFIG)
assert.equal(cfg.get('cleanup.policy').value, 'delete,compact', 'APPEND adds to the default')
await alter([{ name: 'segment.ms', configOperation: Op.SET, value: '3600000' }])
cfg = await topicConfigs()
assert.equal(cfg.get('retention.ms').value, '7200000', 'keys not named stay as they were')
assert.equal(cfg.get('segment.ms').value, '3600000')
await alter([
  { name: 'cleanup.policy', configOperation: Op.SUBTRACT, value: 'delete' },
  { name: 'retention.ms', configOperation: Op.DELETE }
])
cfg = await topicConfigs()
assert.equal(cfg.get('cleanup.policy').value, 'compact')
assert.equal(cfg.get('retention.ms').configSource, ConfigSources.DEFAULT_CONFIG, 'DELETE: default')
assert.equal(cfg.get('segment.ms').value, '3600000')
// validateOnly changes nothing
await admin.incrementalAlterConfigs({
  resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: TOPIC,
    configs: [{ name: 'segment.ms', configOperation: Op.SET, value: '60000' }] }],
  validateOnly: true
})
assert.equal((await topicConfigs()).get('segment.ms').value, '3600000')

// ---- the errors Kafka gives ----
await assert.rejects(alter([{ name: 'retention.ms', configOperation: Op.APPEND, value: '1' }]),
  has(40), 'APPEND to a non-list config: INVALID_CONFIG (40)')
await assert.rejects(alter([{ name: 'no.such.key', configOperation: Op.SET, value: '1' }]),
  has(40), 'an unknown key: INVALID_CONFIG (40)')
await assert.rejects(alter([{ name: 'retention.ms', configOperation: Op.SET, value: 'soon' }]),
  has(40), 'a bad value: INVALID_CONFIG (40)')
await assert.rejects(alter([
  { name: 'retention.ms', configOperation: Op.SET, value: '1' },
  { name: 'retention.ms', configOperation: Op.DELETE }
]), has(42), 'one key twice: INVALID_REQUEST (42)')
await assert.rejects(admin.incrementalAlterConfigs({
  resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: 'plt-missing',
    configs: [{ name: 'retention.ms', configOperation: Op.SET, value: '1' }] }]
}), has(3), 'no such topic: UNKNOWN_TOPIC_OR_PARTITION (3)')
cfg = await topicConfigs()
assert.equal(cfg.get('cleanup.policy').value, 'compact', 'failed requests changed nothing')
assert.equal(cfg.get('retention.ms').configSource, ConfigSources.DEFAULT_CONFIG)

// ---- describeLogDirs (v4): the log directory, this topic's partitions and their sizes ----
const producer = new Producer({ clientId: 'plt-admin-p', bootstrapBrokers: [broker],
  serializers: stringSerializers })
await producer.send({ messages: [0, 1, 2, 3].map(i => ({ topic: TOPIC, partition: i % 2,
  key: 'k' + i, value: 'value-' + i })) })
await producer.close()
const dirs = await admin.describeLogDirs({ topics: [{ name: TOPIC, partitions: [0, 1, 7] }] })
assert.equal(dirs.length, 1)
assert.equal(dirs[0].broker, 1)
assert.equal(dirs[0].results.length, 1)
const dir = dirs[0].results[0]
assert.ok(dir.logDir.length > 0)
assert.ok(dir.totalBytes > 0n && dir.usableBytes > 0n && dir.usableBytes <= dir.totalBytes,
  'total and usable bytes of the directory: ' + dir.totalBytes + ' ' + dir.usableBytes)
assert.equal(dir.topics.length, 1)
assert.equal(dir.topics[0].name, TOPIC)
const parts = dir.topics[0].partitions.map(p => p.partitionIndex).sort()
assert.deepEqual(parts, [0, 1], 'the partitions held, not the one that does not exist')
for (const p of dir.topics[0].partitions) {
  assert.ok(p.partitionSize > 0n, 'partition ' + p.partitionIndex + ' holds its batch')
  assert.equal(p.offsetLag, 0n)
  assert.equal(p.isFutureKey, false)
}
const everything = await admin.describeLogDirs({ topics: null })
assert.ok(everything[0].results[0].topics.some(t => t.name === TOPIC), 'null topics: all')

// ---- DescribeCluster v0 and v1, OffsetForLeaderEpoch v4 on the client's own connection ----
const md = await admin.metadata({ topics: [TOPIC] })
const epoch = md.topics.get(TOPIC).partitions[0].leaderEpoch
const conn = new Connection('plt-lowlevel')
await new Promise((resolve, reject) => conn.connect(host, port, e => (e ? reject(e) : resolve())))
for (const api of [describeClusterV0.api, describeClusterV1.api]) {
  const args = api === describeClusterV1.api ? [false, 1] : [false]
  const dc = await api.async(conn, ...args)
  assert.equal(dc.errorCode, 0)
  assert.equal(dc.clusterId, md.id, 'the cluster id Metadata gives')
  assert.equal(dc.controllerId, 1)
  assert.deepEqual(dc.brokers.map(b => [b.brokerId, b.host, b.port]), [[1, host, port]])
}
await assert.rejects(describeClusterV1.api.async(conn, false, 2),
  has(115), 'controllers: UNSUPPORTED_ENDPOINT_TYPE (115)')

const ofle = async (leaderEpoch, currentLeaderEpoch = -1) => {
  const r = await offsetForLeaderEpochV4.api.async(conn, -1, [{ name: TOPIC,
    partitions: [{ partitionIndex: 0, currentLeaderEpoch, leaderEpoch }] }])
  return r.topics[0].partitions[0]
}
// the current epoch ends at the log end; one above any the log has is undefined
let p0 = await ofle(epoch)
assert.equal(p0.errorCode, 0)
assert.equal(p0.leaderEpoch, epoch)
assert.equal(p0.endOffset, 2n, 'two records in partition 0')
p0 = await ofle(epoch + 1)
assert.equal(p0.leaderEpoch, -1)
assert.equal(p0.endOffset, -1n)
p0 = await ofle(epoch, epoch)
assert.equal(p0.endOffset, 2n, 'the current leader epoch is the leader\'s')
// (errors are not checked here: this client reads Partition before ErrorCode, the reverse of
// OffsetForLeaderEpochResponse.json, so it sees a partition's error as part of its index;
// leader_epoch_raw.py checks them on the wire)
conn.close(() => {})

await admin.deleteTopics({ topics: [TOPIC] })
await admin.close()
console.log('ok')
