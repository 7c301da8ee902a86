/* A serialized FileDescriptorProto (descriptor.proto) to the parsed form of proto_ast.h, as
 * Confluent's ProtobufSchema.toProtoFile(FileDescriptorProto) turns one into its element tree:
 * messages then enums at each level, extension fields grouped into one extend block per
 * extendee, proto3 labels dropped (but proto3_optional's), synthetic oneofs dropped, map entries
 * kept as nested messages with option map_entry = true, the standard options Confluent knows
 * in its order, Confluent's meta options as aggregate values; other custom options are
 * dropped, as Confluent's decoder does not know their extensions. Type names stay as the
 * descriptor has them (".pkg.Msg"), for proto_link.c to resolve.
 *
 * The wire reader is bounds-checked with a sticky error: a field that runs short, a wire type
 * that does not match the field, a length past the end, nesting past PROTO_DEPTH_MAX all mark
 * the input bad, and the decode ends with one message. Names are checked to be identifiers. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/varint.h"
#include "registry/proto_ast.h"

struct rd {
    const uint8_t *p;
    const uint8_t *end;
};

struct dec {
    struct proto_schema *s;
    struct proto_file *f;
    bool proto3;
    bool bad;
    char *err;
    size_t errcap;
    int depth;
};

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

__attribute__((format(printf, 2, 3))) static void bad(struct dec *d, const char *fmt, ...)
{
    if (d->bad)
        return;
    d->bad = true;
    va_list ap;
    va_start(ap, fmt);
    if (d->errcap)
        vsnprintf(d->err, d->errcap, fmt, ap);
    va_end(ap);
}

/* Reads the next field's key; false at the end or on an error. */
static bool next_field(struct dec *d, struct rd *r, uint32_t *num, int *wt)
{
    if (d->bad || r->p >= r->end)
        return false;
    uint64_t key;
    size_t n = uvarint64_get(r->p, r->end, &key);
    if (n == 0 || (key >> 3) == 0 || (key >> 3) > PROTO_FIELD_NUMBER_MAX) {
        bad(d, "Malformed descriptor: bad field key.");
        return false;
    }
    r->p += n;
    *num = (uint32_t)(key >> 3);
    *wt = (int)(key & 7);
    return true;
}

static uint64_t get_varint(struct dec *d, struct rd *r, int wt)
{
    uint64_t v = 0;
    if (wt != WT_VARINT) {
        bad(d, "Malformed descriptor: expected a varint.");
        return 0;
    }
    size_t n = uvarint64_get(r->p, r->end, &v);
    if (n == 0) {
        bad(d, "Malformed descriptor: varint runs short.");
        return 0;
    }
    r->p += n;
    return v;
}

static struct rd get_len(struct dec *d, struct rd *r, int wt)
{
    struct rd sub = {r->p, r->p};
    if (wt != WT_LEN) {
        bad(d, "Malformed descriptor: expected a length-delimited field.");
        return sub;
    }
    uint64_t len;
    size_t n = uvarint64_get(r->p, r->end, &len);
    if (n == 0 || len > (uint64_t)(r->end - r->p - (ptrdiff_t)n)) {
        bad(d, "Malformed descriptor: length past the end.");
        return sub;
    }
    sub.p = r->p + n;
    sub.end = sub.p + len;
    r->p = sub.end;
    return sub;
}

static void skip(struct dec *d, struct rd *r, int wt)
{
    switch (wt) {
    case WT_VARINT:
        get_varint(d, r, wt);
        break;
    case WT_I64:
    case WT_I32: {
        size_t n = wt == WT_I64 ? 8 : 4;
        if ((size_t)(r->end - r->p) < n)
            bad(d, "Malformed descriptor: fixed field runs short.");
        else
            r->p += n;
        break;
    }
    case WT_LEN:
        get_len(d, r, wt);
        break;
    default:
        bad(d, "Malformed descriptor: unsupported wire type %d.", wt);
    }
}

static const char *get_string(struct dec *d, struct rd *r, int wt, size_t *len_out)
{
    struct rd sub = get_len(d, r, wt);
    size_t len = (size_t)(sub.end - sub.p);
    if (len_out)
        *len_out = len;
    return proto_strndup(d->s, (const char *)sub.p, len);
}

static bool is_ident(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' ||
              (*s >= '0' && *s <= '9')))
            return false;
    return true;
}

/* A name field: an identifier. */
static const char *get_name(struct dec *d, struct rd *r, int wt)
{
    size_t len;
    const char *s = get_string(d, r, wt, &len);
    if (!d->bad && (strlen(s) != len || !is_ident(s)))
        bad(d, "Descriptor name \"%.100s\" is not a valid identifier.", s);
    return s;
}

/* Does a relative name begin with a word that would start another statement in .proto text
 * (so its canonical text could not be read back)? */
static bool starts_statement(const char *name)
{
    static const char *const words[] = {"message", "enum", "extend", "option", "oneof",
                                        "extensions", "reserved", "optional", "required",
                                        "repeated", "group", "map", "stream"};
    size_t n = strcspn(name, ".");
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strlen(words[i]) == n && strncmp(words[i], name, n) == 0)
            return true;
    return false;
}

/* A type name: identifiers joined by dots, perhaps with a leading dot. */
static const char *get_type_name(struct dec *d, struct rd *r, int wt)
{
    size_t len;
    const char *s = get_string(d, r, wt, &len);
    if (d->bad)
        return s;
    bool ok = strlen(s) == len && len > 0;
    const char *c = s[0] == '.' ? s + 1 : s;
    bool start = true;
    for (; ok && *c; c++) {
        if (*c == '.') {
            ok = !start;
            start = true;
        } else {
            ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' ||
                 (!start && *c >= '0' && *c <= '9');
            start = false;
        }
    }
    if (!ok || start)
        bad(d, "Descriptor type name \"%.100s\" is not valid.", s);
    else if (s[0] != '.' && starts_statement(s))
        bad(d, "Descriptor type name \"%.100s\" cannot be written in .proto text (qualify it "
            "with a leading dot).", s);
    return s;
}

static struct proto_val *val_new(struct dec *d, enum proto_val_kind kind, const char *s)
{
    struct proto_val *v = proto_alloc(d->s, sizeof(*v));
    memset(v, 0, sizeof(*v));
    v->kind = kind;
    v->s = s;
    v->len = s ? strlen(s) : 0;
    return v;
}

static void add_option(struct dec *d, struct pvec *options, const char *name, bool paren,
                       struct proto_val *v)
{
    struct proto_option *o = proto_alloc(d->s, sizeof(*o));
    memset(o, 0, sizeof(*o));
    o->name = name;
    o->paren = paren;
    o->val = v;
    pvec_push(d->s, options, o);
}

static void map_add(struct dec *d, struct proto_val *map, const char *key, struct proto_val *v)
{
    struct proto_mapent *e = proto_alloc(d->s, sizeof(*e));
    e->key = key;
    e->val = v;
    pvec_push(d->s, &map->ents, e);
}

/* The options Confluent reads from a descriptor's XxxOptions message: (field number, name,
 * kind, enum value names). */
struct known_opt {
    uint32_t number;
    const char *name;
    enum proto_val_kind kind; /* PV_BOOL, PV_STRING or PV_ENUM */
    const char *const *enum_names;
    size_t n_enum_names;
};

static const char *const optimize_names[] = {NULL, "SPEED", "CODE_SIZE", "LITE_RUNTIME"};
static const char *const ctype_names[] = {"STRING", "CORD", "STRING_PIECE"};
static const char *const jstype_names[] = {"JS_NORMAL", "JS_STRING", "JS_NUMBER"};
static const char *const retention_names[] = {"RETENTION_UNKNOWN", "RETENTION_RUNTIME",
                                              "RETENTION_SOURCE"};
static const char *const target_names[] = {
    "TARGET_TYPE_UNKNOWN", "TARGET_TYPE_FILE",  "TARGET_TYPE_EXTENSION_RANGE",
    "TARGET_TYPE_MESSAGE", "TARGET_TYPE_FIELD", "TARGET_TYPE_ONEOF",
    "TARGET_TYPE_ENUM",    "TARGET_TYPE_ENUM_ENTRY", "TARGET_TYPE_SERVICE",
    "TARGET_TYPE_METHOD"};
static const char *const idempotency_names[] = {"IDEMPOTENCY_UNKNOWN", "NO_SIDE_EFFECTS",
                                                "IDEMPOTENT"};

#define ENUM_NAMES(a) a, sizeof(a) / sizeof(a[0])

static const struct known_opt file_opts[] = {
    {1, "java_package", PV_STRING, NULL, 0},
    {8, "java_outer_classname", PV_STRING, NULL, 0},
    {10, "java_multiple_files", PV_BOOL, NULL, 0},
    {20, "java_generate_equals_and_hash", PV_BOOL, NULL, 0},
    {27, "java_string_check_utf8", PV_BOOL, NULL, 0},
    {9, "optimize_for", PV_ENUM, ENUM_NAMES(optimize_names)},
    {11, "go_package", PV_STRING, NULL, 0},
    {16, "cc_generic_services", PV_BOOL, NULL, 0},
    {17, "java_generic_services", PV_BOOL, NULL, 0},
    {18, "py_generic_services", PV_BOOL, NULL, 0},
    {23, "deprecated", PV_BOOL, NULL, 0},
    {31, "cc_enable_arenas", PV_BOOL, NULL, 0},
    {36, "objc_class_prefix", PV_STRING, NULL, 0},
    {37, "csharp_namespace", PV_STRING, NULL, 0},
    {39, "swift_prefix", PV_STRING, NULL, 0},
    {40, "php_class_prefix", PV_STRING, NULL, 0},
    {41, "php_namespace", PV_STRING, NULL, 0},
    {44, "php_metadata_namespace", PV_STRING, NULL, 0},
    {45, "ruby_package", PV_STRING, NULL, 0},
};
static const struct known_opt message_opts[] = {
    {2, "no_standard_descriptor_accessor", PV_BOOL, NULL, 0},
    {3, "deprecated", PV_BOOL, NULL, 0},
    {7, "map_entry", PV_BOOL, NULL, 0},
};
static const struct known_opt field_opts[] = {
    {1, "ctype", PV_ENUM, ENUM_NAMES(ctype_names)},
    {2, "packed", PV_BOOL, NULL, 0},
    {6, "jstype", PV_ENUM, ENUM_NAMES(jstype_names)},
    {3, "deprecated", PV_BOOL, NULL, 0},
    {16, "debug_redact", PV_BOOL, NULL, 0},
    {17, "retention", PV_ENUM, ENUM_NAMES(retention_names)},
    {19, "targets", PV_ENUM, ENUM_NAMES(target_names)},
};
static const struct known_opt enum_opts[] = {
    {2, "allow_alias", PV_BOOL, NULL, 0},
    {3, "deprecated", PV_BOOL, NULL, 0},
};
static const struct known_opt enum_value_opts[] = {
    {1, "deprecated", PV_BOOL, NULL, 0},
    {3, "debug_redact", PV_BOOL, NULL, 0},
};
static const struct known_opt service_opts[] = {
    {33, "deprecated", PV_BOOL, NULL, 0},
};
static const struct known_opt method_opts[] = {
    {33, "deprecated", PV_BOOL, NULL, 0},
    {34, "idempotency_level", PV_ENUM, ENUM_NAMES(idempotency_names)},
};

#define CONFLUENT_META 1088

/* confluent.Meta as Confluent prints it: { doc: "...", params: [{key: k, value: v}, ...],
 * tags: [...], rules: [{name, doc, expr, sql}] } (precision and scale params value first). */
static struct proto_val *meta_value(struct dec *d, struct rd r)
{
    struct proto_val *map = val_new(d, PV_MAP, NULL);
    struct proto_val *params = val_new(d, PV_LIST, NULL);
    struct proto_val *tags = val_new(d, PV_LIST, NULL);
    struct proto_val *rules = val_new(d, PV_LIST, NULL);
    const char *doc = NULL;
    uint32_t num;
    int wt;
    while (next_field(d, &r, &num, &wt)) {
        if (num == 1) {
            doc = get_string(d, &r, wt, NULL);
        } else if (num == 2) {
            struct rd e = get_len(d, &r, wt);
            const char *k = "", *v = "";
            while (next_field(d, &e, &num, &wt)) {
                if (num == 1)
                    k = get_string(d, &e, wt, NULL);
                else if (num == 2)
                    v = get_string(d, &e, wt, NULL);
                else
                    skip(d, &e, wt);
            }
            struct proto_val *kv = val_new(d, PV_MAP, NULL);
            bool value_first = strcmp(k, "precision") == 0 || strcmp(k, "scale") == 0;
            if (value_first)
                map_add(d, kv, "value", val_new(d, PV_STRING, v));
            map_add(d, kv, "key", val_new(d, PV_STRING, k));
            if (!value_first)
                map_add(d, kv, "value", val_new(d, PV_STRING, v));
            pvec_push(d->s, &params->items, kv);
        } else if (num == 3) {
            pvec_push(d->s, &tags->items, val_new(d, PV_STRING, get_string(d, &r, wt, NULL)));
        } else if (num == 4) {
            struct rd e = get_len(d, &r, wt);
            static const char *const keys[] = {NULL, "name", "doc", "expr", "sql"};
            const char *vals[5] = {0};
            while (next_field(d, &e, &num, &wt)) {
                if (num >= 1 && num <= 4)
                    vals[num] = get_string(d, &e, wt, NULL);
                else
                    skip(d, &e, wt);
            }
            struct proto_val *rule = val_new(d, PV_MAP, NULL);
            for (int i = 1; i <= 4; i++)
                if (vals[i] && vals[i][0])
                    map_add(d, rule, keys[i], val_new(d, PV_STRING, vals[i]));
            if (rule->ents.n)
                pvec_push(d->s, &rules->items, rule);
        } else {
            skip(d, &r, wt);
        }
    }
    if (doc && doc[0])
        map_add(d, map, "doc", val_new(d, PV_STRING, doc));
    if (params->items.n)
        map_add(d, map, "params", params);
    if (tags->items.n)
        map_add(d, map, "tags", tags);
    if (rules->items.n)
        map_add(d, map, "rules", rules);
    return map->ents.n ? map : NULL;
}

/* Reads an XxxOptions message: the known options (in the table's order) and Confluent's meta
 * extension (named meta_name). */
static void options_msg(struct dec *d, struct rd r, const struct known_opt *known, size_t n_known,
                        const char *meta_name, struct pvec *options)
{
    struct proto_val *vals[32] = {0};
    struct pvec multi[32];
    memset(multi, 0, sizeof(multi));
    struct proto_val *meta = NULL;
    uint32_t num;
    int wt;
    while (next_field(d, &r, &num, &wt)) {
        size_t i = 0;
        while (i < n_known && known[i].number != num)
            i++;
        if (i == n_known) {
            if (num == CONFLUENT_META && meta_name)
                meta = meta_value(d, get_len(d, &r, wt));
            else
                skip(d, &r, wt);
            continue;
        }
        const struct known_opt *k = &known[i];
        struct proto_val *v;
        if (k->kind == PV_STRING) {
            v = val_new(d, PV_STRING, NULL);
            v->s = get_string(d, &r, wt, &v->len);
        } else if (k->kind == PV_BOOL) {
            v = val_new(d, PV_BOOL, get_varint(d, &r, wt) ? "true" : "false");
        } else {
            uint64_t e = get_varint(d, &r, wt);
            if (e >= k->n_enum_names || !k->enum_names[e]) {
                bad(d, "Descriptor option %s has an unknown value %llu.", k->name,
                    (unsigned long long)e);
                return;
            }
            v = val_new(d, PV_ENUM, k->enum_names[e]);
        }
        if (strcmp(k->name, "targets") == 0)
            pvec_push(d->s, &multi[i], v);
        else
            vals[i] = v;
    }
    for (size_t i = 0; i < n_known; i++) {
        if (vals[i])
            add_option(d, options, known[i].name, false, vals[i]);
        for (size_t k = 0; k < multi[i].n; k++)
            add_option(d, options, known[i].name, false, multi[i].v[k]);
    }
    if (meta)
        add_option(d, options, meta_name, true, meta);
}

#define OPTS(t) t, sizeof(t) / sizeof(t[0])

/* Protobuf's C escapes in a bytes field's default_value, undone. */
static struct proto_val *bytes_default(struct dec *d, const char *s)
{
    struct proto_val *v = val_new(d, PV_STRING, NULL);
    size_t n = strlen(s);
    char *out = proto_alloc(d->s, n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\' || i + 1 == n) {
            out[k++] = s[i];
            continue;
        }
        char c = s[++i];
        if (c >= '0' && c <= '7') {
            int x = c - '0';
            for (int j = 0; j < 2 && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '7'; j++)
                x = x * 8 + (s[++i] - '0');
            out[k++] = (char)x;
        } else {
            const char *from = "abfnrtv", *to = "\a\b\f\n\r\t\v";
            const char *at = strchr(from, c);
            out[k++] = at && c ? to[at - from] : c;
        }
    }
    out[k] = '\0';
    v->s = out;
    v->len = k;
    return v;
}

struct field_raw {
    struct proto_field *f;
    int type;            /* FieldDescriptorProto.Type, 0 if absent */
    int label;           /* 1 optional, 2 required, 3 repeated */
    int64_t oneof_index; /* -1 if absent */
    bool proto3_optional;
    const char *dflt;
    const char *extendee;
};

static void field_desc(struct dec *d, struct rd r, struct proto_type *scope, struct field_raw *fr)
{
    struct proto_field *f = proto_alloc(d->s, sizeof(*f));
    memset(f, 0, sizeof(*f));
    memset(fr, 0, sizeof(*fr));
    fr->f = f;
    fr->oneof_index = -1;
    f->scope = scope;
    f->name = "";
    const char *type_name = NULL;
    uint32_t num;
    int wt;
    while (next_field(d, &r, &num, &wt)) {
        switch (num) {
        case 1: f->name = get_name(d, &r, wt); break;
        case 2: fr->extendee = get_type_name(d, &r, wt); break;
        case 3: f->number = (int32_t)get_varint(d, &r, wt); break;
        case 4: fr->label = (int)get_varint(d, &r, wt); break;
        case 5: fr->type = (int)get_varint(d, &r, wt); break;
        case 6: type_name = get_type_name(d, &r, wt); break;
        case 7: fr->dflt = get_string(d, &r, wt, NULL); break;
        case 8: options_msg(d, get_len(d, &r, wt), OPTS(field_opts), "confluent.field_meta",
                            &f->options); break;
        case 9: fr->oneof_index = (int64_t)get_varint(d, &r, wt); break;
        case 10: f->json_name = get_string(d, &r, wt, NULL); break;
        case 17: fr->proto3_optional = get_varint(d, &r, wt) != 0; break;
        default: skip(d, &r, wt);
        }
    }
    if (d->bad)
        return;
    if (!f->name[0]) {
        bad(d, "Descriptor field without a name.");
        return;
    }
    if (fr->type == 10) {
        bad(d, "Field \"%.100s\": groups in descriptors are not supported.", f->name);
        return;
    }
    if (fr->label < 1 || fr->label > 3) {
        bad(d, "Field \"%.100s\" has no valid label.", f->name);
        return;
    }
    if (type_name) {
        f->type.text = type_name;
        f->type.scalar = PS_NAMED;
    } else if (proto_scalar_name(fr->type) && fr->type != 11 && fr->type != 14) {
        f->type.scalar = fr->type;
        f->type.text = proto_scalar_name(fr->type);
    } else {
        bad(d, "Field \"%.100s\" has no valid type.", f->name);
        return;
    }
    f->type_text = f->type.text;
    if (fr->proto3_optional)
        f->label = PL_OPTIONAL;
    else if (fr->label == 3)
        f->label = PL_REPEATED;
    else if (d->proto3)
        f->label = PL_NONE;
    else
        f->label = fr->label == 2 ? PL_REQUIRED : PL_OPTIONAL;
    if (fr->dflt && !d->proto3) {
        int t = fr->type;
        if (t == PS_STRING)
            f->dflt = val_new(d, PV_STRING, fr->dflt);
        else if (t == PS_BYTES)
            f->dflt = bytes_default(d, fr->dflt);
        else if (t == PS_BOOL)
            f->dflt = val_new(d,
                              strcmp(fr->dflt, "true") == 0 || strcmp(fr->dflt, "false") == 0
                                  ? PV_BOOL
                                  : PV_NUMBER,
                              fr->dflt);
        else if (t == 14 || type_name)
            f->dflt = val_new(d, PV_ENUM, fr->dflt);
        else
            f->dflt = val_new(d, PV_NUMBER, fr->dflt);
    }
}

static struct proto_ranges *range_stmt(struct dec *d, int64_t start, int64_t end, int64_t max)
{
    struct proto_ranges *rs = proto_alloc(d->s, sizeof(*rs));
    memset(rs, 0, sizeof(*rs));
    struct proto_range *it = proto_alloc(d->s, sizeof(*it));
    memset(it, 0, sizeof(*it));
    it->start = start;
    it->end = end;
    it->to = start != end;
    it->max = it->to && end >= max;
    pvec_push(d->s, &rs->items, it);
    return rs;
}

static struct proto_ranges *name_stmt(struct dec *d, const char *name)
{
    struct proto_ranges *rs = proto_alloc(d->s, sizeof(*rs));
    memset(rs, 0, sizeof(*rs));
    struct proto_range *it = proto_alloc(d->s, sizeof(*it));
    memset(it, 0, sizeof(*it));
    it->name = name;
    pvec_push(d->s, &rs->items, it);
    return rs;
}

/* A start/end pair (ReservedRange, EnumReservedRange). */
static void read_range(struct dec *d, struct rd r, int64_t *start, int64_t *end)
{
    uint32_t num;
    int wt;
    *start = *end = 0;
    while (next_field(d, &r, &num, &wt)) {
        if (num == 1)
            *start = (int32_t)get_varint(d, &r, wt);
        else if (num == 2)
            *end = (int32_t)get_varint(d, &r, wt);
        else
            skip(d, &r, wt);
    }
}

/* Groups extension fields by extendee into extend blocks, in first-seen order. */
static void add_extension(struct dec *d, struct pvec *extends, struct proto_type *scope,
                          struct field_raw *fr)
{
    if (!fr->extendee) {
        bad(d, "Extension \"%.100s\" has no extendee.", fr->f->name);
        return;
    }
    struct proto_extend *x = NULL;
    for (size_t i = 0; i < extends->n; i++) {
        struct proto_extend *e = extends->v[i];
        if (strcmp(e->extendee.text, fr->extendee) == 0)
            x = e;
    }
    if (!x) {
        x = proto_alloc(d->s, sizeof(*x));
        memset(x, 0, sizeof(*x));
        x->extendee.text = fr->extendee;
        x->scope = scope;
        pvec_push(d->s, extends, x);
    }
    pvec_push(d->s, &x->fields, fr->f);
}

static struct proto_type *enum_desc(struct dec *d, struct rd r, struct proto_type *parent)
{
    struct proto_type *e = proto_alloc(d->s, sizeof(*e));
    memset(e, 0, sizeof(*e));
    e->kind = PT_ENUM;
    e->file = d->f;
    e->parent = parent;
    e->name = "";
    struct pvec names = {0};
    uint32_t num;
    int wt;
    while (next_field(d, &r, &num, &wt)) {
        if (num == 1) {
            e->name = get_name(d, &r, wt);
        } else if (num == 2) {
            struct rd vr = get_len(d, &r, wt);
            struct proto_enum_value *v = proto_alloc(d->s, sizeof(*v));
            memset(v, 0, sizeof(*v));
            v->name = "";
            while (next_field(d, &vr, &num, &wt)) {
                if (num == 1)
                    v->name = get_name(d, &vr, wt);
                else if (num == 2)
                    v->number = (int32_t)get_varint(d, &vr, wt);
                else if (num == 3)
                    options_msg(d, get_len(d, &vr, wt), OPTS(enum_value_opts),
                                "confluent.enum_value_meta", &v->options);
                else
                    skip(d, &vr, wt);
            }
            if (!d->bad && !v->name[0])
                bad(d, "Descriptor enum value without a name.");
            if (!d->bad && (strcmp(v->name, "option") == 0 || strcmp(v->name, "reserved") == 0))
                bad(d, "Descriptor enum value \"%s\" cannot be written in .proto text.",
                    v->name);
            pvec_push(d->s, &e->values, v);
        } else if (num == 3) {
            options_msg(d, get_len(d, &r, wt), OPTS(enum_opts), "confluent.enum_meta",
                        &e->options);
        } else if (num == 4) {
            int64_t start, end;
            read_range(d, get_len(d, &r, wt), &start, &end);
            pvec_push(d->s, &e->reserved, range_stmt(d, start, end, INT32_MAX));
        } else if (num == 5) {
            pvec_push(d->s, &names, name_stmt(d, get_string(d, &r, wt, NULL)));
        } else {
            skip(d, &r, wt);
        }
    }
    for (size_t i = 0; i < names.n; i++)
        pvec_push(d->s, &e->reserved, names.v[i]);
    if (!d->bad && !e->name[0])
        bad(d, "Descriptor enum without a name.");
    return e;
}

static struct proto_type *message_desc(struct dec *d, struct rd r, struct proto_type *parent)
{
    struct proto_type *m = proto_alloc(d->s, sizeof(*m));
    memset(m, 0, sizeof(*m));
    m->kind = PT_MESSAGE;
    m->file = d->f;
    m->parent = parent;
    m->name = "";
    if (++d->depth > PROTO_DEPTH_MAX) {
        bad(d, "Messages nested too deeply (more than %d levels).", PROTO_DEPTH_MAX);
        return m;
    }
    struct pvec fields = {0}, exts = {0}, msgs = {0}, enums = {0}, oneofs = {0}, names = {0};
    uint32_t num;
    int wt;
    while (next_field(d, &r, &num, &wt)) {
        switch (num) {
        case 1: m->name = get_name(d, &r, wt); break;
        case 2:
        case 6: {
            struct field_raw *fr = proto_alloc(d->s, sizeof(*fr));
            field_desc(d, get_len(d, &r, wt), m, fr);
            pvec_push(d->s, num == 2 ? &fields : &exts, fr);
            break;
        }
        case 3: pvec_push(d->s, &msgs, message_desc(d, get_len(d, &r, wt), m)); break;
        case 4: pvec_push(d->s, &enums, enum_desc(d, get_len(d, &r, wt), m)); break;
        case 5: {
            struct rd er = get_len(d, &r, wt);
            int64_t start = 0, end = 0;
            while (next_field(d, &er, &num, &wt)) {
                if (num == 1)
                    start = (int32_t)get_varint(d, &er, wt);
                else if (num == 2)
                    end = (int32_t)get_varint(d, &er, wt);
                else
                    skip(d, &er, wt);
            }
            pvec_push(d->s, &m->extensions,
                      range_stmt(d, start, end - 1, PROTO_FIELD_NUMBER_MAX));
            break;
        }
        case 7: options_msg(d, get_len(d, &r, wt), OPTS(message_opts), "confluent.message_meta",
                            &m->options); break;
        case 8: {
            struct rd orr = get_len(d, &r, wt);
            struct proto_oneof *o = proto_alloc(d->s, sizeof(*o));
            memset(o, 0, sizeof(*o));
            o->name = "";
            while (next_field(d, &orr, &num, &wt)) {
                if (num == 1)
                    o->name = get_name(d, &orr, wt);
                else
                    skip(d, &orr, wt);
            }
            if (!d->bad && !o->name[0])
                bad(d, "Descriptor oneof without a name.");
            pvec_push(d->s, &oneofs, o);
            break;
        }
        case 9: {
            int64_t start, end;
            read_range(d, get_len(d, &r, wt), &start, &end);
            pvec_push(d->s, &m->reserved, range_stmt(d, start, end - 1, PROTO_FIELD_NUMBER_MAX));
            break;
        }
        case 10: pvec_push(d->s, &names, name_stmt(d, get_string(d, &r, wt, NULL))); break;
        default: skip(d, &r, wt);
        }
    }
    d->depth--;
    if (d->bad)
        return m;
    if (!m->name[0]) {
        bad(d, "Descriptor message without a name.");
        return m;
    }
    for (size_t i = 0; i < names.n; i++)
        pvec_push(d->s, &m->reserved, names.v[i]);
    for (size_t i = 0; i < fields.n && !d->bad; i++) {
        struct field_raw *fr = fields.v[i];
        if (fr->oneof_index >= 0 && !fr->proto3_optional) {
            if ((uint64_t)fr->oneof_index >= oneofs.n) {
                bad(d, "Field \"%.100s\" names a oneof that does not exist.", fr->f->name);
                break;
            }
            struct proto_oneof *o = oneofs.v[fr->oneof_index];
            fr->f->label = PL_NONE;
            fr->f->oneof = o;
            pvec_push(d->s, &o->fields, fr->f);
        } else {
            pvec_push(d->s, &m->fields, fr->f);
        }
    }
    for (size_t i = 0; i < oneofs.n; i++) {
        struct proto_oneof *o = oneofs.v[i];
        if (o->fields.n)
            pvec_push(d->s, &m->oneofs, o);
    }
    for (size_t i = 0; i < exts.n && !d->bad; i++)
        add_extension(d, &m->extends, m, exts.v[i]);
    for (size_t i = 0; i < msgs.n; i++)
        pvec_push(d->s, &m->nested, msgs.v[i]);
    for (size_t i = 0; i < enums.n; i++)
        pvec_push(d->s, &m->nested, enums.v[i]);
    m->map_entry = proto_option_true(&m->options, "map_entry");
    return m;
}

static struct proto_service *service_desc(struct dec *d, struct rd r)
{
    struct proto_service *svc = proto_alloc(d->s, sizeof(*svc));
    memset(svc, 0, sizeof(*svc));
    svc->name = "";
    uint32_t num;
    int wt;
    while (next_field(d, &r, &num, &wt)) {
        if (num == 1) {
            svc->name = get_name(d, &r, wt);
        } else if (num == 2) {
            struct rd mr = get_len(d, &r, wt);
            struct proto_rpc *rpc = proto_alloc(d->s, sizeof(*rpc));
            memset(rpc, 0, sizeof(*rpc));
            rpc->name = "";
            while (next_field(d, &mr, &num, &wt)) {
                switch (num) {
                case 1: rpc->name = get_name(d, &mr, wt); break;
                case 2: rpc->req.text = get_type_name(d, &mr, wt); break;
                case 3: rpc->resp.text = get_type_name(d, &mr, wt); break;
                case 4: options_msg(d, get_len(d, &mr, wt), OPTS(method_opts), NULL,
                                    &rpc->options); break;
                case 5: rpc->req_stream = get_varint(d, &mr, wt) != 0; break;
                case 6: rpc->resp_stream = get_varint(d, &mr, wt) != 0; break;
                default: skip(d, &mr, wt);
                }
            }
            if (!d->bad && (!rpc->name[0] || !rpc->req.text || !rpc->resp.text))
                bad(d, "Descriptor method without a name or types.");
            pvec_push(d->s, &svc->rpcs, rpc);
        } else if (num == 3) {
            options_msg(d, get_len(d, &r, wt), OPTS(service_opts), NULL, &svc->options);
        } else {
            skip(d, &r, wt);
        }
    }
    if (!d->bad && !svc->name[0])
        bad(d, "Descriptor service without a name.");
    return svc;
}

int proto_parse_descriptor(struct proto_schema *s, struct proto_file *f, const uint8_t *p,
                           size_t len, char *err, size_t errcap)
{
    struct dec d = {.s = s, .f = f, .err = err, .errcap = errcap};
    struct rd r = {p, p + len};
    if (errcap)
        err[0] = '\0';
    /* syntax decides labels: find it first. */
    struct rd scan = r;
    uint32_t num;
    int wt;
    while (next_field(&d, &scan, &num, &wt)) {
        if (num == 12) {
            size_t n;
            const char *syn = get_string(&d, &scan, wt, &n);
            if (strcmp(syn, "proto3") == 0) {
                d.proto3 = true;
                f->syntax = 3;
                f->syntax_written = true;
            } else if (strcmp(syn, "proto2") == 0) {
                f->syntax = 2;
                f->syntax_written = true;
            } else if (n != 0) {
                bad(&d, "Descriptor syntax \"%.40s\" is not supported (only proto2 and proto3).",
                    syn);
            }
        } else if (num == 14) {
            bad(&d, "Editions are not supported (the descriptor names an edition).");
        } else {
            skip(&d, &scan, wt);
        }
    }
    struct pvec deps = {0}, msgs = {0}, enums = {0}, exts = {0};
    int64_t pub[PROTO_FILES_MAX], weak[PROTO_FILES_MAX];
    size_t n_pub = 0, n_weak = 0;
    while (next_field(&d, &r, &num, &wt)) {
        switch (num) {
        case 2: {
            const char *pkg = get_type_name(&d, &r, wt);
            if (!d.bad && pkg[0] == '.')
                bad(&d, "Descriptor package \"%.100s\" is not valid.", pkg);
            f->package = pkg;
            break;
        }
        case 3: {
            size_t n;
            const char *dep = get_string(&d, &r, wt, &n);
            if (!d.bad && strlen(dep) != n)
                bad(&d, "Descriptor dependency name holds a NUL.");
            pvec_push(s, &deps, (void *)dep);
            break;
        }
        case 10:
        case 11: {
            int64_t *into = num == 10 ? pub : weak;
            size_t *n = num == 10 ? &n_pub : &n_weak;
            struct rd packed = wt == WT_LEN ? get_len(&d, &r, wt) : r;
            bool is_packed = wt == WT_LEN;
            do {
                if (*n == PROTO_FILES_MAX) {
                    bad(&d, "Descriptor has too many dependencies.");
                    break;
                }
                into[(*n)++] = (int64_t)get_varint(&d, is_packed ? &packed : &r,
                                                   is_packed ? WT_VARINT : wt);
            } while (is_packed && !d.bad && packed.p < packed.end);
            break;
        }
        case 4: pvec_push(s, &msgs, message_desc(&d, get_len(&d, &r, wt), NULL)); break;
        case 5: pvec_push(s, &enums, enum_desc(&d, get_len(&d, &r, wt), NULL)); break;
        case 6: pvec_push(s, &f->services, service_desc(&d, get_len(&d, &r, wt))); break;
        case 7: {
            struct field_raw *fr = proto_alloc(s, sizeof(*fr));
            field_desc(&d, get_len(&d, &r, wt), NULL, fr);
            pvec_push(s, &exts, fr);
            break;
        }
        case 8: options_msg(&d, get_len(&d, &r, wt), OPTS(file_opts), "confluent.file_meta",
                            &f->options); break;
        default: skip(&d, &r, wt);
        }
    }
    for (size_t i = 0; i < deps.n && !d.bad; i++) {
        struct proto_import *im = proto_alloc(s, sizeof(*im));
        memset(im, 0, sizeof(*im));
        im->path = deps.v[i];
        if (!im->path[0]) {
            bad(&d, "Descriptor dependency with an empty name.");
            break;
        }
        for (size_t k = 0; k < n_pub; k++)
            if (pub[k] == (int64_t)i)
                im->kind = PI_PUBLIC;
        for (size_t k = 0; k < n_weak && im->kind == PI_PLAIN; k++)
            if (weak[k] == (int64_t)i)
                im->kind = PI_WEAK;
        for (size_t k = 0; k < f->imports.n; k++)
            if (strcmp(((struct proto_import *)f->imports.v[k])->path, im->path) == 0)
                bad(&d, "Import \"%.100s\" was listed twice.", im->path);
        pvec_push(s, &f->imports, im);
    }
    for (size_t k = 0; k < n_pub && !d.bad; k++)
        if (pub[k] < 0 || (size_t)pub[k] >= deps.n)
            bad(&d, "Descriptor public dependency index out of range.");
    for (size_t i = 0; i < msgs.n; i++)
        pvec_push(s, &f->types, msgs.v[i]);
    for (size_t i = 0; i < enums.n; i++)
        pvec_push(s, &f->types, enums.v[i]);
    for (size_t i = 0; i < exts.n && !d.bad; i++)
        add_extension(&d, &f->extends, NULL, exts.v[i]);
    if (!d.bad && s->oom)
        bad(&d, "Schema too large (its parsed form passes %u bytes).",
            (unsigned)PROTO_MEMORY_MAX);
    return d.bad ? -1 : 0;
}
