// @kafkajs/confluent-schema-registry against StreamPulse's registry: register, then encode and
// decode through records produced and consumed with kafkajs, for Avro, Protobuf (a schema that
// imports another through a reference) and JSON Schema, and the library's look-ups by subject
// and version. usage: node schema_registry.js BROKER REGISTRY_URL PREFIX
'use strict';
const assert = require('assert');
const { Kafka, logLevel } = require('kafkajs');
const { SchemaRegistry, SchemaType } = require('@kafkajs/confluent-schema-registry');

const [broker, url, prefix] = process.argv.slice(2);
const registry = new SchemaRegistry({ host: url });
const kafka = new Kafka({ brokers: [broker], clientId: 'sr-test', logLevel: logLevel.NOTHING });

async function roundTrip(topic, id, values) {
  const producer = kafka.producer();
  await producer.connect();
  const encoded = [];
  for (const v of values) encoded.push({ value: await registry.encode(id, v) });
  await producer.send({ topic, messages: encoded });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: `${topic}-g` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const got = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${got.length} of ${values.length} records in 20 s`)), 20000);
    consumer.run({
      eachMessage: async ({ message }) => {
        got.push(await registry.decode(message.value));
        if (got.length === values.length) { clearTimeout(timer); resolve(); }
      },
    }).catch(reject);
  });
  await consumer.disconnect();
  return got;
}

async function main() {
  // Avro
  const avro = {
    type: 'record', name: 'Payment', namespace: 'shop',
    fields: [{ name: 'id', type: 'string' }, { name: 'cents', type: 'long' }],
  };
  const { id: avroId } = await registry.register(
    { type: SchemaType.AVRO, schema: JSON.stringify(avro) }, { subject: `${prefix}payments-value` });
  assert.strictEqual(await registry.getLatestSchemaId(`${prefix}payments-value`), avroId);
  assert.strictEqual(await registry.getRegistryId(`${prefix}payments-value`, 1), avroId);
  const payments = [{ id: 'a', cents: 100 }, { id: 'b', cents: 250 }];
  const paid = await roundTrip(`${prefix}payments`, avroId, payments);
  assert.deepStrictEqual(JSON.parse(JSON.stringify(paid)), payments); // avsc gives Payment objects
  console.log(`avro: id ${avroId}, ${payments.length} records equal`);

  // Protobuf, one schema importing another
  const money = 'syntax = "proto3";\npackage shop;\nmessage Money {\n  int32 cents = 1;\n  string currency = 2;\n}\n';
  const { id: moneyId } = await registry.register(
    { type: SchemaType.PROTOBUF, schema: money }, { subject: `${prefix}money.proto` });
  const order = 'syntax = "proto3";\npackage shop;\nimport "money.proto";\nmessage Order {\n  string id = 1;\n  Money total = 2;\n}\n';
  const { id: orderId } = await registry.register({
    type: SchemaType.PROTOBUF, schema: order,
    references: [{ name: 'money.proto', subject: `${prefix}money.proto`, version: 1 }],
  }, { subject: `${prefix}orders-value` });
  assert.notStrictEqual(orderId, moneyId);
  const orders = [{ id: 'o1', total: { cents: 5, currency: 'EUR' } },
    { id: 'o2', total: { cents: 7, currency: 'USD' } }];
  const back = await roundTrip(`${prefix}orders`, orderId, orders);
  assert.deepStrictEqual(JSON.parse(JSON.stringify(back)), orders);
  console.log(`protobuf with an import: id ${orderId}, ${orders.length} records equal`);

  // JSON Schema
  const jsonSchema = {
    $schema: 'http://json-schema.org/draft-07/schema#', title: 'Click', type: 'object',
    properties: { page: { type: 'string' }, ms: { type: 'integer' } }, required: ['page'],
  };
  const { id: jsonId } = await registry.register(
    { type: SchemaType.JSON, schema: JSON.stringify(jsonSchema) }, { subject: `${prefix}clicks-value` });
  const clicks = [{ page: '/a', ms: 12 }, { page: '/b', ms: 30 }];
  assert.deepStrictEqual(await roundTrip(`${prefix}clicks`, jsonId, clicks), clicks);
  await assert.rejects(registry.encode(jsonId, { ms: 1 }), /invalid payload/i); // no page
  console.log(`json schema: id ${jsonId}, ${clicks.length} records equal, invalid refused`);
}

main().catch((e) => { console.error(e); process.exit(1); });
