/* The files a Protobuf schema may import without a schema reference, as Confluent's registry
 * provides them: protobuf's well-known types, google/type's common types, and Confluent's own
 * meta and decimal types. Only their declarations matter here (names, numbers, types, extension
 * ranges), so they are written compactly, without comments or language options. descriptor.proto
 * is the protobuf 3.21 one (before editions), which custom options extend. */
#include <string.h>

#include "registry/proto_ast.h"

static const char any_proto[] =
    "syntax = \"proto3\"; package google.protobuf;\n"
    "message Any { string type_url = 1; bytes value = 2; }\n";

static const char duration_proto[] =
    "syntax = \"proto3\"; package google.protobuf;\n"
    "message Duration { int64 seconds = 1; int32 nanos = 2; }\n";

static const char timestamp_proto[] =
    "syntax = \"proto3\"; package google.protobuf;\n"
    "message Timestamp { int64 seconds = 1; int32 nanos = 2; }\n";

static const char empty_proto[] =
    "syntax = \"proto3\"; package google.protobuf;\n"
    "message Empty {}\n";

static const char field_mask_proto[] =
    "syntax = \"proto3\"; package google.protobuf;\n"
    "message FieldMask { repeated string paths = 1; }\n";

static const char source_context_proto[] =
    "syntax = \"proto3\"; package google.protobuf;\n"
    "message SourceContext { string file_name = 1; }\n";

static const char struct_proto[] =
    "syntax = \"proto3\"; package google.protobuf;\n"
    "message Struct { map<string, Value> fields = 1; }\n"
    "message Value { oneof kind { NullValue null_value = 1; double number_value = 2;\n"
    "  string string_value = 3; bool bool_value = 4; Struct struct_value = 5;\n"
    "  ListValue list_value = 6; } }\n"
    "enum NullValue { NULL_VALUE = 0; }\n"
    "message ListValue { repeated Value values = 1; }\n";

static const char wrappers_proto[] =
    "syntax = \"proto3\"; package google.protobuf;\n"
    "message DoubleValue { double value = 1; }\n"
    "message FloatValue { float value = 1; }\n"
    "message Int64Value { int64 value = 1; }\n"
    "message UInt64Value { uint64 value = 1; }\n"
    "message Int32Value { int32 value = 1; }\n"
    "message UInt32Value { uint32 value = 1; }\n"
    "message BoolValue { bool value = 1; }\n"
    "message StringValue { string value = 1; }\n"
    "message BytesValue { bytes value = 1; }\n";

static const char type_proto[] =
    "syntax = \"proto3\"; package google.protobuf;\n"
    "import \"google/protobuf/any.proto\"; import \"google/protobuf/source_context.proto\";\n"
    "message Type { string name = 1; repeated Field fields = 2; repeated string oneofs = 3;\n"
    "  repeated Option options = 4; SourceContext source_context = 5; Syntax syntax = 6;\n"
    "  string edition = 7; }\n"
    "message Field {\n"
    "  enum Kind { TYPE_UNKNOWN = 0; TYPE_DOUBLE = 1; TYPE_FLOAT = 2; TYPE_INT64 = 3;\n"
    "    TYPE_UINT64 = 4; TYPE_INT32 = 5; TYPE_FIXED64 = 6; TYPE_FIXED32 = 7; TYPE_BOOL = 8;\n"
    "    TYPE_STRING = 9; TYPE_GROUP = 10; TYPE_MESSAGE = 11; TYPE_BYTES = 12;\n"
    "    TYPE_UINT32 = 13; TYPE_ENUM = 14; TYPE_SFIXED32 = 15; TYPE_SFIXED64 = 16;\n"
    "    TYPE_SINT32 = 17; TYPE_SINT64 = 18; }\n"
    "  enum Cardinality { CARDINALITY_UNKNOWN = 0; CARDINALITY_OPTIONAL = 1;\n"
    "    CARDINALITY_REQUIRED = 2; CARDINALITY_REPEATED = 3; }\n"
    "  Kind kind = 1; Cardinality cardinality = 2; int32 number = 3; string name = 4;\n"
    "  string type_url = 6; int32 oneof_index = 7; bool packed = 8;\n"
    "  repeated Option options = 9; string json_name = 10; string default_value = 11; }\n"
    "message Enum { string name = 1; repeated EnumValue enumvalue = 2;\n"
    "  repeated Option options = 3; SourceContext source_context = 4; Syntax syntax = 5;\n"
    "  string edition = 6; }\n"
    "message EnumValue { string name = 1; int32 number = 2; repeated Option options = 3; }\n"
    "message Option { string name = 1; Any value = 2; }\n"
    "enum Syntax { SYNTAX_PROTO2 = 0; SYNTAX_PROTO3 = 1; SYNTAX_EDITIONS = 2; }\n";

static const char api_proto[] =
    "syntax = \"proto3\"; package google.protobuf;\n"
    "import \"google/protobuf/source_context.proto\"; import \"google/protobuf/type.proto\";\n"
    "message Api { string name = 1; repeated Method methods = 2; repeated Option options = 3;\n"
    "  string version = 4; SourceContext source_context = 5; repeated Mixin mixins = 6;\n"
    "  Syntax syntax = 7; }\n"
    "message Method { string name = 1; string request_type_url = 2;\n"
    "  bool request_streaming = 3; string response_type_url = 4;\n"
    "  bool response_streaming = 5; repeated Option options = 6; Syntax syntax = 7; }\n"
    "message Mixin { string name = 1; string root = 2; }\n";

static const char descriptor_proto[] =
    "syntax = \"proto2\"; package google.protobuf;\n"
    "message FileDescriptorSet { repeated FileDescriptorProto file = 1; }\n"
    "message FileDescriptorProto { optional string name = 1; optional string package = 2;\n"
    "  repeated string dependency = 3; repeated int32 public_dependency = 10;\n"
    "  repeated int32 weak_dependency = 11; repeated DescriptorProto message_type = 4;\n"
    "  repeated EnumDescriptorProto enum_type = 5;\n"
    "  repeated ServiceDescriptorProto service = 6;\n"
    "  repeated FieldDescriptorProto extension = 7; optional FileOptions options = 8;\n"
    "  optional SourceCodeInfo source_code_info = 9; optional string syntax = 12; }\n"
    "message DescriptorProto { optional string name = 1;\n"
    "  repeated FieldDescriptorProto field = 2; repeated FieldDescriptorProto extension = 6;\n"
    "  repeated DescriptorProto nested_type = 3; repeated EnumDescriptorProto enum_type = 4;\n"
    "  message ExtensionRange { optional int32 start = 1; optional int32 end = 2;\n"
    "    optional ExtensionRangeOptions options = 3; }\n"
    "  repeated ExtensionRange extension_range = 5;\n"
    "  repeated OneofDescriptorProto oneof_decl = 8; optional MessageOptions options = 7;\n"
    "  message ReservedRange { optional int32 start = 1; optional int32 end = 2; }\n"
    "  repeated ReservedRange reserved_range = 9; repeated string reserved_name = 10; }\n"
    "message ExtensionRangeOptions {\n"
    "  repeated UninterpretedOption uninterpreted_option = 999; extensions 1000 to max; }\n"
    "message FieldDescriptorProto {\n"
    "  enum Type { TYPE_DOUBLE = 1; TYPE_FLOAT = 2; TYPE_INT64 = 3; TYPE_UINT64 = 4;\n"
    "    TYPE_INT32 = 5; TYPE_FIXED64 = 6; TYPE_FIXED32 = 7; TYPE_BOOL = 8; TYPE_STRING = 9;\n"
    "    TYPE_GROUP = 10; TYPE_MESSAGE = 11; TYPE_BYTES = 12; TYPE_UINT32 = 13;\n"
    "    TYPE_ENUM = 14; TYPE_SFIXED32 = 15; TYPE_SFIXED64 = 16; TYPE_SINT32 = 17;\n"
    "    TYPE_SINT64 = 18; }\n"
    "  enum Label { LABEL_OPTIONAL = 1; LABEL_REQUIRED = 2; LABEL_REPEATED = 3; }\n"
    "  optional string name = 1; optional int32 number = 3; optional Label label = 4;\n"
    "  optional Type type = 5; optional string type_name = 6; optional string extendee = 2;\n"
    "  optional string default_value = 7; optional int32 oneof_index = 9;\n"
    "  optional string json_name = 10; optional FieldOptions options = 8;\n"
    "  optional bool proto3_optional = 17; }\n"
    "message OneofDescriptorProto { optional string name = 1;\n"
    "  optional OneofOptions options = 2; }\n"
    "message EnumDescriptorProto { optional string name = 1;\n"
    "  repeated EnumValueDescriptorProto value = 2; optional EnumOptions options = 3;\n"
    "  message EnumReservedRange { optional int32 start = 1; optional int32 end = 2; }\n"
    "  repeated EnumReservedRange reserved_range = 4; repeated string reserved_name = 5; }\n"
    "message EnumValueDescriptorProto { optional string name = 1; optional int32 number = 2;\n"
    "  optional EnumValueOptions options = 3; }\n"
    "message ServiceDescriptorProto { optional string name = 1;\n"
    "  repeated MethodDescriptorProto method = 2; optional ServiceOptions options = 3; }\n"
    "message MethodDescriptorProto { optional string name = 1;\n"
    "  optional string input_type = 2; optional string output_type = 3;\n"
    "  optional MethodOptions options = 4; optional bool client_streaming = 5 [default = false];\n"
    "  optional bool server_streaming = 6 [default = false]; }\n"
    "message FileOptions { optional string java_package = 1;\n"
    "  optional string java_outer_classname = 8; optional bool java_multiple_files = 10;\n"
    "  optional bool java_generate_equals_and_hash = 20;\n"
    "  optional bool java_string_check_utf8 = 27;\n"
    "  enum OptimizeMode { SPEED = 1; CODE_SIZE = 2; LITE_RUNTIME = 3; }\n"
    "  optional OptimizeMode optimize_for = 9 [default = SPEED];\n"
    "  optional string go_package = 11; optional bool cc_generic_services = 16;\n"
    "  optional bool java_generic_services = 17; optional bool py_generic_services = 18;\n"
    "  optional bool php_generic_services = 42; optional bool deprecated = 23;\n"
    "  optional bool cc_enable_arenas = 31 [default = true];\n"
    "  optional string objc_class_prefix = 36; optional string csharp_namespace = 37;\n"
    "  optional string swift_prefix = 39; optional string php_class_prefix = 40;\n"
    "  optional string php_namespace = 41; optional string php_metadata_namespace = 44;\n"
    "  optional string ruby_package = 45;\n"
    "  repeated UninterpretedOption uninterpreted_option = 999;\n"
    "  extensions 1000 to max; reserved 38; }\n"
    "message MessageOptions { optional bool message_set_wire_format = 1;\n"
    "  optional bool no_standard_descriptor_accessor = 2; optional bool deprecated = 3;\n"
    "  optional bool map_entry = 7;\n"
    "  optional bool deprecated_legacy_json_field_conflicts = 11;\n"
    "  repeated UninterpretedOption uninterpreted_option = 999;\n"
    "  extensions 1000 to max; reserved 4, 5, 6, 8, 9; }\n"
    "message FieldOptions {\n"
    "  enum CType { STRING = 0; CORD = 1; STRING_PIECE = 2; }\n"
    "  enum JSType { JS_NORMAL = 0; JS_STRING = 1; JS_NUMBER = 2; }\n"
    "  enum OptionRetention { RETENTION_UNKNOWN = 0; RETENTION_RUNTIME = 1;\n"
    "    RETENTION_SOURCE = 2; }\n"
    "  enum OptionTargetType { TARGET_TYPE_UNKNOWN = 0; TARGET_TYPE_FILE = 1;\n"
    "    TARGET_TYPE_EXTENSION_RANGE = 2; TARGET_TYPE_MESSAGE = 3; TARGET_TYPE_FIELD = 4;\n"
    "    TARGET_TYPE_ONEOF = 5; TARGET_TYPE_ENUM = 6; TARGET_TYPE_ENUM_ENTRY = 7;\n"
    "    TARGET_TYPE_SERVICE = 8; TARGET_TYPE_METHOD = 9; }\n"
    "  optional CType ctype = 1 [default = STRING]; optional bool packed = 2;\n"
    "  optional JSType jstype = 6 [default = JS_NORMAL]; optional bool lazy = 5;\n"
    "  optional bool unverified_lazy = 15; optional bool deprecated = 3;\n"
    "  optional bool weak = 10; optional bool debug_redact = 16;\n"
    "  optional OptionRetention retention = 17; optional OptionTargetType target = 18;\n"
    "  repeated OptionTargetType targets = 19;\n"
    "  repeated UninterpretedOption uninterpreted_option = 999;\n"
    "  extensions 1000 to max; reserved 4; }\n"
    "message OneofOptions {\n"
    "  repeated UninterpretedOption uninterpreted_option = 999; extensions 1000 to max; }\n"
    "message EnumOptions { optional bool allow_alias = 2; optional bool deprecated = 3;\n"
    "  optional bool deprecated_legacy_json_field_conflicts = 6;\n"
    "  repeated UninterpretedOption uninterpreted_option = 999;\n"
    "  extensions 1000 to max; reserved 5; }\n"
    "message EnumValueOptions { optional bool deprecated = 1;\n"
    "  repeated UninterpretedOption uninterpreted_option = 999; extensions 1000 to max; }\n"
    "message ServiceOptions { optional bool deprecated = 33;\n"
    "  repeated UninterpretedOption uninterpreted_option = 999; extensions 1000 to max; }\n"
    "message MethodOptions { optional bool deprecated = 33;\n"
    "  enum IdempotencyLevel { IDEMPOTENCY_UNKNOWN = 0; NO_SIDE_EFFECTS = 1;\n"
    "    IDEMPOTENT = 2; }\n"
    "  optional IdempotencyLevel idempotency_level = 34 [default = IDEMPOTENCY_UNKNOWN];\n"
    "  repeated UninterpretedOption uninterpreted_option = 999; extensions 1000 to max; }\n"
    "message UninterpretedOption {\n"
    "  message NamePart { required string name_part = 1; required bool is_extension = 2; }\n"
    "  repeated NamePart name = 2; optional string identifier_value = 3;\n"
    "  optional uint64 positive_int_value = 4; optional int64 negative_int_value = 5;\n"
    "  optional double double_value = 6; optional bytes string_value = 7;\n"
    "  optional string aggregate_value = 8; }\n"
    "message SourceCodeInfo {\n"
    "  message Location { repeated int32 path = 1 [packed = true];\n"
    "    repeated int32 span = 2 [packed = true]; optional string leading_comments = 3;\n"
    "    optional string trailing_comments = 4;\n"
    "    repeated string leading_detached_comments = 6; }\n"
    "  repeated Location location = 1; }\n"
    "message GeneratedCodeInfo {\n"
    "  message Annotation { repeated int32 path = 1 [packed = true];\n"
    "    optional string source_file = 2; optional int32 begin = 3; optional int32 end = 4;\n"
    "    enum Semantic { NONE = 0; SET = 1; ALIAS = 2; }\n"
    "    optional Semantic semantic = 5; }\n"
    "  repeated Annotation annotation = 1; }\n";

static const char calendar_period_proto[] =
    "syntax = \"proto3\"; package google.type;\n"
    "enum CalendarPeriod { CALENDAR_PERIOD_UNSPECIFIED = 0; DAY = 1; WEEK = 2;\n"
    "  FORTNIGHT = 3; MONTH = 4; QUARTER = 5; HALF = 6; YEAR = 7; }\n";

static const char color_proto[] =
    "syntax = \"proto3\"; package google.type;\n"
    "import \"google/protobuf/wrappers.proto\";\n"
    "message Color { float red = 1; float green = 2; float blue = 3;\n"
    "  google.protobuf.FloatValue alpha = 4; }\n";

static const char date_proto[] =
    "syntax = \"proto3\"; package google.type;\n"
    "message Date { int32 year = 1; int32 month = 2; int32 day = 3; }\n";

static const char datetime_proto[] =
    "syntax = \"proto3\"; package google.type;\n"
    "import \"google/protobuf/duration.proto\";\n"
    "message DateTime { int32 year = 1; int32 month = 2; int32 day = 3; int32 hours = 4;\n"
    "  int32 minutes = 5; int32 seconds = 6; int32 nanos = 7;\n"
    "  oneof time_offset { google.protobuf.Duration utc_offset = 8; TimeZone time_zone = 9; } }\n"
    "message TimeZone { string id = 1; string version = 2; }\n";

static const char dayofweek_proto[] =
    "syntax = \"proto3\"; package google.type;\n"
    "enum DayOfWeek { DAY_OF_WEEK_UNSPECIFIED = 0; MONDAY = 1; TUESDAY = 2; WEDNESDAY = 3;\n"
    "  THURSDAY = 4; FRIDAY = 5; SATURDAY = 6; SUNDAY = 7; }\n";

static const char gdecimal_proto[] =
    "syntax = \"proto3\"; package google.type;\n"
    "message Decimal { string value = 1; }\n";

static const char expr_proto[] =
    "syntax = \"proto3\"; package google.type;\n"
    "message Expr { string expression = 1; string title = 2; string description = 3;\n"
    "  string location = 4; }\n";

static const char fraction_proto[] =
    "syntax = \"proto3\"; package google.type;\n"
    "message Fraction { int64 numerator = 1; int64 denominator = 2; }\n";

static const char interval_proto[] =
    "syntax = \"proto3\"; package google.type;\n"
    "import \"google/protobuf/timestamp.proto\";\n"
    "message Interval { google.protobuf.Timestamp start_time = 1;\n"
    "  google.protobuf.Timestamp end_time = 2; }\n";

static const char latlng_proto[] =
    "syntax = \"proto3\"; package google.type;\n"
    "message LatLng { double latitude = 1; double longitude = 2; }\n";

static const char money_proto[] =
    "syntax = \"proto3\"; package google.type;\n"
    "message Money { string currency_code = 1; int64 units = 2; int32 nanos = 3; }\n";

static const char month_proto[] =
    "syntax = \"proto3\"; package google.type;\n"
    "enum Month { MONTH_UNSPECIFIED = 0; JANUARY = 1; FEBRUARY = 2; MARCH = 3; APRIL = 4;\n"
    "  MAY = 5; JUNE = 6; JULY = 7; AUGUST = 8; SEPTEMBER = 9; OCTOBER = 10;\n"
    "  NOVEMBER = 11; DECEMBER = 12; }\n";

static const char phone_number_proto[] =
    "syntax = \"proto3\"; package google.type;\n"
    "message PhoneNumber {\n"
    "  message ShortCode { string region_code = 1; string number = 2; }\n"
    "  oneof kind { string e164_number = 1; ShortCode short_code = 2; }\n"
    "  string extension = 3; }\n";

static const char postal_address_proto[] =
    "syntax = \"proto3\"; package google.type;\n"
    "message PostalAddress { int32 revision = 1; string region_code = 2;\n"
    "  string language_code = 3; string postal_code = 4; string sorting_code = 5;\n"
    "  string administrative_area = 6; string locality = 7; string sublocality = 8;\n"
    "  repeated string address_lines = 9; repeated string recipients = 10;\n"
    "  string organization = 11; }\n";

static const char quaternion_proto[] =
    "syntax = \"proto3\"; package google.type;\n"
    "message Quaternion { double x = 1; double y = 2; double z = 3; double w = 4; }\n";

static const char timeofday_proto[] =
    "syntax = \"proto3\"; package google.type;\n"
    "message TimeOfDay { int32 hours = 1; int32 minutes = 2; int32 seconds = 3;\n"
    "  int32 nanos = 4; }\n";

static const char meta_proto[] =
    "syntax = \"proto3\"; package confluent;\n"
    "import \"google/protobuf/descriptor.proto\";\n"
    "message Meta { string doc = 1; map<string, string> params = 2; repeated string tags = 3;\n"
    "  repeated Rule rules = 4; }\n"
    "message Rule { string name = 1; string doc = 2; string expr = 3; string sql = 4; }\n"
    "extend google.protobuf.FileOptions { Meta file_meta = 1088; }\n"
    "extend google.protobuf.MessageOptions { Meta message_meta = 1088; }\n"
    "extend google.protobuf.FieldOptions { Meta field_meta = 1088; }\n"
    "extend google.protobuf.EnumOptions { Meta enum_meta = 1088; }\n"
    "extend google.protobuf.EnumValueOptions { Meta enum_value_meta = 1088; }\n";

static const char cdecimal_proto[] =
    "syntax = \"proto3\"; package confluent.type;\n"
    "message Decimal { bytes value = 1; uint32 precision = 2; int32 scale = 3; }\n";

static const struct {
    const char *path;
    const char *text;
} builtins[] = {
    {"google/protobuf/any.proto", any_proto},
    {"google/protobuf/api.proto", api_proto},
    {"google/protobuf/descriptor.proto", descriptor_proto},
    {"google/protobuf/duration.proto", duration_proto},
    {"google/protobuf/empty.proto", empty_proto},
    {"google/protobuf/field_mask.proto", field_mask_proto},
    {"google/protobuf/source_context.proto", source_context_proto},
    {"google/protobuf/struct.proto", struct_proto},
    {"google/protobuf/timestamp.proto", timestamp_proto},
    {"google/protobuf/type.proto", type_proto},
    {"google/protobuf/wrappers.proto", wrappers_proto},
    {"google/type/calendar_period.proto", calendar_period_proto},
    {"google/type/color.proto", color_proto},
    {"google/type/date.proto", date_proto},
    {"google/type/datetime.proto", datetime_proto},
    {"google/type/dayofweek.proto", dayofweek_proto},
    {"google/type/decimal.proto", gdecimal_proto},
    {"google/type/expr.proto", expr_proto},
    {"google/type/fraction.proto", fraction_proto},
    {"google/type/interval.proto", interval_proto},
    {"google/type/latlng.proto", latlng_proto},
    {"google/type/money.proto", money_proto},
    {"google/type/month.proto", month_proto},
    {"google/type/phone_number.proto", phone_number_proto},
    {"google/type/postal_address.proto", postal_address_proto},
    {"google/type/quaternion.proto", quaternion_proto},
    {"google/type/timeofday.proto", timeofday_proto},
    {"confluent/meta.proto", meta_proto},
    {"confluent/type/decimal.proto", cdecimal_proto},
};

const char *proto_builtin(const char *path)
{
    for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
        if (strcmp(builtins[i].path, path) == 0)
            return builtins[i].text;
    return NULL;
}
