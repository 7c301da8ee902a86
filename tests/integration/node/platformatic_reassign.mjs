// @platformatic/kafka 1.35.0's AlterPartitionReassignments v0 and ListPartitionReassignments v0
// requests (KIP-455) against StreamPulse, on one of its connections: nothing is being moved
// once `topic alter --replication-factor` returned; refusals carry Kafka's codes: an unknown
// broker or a replica named twice INVALID_REPLICA_ASSIGNMENT (39), a cancel with
// nothing in progress NO_REASSIGNMENT_IN_PROGRESS (85), an unknown partition or topic
// UNKNOWN_TOPIC_OR_PARTITION (3); a target equal to the replicas is accepted and moves nothing.
//
// usage: node platformatic_reassign.mjs BROKER
import assert from 'node:assert/strict'
import { Connection, alterPartitionReassignmentsV0, listPartitionReassignmentsV0 } from '@platformatic/kafka'

const broker = process.argv[2]
const [host, port] = [broker.split(':')[0], Number(broker.split(':')[1])]
const conn = new Connection('plt-reassign')
await new Promise((resolve, reject) => conn.connect(host, port, e => (e ? reject(e) : resolve())))

const list = await listPartitionReassignmentsV0.api.async(conn, 10000,
  [{ name: 'orders', partitionIndexes: [0, 1] }, { name: 'early', partitionIndexes: [0, 1] }])
assert.equal(list.errorCode, 0)
assert.deepEqual(list.topics, [], 'nothing is being reassigned')
console.log('ListPartitionReassignments: nothing in progress')

// the per-partition codes of one AlterPartitionReassignments, as [topic, partition, code]
const alter = async topics => {
  let r
  try {
    r = await alterPartitionReassignmentsV0.api.async(conn, 10000, false, topics)
  } catch (e) { // the client throws on any error code and keeps the response
    r = e.response
    assert.ok(r, 'a response with the errors: ' + e)
  }
  assert.equal(r.errorCode, 0)
  return r.responses.flatMap(t => t.partitions.map(p => [t.name, p.partitionIndex, p.errorCode]))
}
assert.deepEqual(await alter([{ name: 'orders', partitions: [
  { partitionIndex: 0, replicas: [1, 2, 9] }, // broker 9 is not registered
  { partitionIndex: 1, replicas: [2, 2] } // a replica twice
] }]), [['orders', 0, 39], ['orders', 1, 39]])
assert.deepEqual(await alter([{ name: 'orders', partitions: [{ partitionIndex: 0, replicas: null }] }]),
  [['orders', 0, 85]], 'cancel with nothing in progress')
assert.deepEqual(await alter([
  { name: 'orders', partitions: [{ partitionIndex: 7, replicas: [1, 2, 3] }] },
  { name: 'nosuch', partitions: [{ partitionIndex: 0, replicas: [1] }] }
]), [['orders', 7, 3], ['nosuch', 0, 3]])
assert.deepEqual(await alter([{ name: 'early', partitions: [{ partitionIndex: 0, replicas: [3, 1, 2] }] }]),
  [['early', 0, 0]], 'the replicas it has: accepted, nothing moves')
const after = await listPartitionReassignmentsV0.api.async(conn, 10000, [{ name: 'early', partitionIndexes: [0] }])
assert.deepEqual(after.topics, [], 'still nothing in progress')
console.log('AlterPartitionReassignments: refusals 39, 85, 3 as Kafka gives them; a no-op accepted')
conn.close(() => {})
