// @platformatic/kafka 1.35.0 with SASL (SaslHandshake v1, SaslAuthenticate v2) and/or TLS (its
// `tls` option: Node's tls.connect options): an Admin creates and lists the topic, a Producer
// writes N records with acks=all and a Consumer in a group reads them back; or, with
// expect=fail, connecting must fail with the client's error.
//
// usage: node secure_platformatic.mjs BROKER TOPIC MECHANISM|- USER|- PASSWORD|- ok|fail
//            [CA_FILE [CERT_FILE KEY_FILE]]
// MECHANISM - is no SASL; a CA_FILE is TLS that trusts only that CA, with a client certificate
// (mTLS) when CERT_FILE and KEY_FILE are given.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { Admin, Consumer, MessagesStreamModes, Producer, stringDeserializers, stringSerializers } from '@platformatic/kafka'

const [broker, topic, mechanism, username, password, expect, caFile, certFile, keyFile] = process.argv.slice(2)
const N = 200
const base = { clientId: 'plt-secure', bootstrapBrokers: [broker], retries: expect === 'fail' ? 0 : 3 }
if (mechanism !== '-') base.sasl = { mechanism, username, password }
if (caFile) {
  base.tls = { ca: [fs.readFileSync(caFile, 'utf8')], rejectUnauthorized: true }
  if (certFile) {
    base.tls.cert = fs.readFileSync(certFile, 'utf8')
    base.tls.key = fs.readFileSync(keyFile, 'utf8')
  }
}
const what = (mechanism === '-' ? 'no SASL' : 'SASL ' + mechanism) +
  (caFile ? (certFile ? ' over mTLS' : ' over TLS') : '')

const admin = new Admin(base)
if (expect === 'fail') {
  try {
    await admin.listTopics()
  } catch (e) {
    console.log('ok: @platformatic/kafka refused as expected: ' + e.name + ': ' + e.message)
    await admin.close()
    process.exit(0)
  }
  throw new Error('@platformatic/kafka: listTopics succeeded but should have failed')
}
await admin.createTopics({ topics: [topic], partitions: 1, replicas: 1 })
assert.ok((await admin.listTopics()).includes(topic), 'the topic is listed')
await admin.close()

const producer = new Producer({ ...base, serializers: stringSerializers })
const want = []
for (let i = 0; i < N; i++) want.push('plt-' + topic + '-' + i)
await producer.send({ messages: want.map(value => ({ topic, value })), acks: -1 })
await producer.close()

const consumer = new Consumer({ ...base, groupId: 'g-' + topic, deserializers: stringDeserializers })
const stream = await consumer.consume({ topics: [topic], mode: MessagesStreamModes.EARLIEST })
const got = []
const timer = setTimeout(() => { throw new Error('consumed ' + got.length + ' of ' + N) }, 30000)
for await (const m of stream) {
  got.push(m.value)
  if (got.length === N) break
}
clearTimeout(timer)
await stream.close()
await consumer.close()
assert.deepEqual(got, want)
console.log('ok: @platformatic/kafka produced and consumed ' + N + ' records with ' + what)
