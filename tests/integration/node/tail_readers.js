// kafkajs 2.2.4 as a group member over partition 0 of TOPIC (t_raft_entries.sh): reads until
// it has COUNT records and its committed offset (autocommit) equals the high watermark, then
// prints "offset value" per record. Exits 1 unless both happen within 30 s: a consumer held
// before a run of Raft entries, or one that jumps past data, shows up here. With COUNT 0 (an
// empty partition) it checks that the high watermark is the log start and nothing arrives.
// usage: node tail_readers.js BROKER TOPIC GROUP COUNT
"use strict";
const { Kafka, logLevel } = require("kafkajs");

const [broker, topic, group, count] = [process.argv[2], process.argv[3], process.argv[4],
                                       Number(process.argv[5])];

async function main() {
  const kafka = new Kafka({ clientId: "tail-readers", brokers: broker.split(","), logLevel: logLevel.WARN });
  const admin = kafka.admin();
  await admin.connect();
  const consumer = kafka.consumer({ groupId: group, maxWaitTimeInMs: 50 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const got = [];
  await consumer.run({
    autoCommitThreshold: 1,
    eachMessage: async ({ partition, message }) => {
      if (partition === 0) got.push(message.offset + " " + message.value.toString());
    },
  });
  const deadline = Date.now() + 30000;
  let ok = false, why = "";
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    const hw = (await admin.fetchTopicOffsets(topic)).find((p) => p.partition === 0);
    if (count === 0) {
      ok = got.length === 0 && hw.high === hw.low;
      why = "high " + hw.high + ", low " + hw.low + ", " + got.length + " records";
      if (ok && Date.now() > deadline - 28000) break; /* 2 s without records */
      continue;
    }
    const committed = (await admin.fetchOffsets({ groupId: group, topics: [topic] }))[0]
      .partitions.find((p) => p.partition === 0);
    why = got.length + " of " + count + " records, committed " + committed.offset + ", high " + hw.high;
    if (got.length >= count && committed.offset === hw.high) { ok = true; break; }
  }
  await consumer.disconnect();
  await admin.disconnect();
  for (const l of got) console.log(l);
  if (!ok) {
    console.error("kafkajs did not reach the end within 30 s: " + why);
    process.exit(1);
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
