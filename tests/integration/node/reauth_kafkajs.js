// kafkajs 2.2.4 re-authenticates (KIP-368) when the broker gives its SASL sessions a lifetime
// (connections.max.reauth.ms): a producer keeps sending, one batch every 200 ms, for longer than
// several lifetimes, on the same connections; every send must succeed.
// usage: node reauth_kafkajs.js BROKER TOPIC MECHANISM USER PASSWORD SECONDS
"use strict";
const { Kafka, logLevel } = require("kafkajs");
const [broker, topic, mechanism, username, password, secs] = process.argv.slice(2);

async function main() {
  // re-authenticate once less than 1 s of a session is left (kafkajs's default is 10 s)
  const kafka = new Kafka({ clientId: "itest-reauth", brokers: [broker], logLevel: logLevel.NOTHING,
                            sasl: { mechanism, username, password }, reauthenticationThreshold: 1000,
                            retry: { retries: 0 } });
  const producer = kafka.producer();
  await producer.connect();
  const end = Date.now() + Number(secs) * 1000;
  let sent = 0;
  while (Date.now() < end) {
    await producer.send({ topic, acks: -1, messages: [{ value: "reauth-" + sent }] });
    sent++;
    await new Promise((r) => setTimeout(r, 200));
  }
  await producer.disconnect();
  console.log("ok: kafkajs sent " + sent + " batches over " + secs + " s of " + mechanism + " sessions");
}
main().catch((e) => { console.error("FAIL: " + e.name + ": " + e.message); process.exit(1); });
