// kafkajs 2.2.4 over TLS and/or SASL: produce records and consume them back in a consumer group,
// with the broker's advertised address checked; or, with expect=fail, check that connecting fails
// with kafkajs's normal error.
// usage: node tls_kafkajs.js BROKER TOPIC CA_FILE|- CERT_FILE|- KEY_FILE|- ok|fail [plaintext|tls]
//        [MECHANISM USER PASSWORD]  (plain, scram-sha-256 or scram-sha-512)
"use strict";
const assert = require("assert");
const fs = require("fs");
const { Kafka, logLevel } = require("kafkajs");

const [broker, topic, caFile, certFile, keyFile, expect, plain, mechanism, user, password] =
  process.argv.slice(2);
const N = 200;

function ssl() {
  if (plain === "plaintext") return undefined;
  const o = { ca: [fs.readFileSync(caFile, "utf8")], rejectUnauthorized: true };
  if (certFile !== "-") {
    o.cert = fs.readFileSync(certFile, "utf8");
    o.key = fs.readFileSync(keyFile, "utf8");
  }
  return o;
}

function values() {
  const out = [];
  for (let i = 0; i < N; i++) out.push(Buffer.concat([Buffer.from("kafkajs-" + i + "-"), Buffer.alloc(i * 7, i % 251)]));
  return out;
}

async function main() {
  const sasl = mechanism ? { mechanism, username: user, password } : undefined;
  const kafka = new Kafka({ clientId: "itest-tls", brokers: [broker], ssl: ssl(), sasl, logLevel: logLevel.NOTHING,
                            connectionTimeout: 3000, requestTimeout: 5000, retry: { retries: expect === "fail" ? 0 : 5 } });
  const admin = kafka.admin();
  if (expect === "fail") {
    try {
      await admin.connect();
      await admin.fetchTopicMetadata({ topics: [] });
    } catch (e) {
      console.log("ok: kafkajs refused as expected: " + e.name + ": " + e.message);
      await admin.disconnect().catch(() => {});
      process.exit(0); /* a failed SASL exchange leaves kafkajs's reconnect timers behind */
    }
    throw new Error("kafkajs: connecting succeeded but should have failed");
  }
  await admin.connect();
  /* kafkajs 2.2.4's describeCluster destructures what brokerPool.withBroker returns, and that
   * swallows a failed Metadata request (a timeout on a busy machine) into null: a TypeError its
   * retrier never retries. Ask again, at most three times in all. */
  let cluster;
  for (let attempt = 1; ; attempt++) {
    try {
      cluster = await admin.describeCluster();
      break;
    } catch (e) {
      if (!(e instanceof TypeError) || attempt === 3) throw e;
      console.log("note: describeCluster attempt " + attempt + " got no Metadata answer: " + e.message);
    }
  }
  const advertised = cluster.brokers.map((b) => b.host + ":" + b.port);
  assert.deepStrictEqual(advertised, [broker], "advertised " + advertised + ", bootstrapped on " + broker);
  const producer = kafka.producer();
  await producer.connect();
  const want = values();
  for (let i = 0; i < N; i += 50)
    await producer.send({ topic, acks: -1, messages: want.slice(i, i + 50).map((v) => ({ value: v })) });
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: "g-" + topic });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const got = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("consumed " + got.length + " of " + N)), 30000);
    consumer.run({
      eachMessage: async ({ message }) => {
        got.push(message.value);
        if (got.length === N) { clearTimeout(timer); resolve(); }
      },
    }).catch(reject);
  });
  await consumer.disconnect();
  await admin.disconnect();
  for (let i = 0; i < N; i++) assert.ok(got[i].equals(want[i]), "record " + i + " differs");
  console.log("ok: kafkajs produced and consumed " + N + " records in a group over " + (plain === "plaintext" ? "plaintext" : "TLS") + (mechanism ? " with SASL " + mechanism : ""));
}

main().catch((e) => { console.error("FAIL: " + (e.stack || e)); process.exit(1); });
