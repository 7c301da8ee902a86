// A kafkajs 2.2.4 group consumer for the group integration tests.
// usage: node group_consumer.js BROKER GROUP TOPIC range|roundrobin OUT STOPFILE
// Appends "partition offset value" per record to OUT and "assign p,p,..." lines to OUT.events;
// runs until STOPFILE exists, then commits and disconnects (leaving the group).
"use strict";
const fs = require("fs");
const { Kafka, logLevel, PartitionAssigners, AssignerProtocol } = require("kafkajs");

const [broker, group, topic, assignor, outPath, stop] = process.argv.slice(2);

// kafkajs ships only round-robin; this is the range assignor, as Kafka's RangeAssignor does it.
const RangeAssigner = ({ cluster }) => ({
  name: "range",
  version: 0,
  async assign({ members, topics }) {
    const sorted = members.map((m) => m.memberId).sort();
    const plan = {};
    for (const id of sorted) plan[id] = {};
    for (const t of topics) {
      const parts = cluster.findTopicPartitionMetadata(t).map((p) => p.partitionId).sort((a, b) => a - b);
      const per = Math.floor(parts.length / sorted.length), extra = parts.length % sorted.length;
      let next = 0;
      sorted.forEach((id, i) => {
        const n = per + (i < extra ? 1 : 0);
        plan[id][t] = parts.slice(next, next + n);
        next += n;
      });
    }
    return sorted.map((memberId) => ({
      memberId,
      memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 0, assignment: plan[memberId] }),
    }));
  },
  protocol({ topics }) {
    return { name: "range", metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics }) };
  },
});

async function main() {
  const kafka = new Kafka({ clientId: "kjs-group", brokers: [broker], logLevel: logLevel.WARN });
  const consumer = kafka.consumer({
    groupId: group, sessionTimeout: 6000, heartbeatInterval: 500, rebalanceTimeout: 10000,
    maxWaitTimeInMs: 500, // a long poll held at stop or at a rebalance delays both by this much
    partitionAssigners: [assignor === "range" ? RangeAssigner : PartitionAssigners.roundRobin],
  });
  const out = fs.openSync(outPath, "a");
  const events = fs.openSync(outPath + ".events", "a");
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    const parts = (e.payload.memberAssignment[topic] || []).slice().sort((a, b) => a - b);
    fs.writeSync(events, "assign " + parts.join(",") + "\n");
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommitInterval: 500,
    autoCommitThreshold: 1,
    eachMessage: async ({ partition, message }) => {
      fs.writeSync(out, partition + " " + message.offset + " " + message.value.toString() + "\n");
    },
  });
  while (!fs.existsSync(stop)) await new Promise((r) => setTimeout(r, 100));
  await consumer.stop();       // commits what was processed
  await consumer.disconnect(); // LeaveGroup
}

main().catch((e) => { console.error("FAIL:", e); process.exit(1); });
