"""Without an authorizer, the ACL APIs answer as a Kafka broker without authorizer.class.name
does: kafka-python 2.0.2's KafkaAdminClient gets SECURITY_DISABLED from DescribeAcls (raised),
CreateAcls (the creation fails) and DeleteAcls (the filter fails), and nothing is stored.

usage: acl_disabled.py BOOTSTRAP"""
import sys

from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType, KafkaAdminClient,
                         ResourcePattern, ResourcePatternFilter, ResourceType)
from kafka.admin.acl_resource import ACLResourcePatternType
from kafka.errors import SecurityDisabledError

def is_disabled(e):
    """kafka-python hands back the error's class or an instance of it"""
    return e is SecurityDisabledError or isinstance(e, SecurityDisabledError)


admin = KafkaAdminClient(bootstrap_servers=sys.argv[1])
acl = ACL(principal="User:alice", host="*", operation=ACLOperation.WRITE,
          permission_type=ACLPermissionType.ALLOW,
          resource_pattern=ResourcePattern(ResourceType.TOPIC, "orders-",
                                           ACLResourcePatternType.PREFIXED))
res = admin.create_acls([acl])
assert not res["succeeded"], res
assert len(res["failed"]) == 1 and is_disabled(res["failed"][0][1]), res
flt = ACLFilter(principal=None, host="*", operation=ACLOperation.ANY,
                permission_type=ACLPermissionType.ANY,
                resource_pattern=ResourcePatternFilter(ResourceType.ANY, None,
                                                       ACLResourcePatternType.ANY))
try:
    admin.describe_acls(flt)
    sys.exit("describe_acls succeeded without an authorizer")
except SecurityDisabledError:
    pass
deleted = admin.delete_acls([flt])
assert len(deleted) == 1 and is_disabled(deleted[0][2]), deleted
admin.close()
print("ok: CreateAcls, DescribeAcls and DeleteAcls answered SECURITY_DISABLED")
