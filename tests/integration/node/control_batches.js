// kafkajs 2.2.4 over a log holding record-less control batches (Raft NOOPs, DESIGN.md §6):
// reads partition 0 of TOPIC from the beginning with maxBytesPerPartition MAXB (small: one
// batch per response) and prints "offset value" per record; exits 1 unless it sees COUNT
// records within 30 s (kafkajs treats a response that holds only an empty batch as the end of
// the data and may jump to HW - 1: a skipped record shows up here).
// usage: node control_batches.js BROKER TOPIC COUNT MAXB
"use strict";
const { Kafka, logLevel } = require("kafkajs");

const [broker, topic, count, maxb] = [process.argv[2], process.argv[3], Number(process.argv[4]),
                                      Number(process.argv[5])];

async function main() {
  const kafka = new Kafka({ clientId: "control-batches", brokers: [broker], logLevel: logLevel.WARN });
  const consumer = kafka.consumer({ groupId: "control-batches-kjs", maxBytesPerPartition: maxb,
                                    maxBytes: Math.max(maxb, 1024), maxWaitTimeInMs: 50 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const got = [];
  let done;
  const finished = new Promise((resolve) => { done = resolve; });
  const timer = setTimeout(done, 30000);
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      if (partition === 0) got.push(message.offset + " " + message.value.toString());
      if (got.length >= count) { clearTimeout(timer); setTimeout(done, 500); }
    },
  });
  await finished;
  await consumer.disconnect();
  for (const l of got) console.log(l);
  if (got.length < count) {
    console.error("kafkajs saw " + got.length + " of " + count + " records");
    process.exit(1);
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
