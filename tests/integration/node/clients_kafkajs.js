// kafkajs 2.2.4: admin create topic, fetchTopicMetadata, produce with keys and headers,
// fetchTopicOffsets, consume (consumer group); keys, values and headers byte-identical.
// usage: node clients_kafkajs.js BROKER
"use strict";
const assert = require("assert");
const { Kafka, logLevel } = require("kafkajs");

const broker = process.argv[2];
const TOPIC = "kjs-roundtrip";
const N = 2000;

function record(i) {
  const value = Buffer.alloc(i % 300);
  for (let j = 0; j < value.length; j++) value[j] = (i * 13 + j) % 256;
  const headers = { ["h-" + (i % 3)]: Buffer.from([i % 256, 0, 255]), "ünïcode": Buffer.from("värde-" + i) };
  if (i % 5 === 0) headers.empty = Buffer.alloc(0);
  return { key: Buffer.from("k" + (i % 17)), value, headers };
}

async function main() {
  const kafka = new Kafka({ clientId: "itest", brokers: [broker], logLevel: logLevel.WARN,
                            retry: { retries: 5 } });
  const admin = kafka.admin();
  await admin.connect();
  assert.strictEqual(await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 3 }] }), true);
  const md = await admin.fetchTopicMetadata({ topics: [TOPIC] });
  assert.strictEqual(md.topics.length, 1);
  assert.strictEqual(md.topics[0].partitions.length, 3);
  for (const p of md.topics[0].partitions) assert.strictEqual(p.leader, 1);

  const producer = kafka.producer();
  await producer.connect();
  const sent = [];
  for (let i = 0; i < N; i += 100) {
    const batch = [];
    for (let j = i; j < i + 100; j++) batch.push(record(j));
    const res = await producer.send({ topic: TOPIC, acks: -1, messages: batch });
    for (const r of res) assert.strictEqual(r.errorCode, 0);
    sent.push(...batch);
  }
  await producer.disconnect();

  const offsets = await admin.fetchTopicOffsets(TOPIC);
  assert.strictEqual(offsets.length, 3);
  const total = offsets.reduce((s, o) => s + Number(o.high) - Number(o.low), 0);
  assert.strictEqual(total, N, "fetchTopicOffsets: " + JSON.stringify(offsets));

  const consumer = kafka.consumer({ groupId: "kjs-group" });
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  const got = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("consumed only " + got.length)), 60000);
    consumer.run({
      eachMessage: async ({ message }) => {
        got.push(message);
        if (got.length === N) { clearTimeout(timer); resolve(); }
      },
    }).catch(reject);
  });
  await consumer.disconnect();
  await admin.disconnect();

  const byValue = new Map();
  for (const m of got) {
    const k = m.key.toString() + "/" + m.value.toString("hex");
    byValue.set(k, (byValue.get(k) || []).concat([m]));
  }
  for (let i = 0; i < N; i++) {
    const r = record(i);
    const k = r.key.toString() + "/" + r.value.toString("hex");
    const list = byValue.get(k);
    assert.ok(list && list.length > 0, "record " + i + " missing");
    const m = list.shift();
    for (const [hk, hv] of Object.entries(r.headers))
      assert.ok(Buffer.compare(m.headers[hk], hv) === 0, "header " + hk + " of record " + i);
    assert.strictEqual(Object.keys(m.headers).length, Object.keys(r.headers).length);
  }
  console.log("ok: kafkajs " + N + " records with keys and headers round-tripped");
}

main().catch((e) => { console.error("FAIL:", e); process.exit(1); });
