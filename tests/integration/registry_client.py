"""The schema registry through Debian's confluent-kafka (1.7): SchemaRegistryClient's every
call, the errors it raises, then records produced and consumed through the broker with the
legacy AvroProducer / AvroConsumer (python3-avro), with ProtobufSerializer /
ProtobufDeserializer (python3-protobuf, the message class built at run time) and with
JSONSerializer / JSONDeserializer (python3-jsonschema).

usage: registry_client.py BROKER REGISTRY_URL TOPIC_PREFIX
Prints one line per step; exits non-zero (with the failing assertion) on any difference."""
import json
import sys
import uuid

from confluent_kafka import DeserializingConsumer, SerializingProducer
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

broker, url, prefix = sys.argv[1], sys.argv[2], sys.argv[3]
sr = SchemaRegistryClient({"url": url})


def err_code(fn):
    try:
        fn()
    except SchemaRegistryError as e:
        return e.error_code
    raise AssertionError("no error from %s" % fn)


V1 = json.dumps({"type": "record", "name": "Order", "namespace": "shop",
                 "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": "string"}]})
V2 = json.dumps({"type": "record", "name": "Order", "namespace": "shop",
                 "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": "string"},
                            {"name": "qty", "type": "int", "default": 1}]})
BAD = json.dumps({"type": "record", "name": "Order", "namespace": "shop",
                  "fields": [{"name": "id", "type": "string"}]})
subject = prefix + "orders-value"

# register, get, lookup
id1 = sr.register_schema(subject, Schema(V1, "AVRO"))
assert sr.register_schema(subject, Schema(V1, "AVRO")) == id1
got = sr.get_schema(id1)
assert got.schema_type == "AVRO" and json.loads(got.schema_str) == json.loads(V1), got.schema_str
found = sr.lookup_schema(subject, Schema(V1, "AVRO"))
assert (found.schema_id, found.subject, found.version) == (id1, subject, 1), vars(found)
print("register/get/lookup: id", id1)

# compatibility and config
assert sr.get_compatibility() == "BACKWARD"
assert sr.test_compatibility(subject, Schema(V2, "AVRO")) is True
assert sr.test_compatibility(subject, Schema(BAD, "AVRO")) is False
assert err_code(lambda: sr.register_schema(subject, Schema(BAD, "AVRO"))) == 409
id2 = sr.register_schema(subject, Schema(V2, "AVRO"))
assert id2 != id1
assert sr.get_versions(subject) == [1, 2]
latest = sr.get_latest_version(subject)
assert (latest.version, latest.schema_id) == (2, id2)
assert sr.get_version(subject, 1).schema_id == id1
assert err_code(lambda: sr.get_compatibility(subject)) == 40408
assert sr.set_compatibility(subject, "FULL") == {"compatibility": "FULL"}
assert sr.get_compatibility(subject) == "FULL"
assert sr.set_compatibility(level="FORWARD") == {"compatibility": "FORWARD"}
assert sr.get_compatibility() == "FORWARD"
assert sr.set_compatibility(level="BACKWARD") == {"compatibility": "BACKWARD"}
assert err_code(lambda: sr.set_compatibility(level="SIDEWAYS")) == 42203
print("compatibility and config: ok")

# the same schema under another subject keeps its id
other = prefix + "other-value"
assert sr.register_schema(other, Schema(V1, "AVRO")) == id1
assert sorted(s for s in sr.get_subjects() if s.startswith(prefix)) == sorted([subject, other])

# errors
assert err_code(lambda: sr.get_schema(999999)) == 40403
assert err_code(lambda: sr.get_latest_version(prefix + "nobody")) == 40401
assert err_code(lambda: sr.get_version(subject, 7)) == 40402
assert err_code(lambda: sr.register_schema(subject, Schema("{\"type\": \"recrod\"}", "AVRO"))) == 42201
print("errors: ok")

# deletes: soft, then permanent
assert sr.delete_subject(other, permanent=True) == [1]
assert other not in sr.get_subjects()
third = prefix + "third-value"
assert sr.register_schema(third, Schema(V1, "AVRO")) == id1
assert sr.delete_version(third, 1) == 1
assert err_code(lambda: sr.get_versions(third)) == 40401
assert err_code(lambda: sr.delete_version(third, 1)) == 40406  # soft-deleted already
print("deletes: ok")

# Avro records through the broker, the legacy API (python3-avro)
from confluent_kafka import avro
from confluent_kafka.avro import AvroConsumer, AvroProducer

topic = prefix + "orders"
value_schema = avro.loads(V2)
p = AvroProducer({"bootstrap.servers": broker, "schema.registry.url": url},
                 default_value_schema=value_schema)
sent = [{"id": i, "item": "item-%d" % i, "qty": i % 3} for i in range(20)]
for v in sent:
    p.produce(topic=topic, value=v)
assert p.flush(30) == 0
c = AvroConsumer({"bootstrap.servers": broker, "schema.registry.url": url,
                  "group.id": "g-" + uuid.uuid4().hex, "auto.offset.reset": "earliest"})
c.subscribe([topic])
got = []
for _ in range(300):
    m = c.poll(0.1)
    if m is not None and m.error() is None:
        got.append(m.value())
    if len(got) == len(sent):
        break
c.close()
assert got == sent, (got, sent)
assert sr.get_latest_version(topic + "-value").schema_id == id2  # TopicNameStrategy
print("AvroProducer/AvroConsumer: %d records equal" % len(got))

# Protobuf records: a message class built from a descriptor at run time
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import StringDeserializer, StringSerializer

fdp = descriptor_pb2.FileDescriptorProto(name="shop/event.proto", package="shop",
                                         syntax="proto3")
msg = fdp.message_type.add(name="Event")
msg.field.add(name="id", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
              label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
msg.field.add(name="name", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
              label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
pool = descriptor_pool.DescriptorPool()
pool.Add(fdp)
Event = message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName("shop.Event"))

ptopic = prefix + "events"
prod = SerializingProducer({"bootstrap.servers": broker, "key.serializer": StringSerializer(),
                            "value.serializer": ProtobufSerializer(Event, sr)})
events = [Event(id=i, name="e%d" % i) for i in range(10)]
for e in events:
    prod.produce(ptopic, key=str(e.id), value=e)
assert prod.flush(30) == 0
cons = DeserializingConsumer({"bootstrap.servers": broker, "group.id": "p-" + uuid.uuid4().hex,
                              "auto.offset.reset": "earliest",
                              "key.deserializer": StringDeserializer(),
                              "value.deserializer": ProtobufDeserializer(Event)})
cons.subscribe([ptopic])
back = []
for _ in range(300):
    m = cons.poll(0.1)
    if m is not None and m.error() is None:
        back.append(m.value())
    if len(back) == len(events):
        break
cons.close()
assert back == events, (back, events)
reg = sr.get_latest_version(ptopic + "-value")
assert reg.schema.schema_type == "PROTOBUF", reg.schema.schema_type
assert "message Event" in reg.schema.schema_str, reg.schema.schema_str
print("ProtobufSerializer/ProtobufDeserializer: %d records equal" % len(back))

# JSON Schema records, and a compatibility refusal of JSON Schema's own rules
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer

jschema = json.dumps({"$schema": "http://json-schema.org/draft-07/schema#", "title": "Reading",
                      "type": "object", "additionalProperties": False,
                      "properties": {"sensor": {"type": "string"},
                                     "celsius": {"type": "number"}},
                      "required": ["sensor"]})
jtopic = prefix + "readings"
jprod = SerializingProducer({"bootstrap.servers": broker,
                             "value.serializer": JSONSerializer(jschema, sr)})
readings = [{"sensor": "s%d" % i, "celsius": i / 2} for i in range(6)]
for r in readings:
    jprod.produce(jtopic, value=r)
assert jprod.flush(30) == 0
jcons = DeserializingConsumer({"bootstrap.servers": broker, "group.id": "j-" + uuid.uuid4().hex,
                               "auto.offset.reset": "earliest",
                               "value.deserializer": JSONDeserializer(jschema)})
jcons.subscribe([jtopic])
jback = []
for _ in range(300):
    m = jcons.poll(0.1)
    if m is not None and m.error() is None:
        jback.append(m.value())
    if len(jback) == len(readings):
        break
jcons.close()
assert jback == readings, (jback, readings)
jreg = sr.get_latest_version(jtopic + "-value")
assert jreg.schema.schema_type == "JSON", jreg.schema.schema_type
# a closed content model that gains a required property: old data lacks it (BACKWARD refuses)
narrowed = json.loads(jschema)
narrowed["properties"]["unit"] = {"type": "string"}
narrowed["required"] = ["sensor", "unit"]
assert sr.test_compatibility(jtopic + "-value", Schema(json.dumps(narrowed), "JSON")) is False
widened = json.loads(jschema)
widened["properties"]["unit"] = {"type": "string"}
assert sr.test_compatibility(jtopic + "-value", Schema(json.dumps(widened), "JSON")) is True
print("JSONSerializer/JSONDeserializer: %d records equal; compatibility judged" % len(jback))
