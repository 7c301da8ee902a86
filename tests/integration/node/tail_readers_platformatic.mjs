// @platformatic/kafka 1.35.0 as a group member over partition 0 of TOPIC (t_raft_entries.sh), as
// tail_readers.js does with kafkajs: reads until it has COUNT records and its committed offset
// equals the high watermark, then prints "offset value" per record. Exits 1 unless both happen
// within 30 s: a consumer held before a run of Raft entries, or one that jumps past data, shows
// up here. With COUNT 0 (an empty partition) it checks that the high watermark is the log start
// and that nothing arrives for 2 s.
// usage: node tail_readers_platformatic.mjs BROKER TOPIC GROUP COUNT
import {
  Admin,
  Consumer,
  MessagesStreamFallbackModes,
  MessagesStreamModes,
  stringDeserializers
} from '@platformatic/kafka'

const [broker, topic, group, count] = [process.argv[2], process.argv[3], process.argv[4],
  Number(process.argv[5])]
const bootstrapBrokers = broker.split(',')

const admin = new Admin({ clientId: 'tail-readers-plt-admin', bootstrapBrokers })
const consumer = new Consumer({
  groupId: group,
  clientId: 'tail-readers-plt',
  bootstrapBrokers,
  deserializers: stringDeserializers,
  maxWaitTime: 50
})
const got = []
let failure = null
const stream = await consumer.consume({
  topics: [topic],
  mode: MessagesStreamModes.COMMITTED,
  fallbackMode: MessagesStreamFallbackModes.EARLIEST,
  autocommit: false
})
stream.on('data', message => {
  if (message.partition !== 0) return
  got.push(message.offset + ' ' + message.value)
  message.commit(err => { if (err) failure = err })
})
stream.on('error', err => { failure = err })

async function offsets (timestamp) { // partition 0's offset at timestamp (-1 latest, -2 earliest)
  const r = await admin.listOffsets({
    topics: [{ name: topic, partitions: [{ partitionIndex: 0, timestamp }] }]
  })
  return r[0].partitions.find(p => p.partitionIndex === 0).offset
}
async function committed () {
  const r = await admin.listConsumerGroupOffsets({ groups: [group] })
  for (const t of r[0].topics) {
    if (t.name !== topic) continue
    for (const p of t.partitions) if (p.partitionIndex === 0) return p.committedOffset
  }
  return -1n
}

const start = Date.now()
const deadline = start + 30000
let ok = false
let why = ''
while (Date.now() < deadline && !failure) {
  await new Promise(resolve => setTimeout(resolve, 200))
  const high = await offsets(-1n)
  if (count === 0) {
    const low = await offsets(-2n)
    ok = got.length === 0 && high === low
    why = 'high ' + high + ', low ' + low + ', ' + got.length + ' records'
    if (ok && Date.now() > start + 2000) break // 2 s without records
    continue
  }
  const c = await committed()
  why = got.length + ' of ' + count + ' records, committed ' + c + ', high ' + high
  if (got.length >= count && c === high) { ok = true; break }
}
await stream.close()
await consumer.close()
await admin.close()
for (const l of got) console.log(l)
if (failure) {
  console.error('@platformatic/kafka failed: ' + failure)
  process.exit(1)
}
if (!ok) {
  console.error('@platformatic/kafka did not reach the end within 30 s: ' + why)
  process.exit(1)
}
