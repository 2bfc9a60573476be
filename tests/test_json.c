/*
 * test_json.c — the strict JSON parser (src/core/json.c):
 *  - every value kind, key order, offsets, nested containers;
 *  - numbers: exact int64 where integral, doubles, the grammar's edges;
 *  - strings: escapes, surrogate pairs, embedded NUL, invalid UTF-8;
 *  - malformed texts: RLX_STATUS_FORMAT with the right byte and the reason;
 *  - duplicate keys (small and large objects), the depth bound;
 *  - typed getters' messages, and json_quote read back by the parser.
 */
#include "harness.h"
#include "core/json.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static rlx_status parse(const char *s, json_doc **d) { return json_parse(s, strlen(s), NULL, d); }

TEST(json_parse_values) {
    const char *text = " {\"b\": [1, -2.5, true, false, null, \"x\"], \"a\": {\"n\": {}}, \"e\": []} ";
    json_doc *d;
    CHECK_OK(parse(text, &d));
    const json_value *r = json_root(d);
    CHECK(r->type == JSON_OBJECT && json_len(r) == 3 && r->offset == 1);
    /* members keep file order */
    CHECK(strcmp(json_member_at(r, 0)->key, "b") == 0 && strcmp(json_member_at(r, 1)->key, "a") == 0 &&
          strcmp(json_member_at(r, 2)->key, "e") == 0);
    CHECK(json_member_at(r, 0)->key_offset == 2);
    const json_value *b = json_get(r, "b");
    CHECK(b && b->type == JSON_ARRAY && json_len(b) == 6);
    CHECK(json_at(b, 0)->type == JSON_NUMBER && json_at(b, 0)->u.num.is_int && json_at(b, 0)->u.num.i == 1);
    CHECK(json_at(b, 0)->offset == 8);
    CHECK(json_at(b, 1)->u.num.d == -2.5 && !json_at(b, 1)->u.num.is_int);
    CHECK(json_at(b, 2)->type == JSON_BOOL && json_at(b, 2)->u.b);
    CHECK(json_at(b, 3)->type == JSON_BOOL && !json_at(b, 3)->u.b);
    CHECK(json_at(b, 4)->type == JSON_NULL);
    CHECK(json_at(b, 5)->type == JSON_STRING && strcmp(json_at(b, 5)->u.str.s, "x") == 0);
    CHECK(json_at(b, 6) == NULL && json_at(r, 0) == NULL && json_get(b, "x") == NULL);
    const json_value *n = json_get(json_get(r, "a"), "n");
    CHECK(n && n->type == JSON_OBJECT && json_len(n) == 0);
    CHECK(json_get(r, "e")->type == JSON_ARRAY && json_len(json_get(r, "e")) == 0);
    CHECK(json_get(r, "zz") == NULL);
    json_free(d);

    /* scalars at the top level */
    CHECK_OK(parse("42", &d));
    CHECK(json_root(d)->u.num.i == 42);
    json_free(d);
    CHECK_OK(parse("\"s\"", &d));
    CHECK(json_root(d)->type == JSON_STRING);
    json_free(d);
}

TEST(json_numbers) {
    static const struct { const char *s; bool is_int; int64_t i; double d; } ok[] = {
        {"0", true, 0, 0}, {"-0", true, 0, -0.0}, {"7", true, 7, 7},
        {"9007199254740993", true, 9007199254740993LL, 9007199254740992.0},   /* exact beyond 2^53 */
        {"9223372036854775807", true, INT64_MAX, 9223372036854775807.0},
        {"-9223372036854775808", true, INT64_MIN, -9223372036854775808.0},
        {"9223372036854775808", false, 0, 9223372036854775808.0},
        {"1e3", true, 1000, 1000}, {"2.0", true, 2, 2}, {"1.5", false, 0, 1.5},
        {"-1.25E-2", false, 0, -0.0125}, {"1e-400", true, 0, 0}, {"1E+2", true, 100, 100},
    };
    for (size_t k = 0; k < RLX_ARRAY_LEN(ok); k++) {
        json_doc *d;
        CHECK_OK(parse(ok[k].s, &d));
        const json_value *v = json_root(d);
        bool good = v->type == JSON_NUMBER && v->u.num.is_int == ok[k].is_int && (!ok[k].is_int || v->u.num.i == ok[k].i) &&
                    v->u.num.d == ok[k].d;
        json_free(d);
        CHECK_MSG(good, "'%s': is_int %d i %lld d %.17g", ok[k].s, v->u.num.is_int, (long long)v->u.num.i, v->u.num.d);
    }
    static const struct { const char *s; const char *why; } bad[] = {
        {"01", "leading zero"}, {"1.", "after the decimal point"}, {".5", "expected a value"},
        {"-", "expected a digit"}, {"1e", "exponent"}, {"+1", "expected a value"}, {"1e400", "out of the range"},
        {"0x10", "end of the text"}, {"NaN", "expected a value"}, {"Infinity", "expected a value"},
    };
    for (size_t k = 0; k < RLX_ARRAY_LEN(bad); k++) {
        json_doc *d;
        CHECK_STATUS(parse(bad[k].s, &d), RLX_STATUS_FORMAT);
        CHECK_MSG(strstr(rlx_last_error(), bad[k].why), "'%s': %s", bad[k].s, rlx_last_error());
    }
    char longnum[JSON_MAX_NUMBER_CHARS + 8];
    memset(longnum, '1', sizeof longnum - 1);
    longnum[sizeof longnum - 1] = 0;
    json_doc *d;
    CHECK_STATUS(parse(longnum, &d), RLX_STATUS_FORMAT);
    CHECK(strstr(rlx_last_error(), "longer than"));
}

TEST(json_strings) {
    json_doc *d;
    CHECK_OK(parse("[\"a\\\"\\\\\\/\\b\\f\\n\\r\\t\", \"\\u00e9\\u20AC\", \"\\ud83d\\ude00\", \"x\\u0000y\", \"\xc3\xa9\xf0\x9f\x98\x80\"]", &d));
    const json_value *r = json_root(d);
    CHECK(strcmp(json_at(r, 0)->u.str.s, "a\"\\/\b\f\n\r\t") == 0);
    CHECK(strcmp(json_at(r, 1)->u.str.s, "\xc3\xa9\xe2\x82\xac") == 0);
    CHECK(strcmp(json_at(r, 2)->u.str.s, "\xf0\x9f\x98\x80") == 0);
    CHECK(json_at(r, 3)->u.str.len == 3 && memcmp(json_at(r, 3)->u.str.s, "x\0y", 4) == 0);
    CHECK(strcmp(json_at(r, 4)->u.str.s, "\xc3\xa9\xf0\x9f\x98\x80") == 0);
    json_free(d);

    static const struct { const char *s; size_t at; const char *why; } bad[] = {
        {"\"\\ud83d\"", 1, "high surrogate"},
        {"\"\\ud83d\\u0041\"", 1, "high surrogate"},
        {"\"\\ude00\"", 1, "lone low surrogate"},
        {"\"\\u12g4\"", 5, "4 hex digits"},
        {"\"\\x\"", 2, "after '\\'"},
        {"\"a\x01\"", 2, "control character 0x01"},
        {"\"\xc0\x80\"", 1, "invalid UTF-8"},          /* overlong NUL */
        {"\"\xed\xa0\x80\"", 1, "invalid UTF-8"},      /* a surrogate in UTF-8 */
        {"\"\xf4\x90\x80\x80\"", 1, "invalid UTF-8"},  /* above U+10FFFF */
        {"\"\xe2\x82\"", 1, "invalid UTF-8"},          /* cut short */
        {"\"\xff\"", 1, "invalid UTF-8"},
        {"\"abc", 0, "unterminated string"},
    };
    for (size_t k = 0; k < RLX_ARRAY_LEN(bad); k++) {
        CHECK_STATUS(parse(bad[k].s, &d), RLX_STATUS_FORMAT);
        char at[32];
        snprintf(at, sizeof at, "byte %zu:", bad[k].at);
        CHECK_MSG(strstr(rlx_last_error(), bad[k].why) && strstr(rlx_last_error(), at), "case %zu: %s", k, rlx_last_error());
    }
}

/* Malformed texts: the status, the byte of the fault and what was expected. */
TEST(json_errors_name_byte_and_reason) {
    static const struct { const char *s; size_t at; const char *why; } bad[] = {
        {"", 0, "expected a value, got the end of the text"},
        {"   ", 3, "expected a value"},
        {"{", 1, "a string key or '}'"},
        {"{\"a\" 1}", 5, "':' after an object key"},
        {"{\"a\":1,}", 7, "a string key after ','"},
        {"{\"a\":1 \"b\":2}", 7, "',' or '}'"},
        {"{a:1}", 1, "a string key"},
        {"[1,]", 3, "expected a value, got ']'"},
        {"[1 2]", 3, "',' or ']'"},
        {"[1", 2, "',' or ']'"},
        {"tru", 0, "expected a value"},
        {"nulls", 4, "end of the text after the top-level value"},
        {"{} {}", 3, "end of the text"},
        {"\xef\xbb\xbf{}", 0, "byte-order mark"},
        {"[\x0b]", 1, "byte 0x0b"},
        {"'a'", 0, "got '''"},
    };
    for (size_t k = 0; k < RLX_ARRAY_LEN(bad); k++) {
        json_doc *d = (json_doc *)1;
        CHECK_STATUS(parse(bad[k].s, &d), RLX_STATUS_FORMAT);
        CHECK(d == NULL);
        char at[32];
        snprintf(at, sizeof at, "json: byte %zu: ", bad[k].at);
        CHECK_MSG(strstr(rlx_last_error(), at) && strstr(rlx_last_error(), bad[k].why), "case %zu '%s': %s", k, bad[k].s,
                  rlx_last_error());
    }
    /* the name and base offset of the options appear in the message */
    json_options o;
    json_options_init(&o);
    o.name = "config.json";
    o.base_offset = 100;
    json_doc *d;
    CHECK_STATUS(json_parse("[1,,2]", 6, &o, &d), RLX_STATUS_FORMAT);
    CHECK_MSG(strstr(rlx_last_error(), "config.json: byte 103: expected a value, got ','"), "%s", rlx_last_error());
    /* the text need not be NUL-terminated: a length ends it */
    CHECK_OK(json_parse("[1]xyz", 3, NULL, &d));
    json_free(d);
    CHECK_STATUS(json_parse(NULL, 1, NULL, &d), RLX_STATUS_INVALID_ARGUMENT);
}

TEST(json_duplicate_keys) {
    json_doc *d;
    CHECK_STATUS(parse("{\"a\":1,\"b\":2,\"a\":3}", &d), RLX_STATUS_FORMAT);
    CHECK_MSG(strstr(rlx_last_error(), "byte 13: duplicate key \"a\" (first at byte 1)"), "%s", rlx_last_error());
    CHECK_STATUS(parse("{\"x\":{\"k\":1,\"k\":1}}", &d), RLX_STATUS_FORMAT);
    CHECK(strstr(rlx_last_error(), "duplicate key \"k\""));
    /* keys equal after unescaping are duplicates */
    CHECK_STATUS(parse("{\"\\u0041\":1,\"A\":2}", &d), RLX_STATUS_FORMAT);
    /* the same key in two objects is fine; a prefix is another key */
    CHECK_OK(parse("[{\"k\":1},{\"k\":2,\"kk\":3}]", &d));
    json_free(d);
    /* a large object (sorted check): a duplicate among 200 keys, and none */
    char buf[4096];
    for (int dup = 0; dup < 2; dup++) {
        int n = snprintf(buf, sizeof buf, "{");
        for (int i = 0; i < 200; i++)
            n += snprintf(buf + n, sizeof buf - (size_t)n, "%s\"key%d\":%d", i ? "," : "", dup && i == 150 ? 17 : i, i);
        snprintf(buf + n, sizeof buf - (size_t)n, "}");
        rlx_status st = parse(buf, &d);
        if (dup) {
            CHECK_STATUS(st, RLX_STATUS_FORMAT);
            CHECK_MSG(strstr(rlx_last_error(), "duplicate key \"key17\""), "%s", rlx_last_error());
        } else {
            CHECK_OK(st);
            CHECK(json_len(json_root(d)) == 200 && json_get(json_root(d), "key199")->u.num.i == 199);
            json_free(d);
        }
    }
}

TEST(json_depth_bound) {
    char buf[600];
    for (int depth = JSON_DEFAULT_MAX_DEPTH; depth <= JSON_DEFAULT_MAX_DEPTH + 1; depth++) {
        int n = 0;
        for (int i = 0; i < depth; i++) buf[n++] = i % 2 ? '[' : '[';
        for (int i = 0; i < depth; i++) buf[n++] = ']';
        json_doc *d;
        rlx_status st = json_parse(buf, (size_t)n, NULL, &d);
        if (depth == JSON_DEFAULT_MAX_DEPTH) {
            CHECK_OK(st);
            json_free(d);
        } else {
            CHECK_STATUS(st, RLX_STATUS_FORMAT);
            CHECK_MSG(strstr(rlx_last_error(), "nesting deeper than 128 levels"), "%s", rlx_last_error());
        }
    }
    json_options o;
    json_options_init(&o);
    o.max_depth = 2;
    json_doc *d;
    CHECK_OK(json_parse("{\"a\":[1]}", 9, &o, &d));
    json_free(d);
    CHECK_STATUS(json_parse("{\"a\":[{}]}", 10, &o, &d), RLX_STATUS_FORMAT);
    CHECK(strstr(rlx_last_error(), "byte 6: nesting deeper than 2"));
    /* deep and unclosed: the error, not a crash */
    memset(buf, '[', sizeof buf);
    CHECK_STATUS(json_parse(buf, sizeof buf, NULL, &d), RLX_STATUS_FORMAT);
}

TEST(json_typed_getters) {
    json_doc *d;
    CHECK_OK(parse("{\"n\":3,\"f\":0.5,\"big\":1e300,\"s\":\"hi\",\"b\":true,\"a\":[1],\"o\":{}}", &d));
    const json_value *r = json_root(d);
    int64_t i;
    double f;
    bool b;
    const char *s;
    size_t len;
    const json_value *v;
    CHECK_OK(json_get_i64(r, "n", &i));
    CHECK(i == 3);
    CHECK_OK(json_get_f64(r, "f", &f));
    CHECK(f == 0.5);
    CHECK_OK(json_get_f64(r, "n", &f));
    CHECK(f == 3);
    CHECK_OK(json_get_str(r, "s", &s, &len));
    CHECK(strcmp(s, "hi") == 0 && len == 2);
    CHECK_OK(json_get_bool(r, "b", &b));
    CHECK(b);
    CHECK_OK(json_get_typed(r, "a", JSON_ARRAY, &v));
    CHECK(json_len(v) == 1);
    CHECK_STATUS(json_get_i64(r, "missing", &i), RLX_STATUS_NOT_FOUND);
    CHECK(strstr(rlx_last_error(), "no key 'missing'"));
    CHECK_STATUS(json_get_i64(r, "s", &i), RLX_STATUS_FORMAT);
    CHECK_MSG(strstr(rlx_last_error(), "json key 's' (byte 31): expected an integer, got string"), "%s", rlx_last_error());
    CHECK_STATUS(json_get_i64(r, "f", &i), RLX_STATUS_FORMAT);
    CHECK(strstr(rlx_last_error(), "got 0.5"));
    CHECK_STATUS(json_get_i64(r, "big", &i), RLX_STATUS_FORMAT);
    CHECK(strstr(rlx_last_error(), "outside the int64 range"));
    CHECK_STATUS(json_get_str(r, "n", &s, NULL), RLX_STATUS_FORMAT);
    CHECK_STATUS(json_get_bool(r, "n", &b), RLX_STATUS_FORMAT);
    CHECK_STATUS(json_get_typed(r, "o", JSON_ARRAY, &v), RLX_STATUS_FORMAT);
    CHECK(strstr(rlx_last_error(), "expected array, got object"));
    CHECK_STATUS(json_get_i64(json_get(r, "a"), "x", &i), RLX_STATUS_NOT_FOUND);
    CHECK(strstr(rlx_last_error(), "not an object"));
    CHECK_STATUS(json_as_i64(NULL, "config.json key 'x'", &i), RLX_STATUS_FORMAT);
    CHECK(strstr(rlx_last_error(), "config.json key 'x': missing"));
    CHECK(strcmp(json_type_name(JSON_OBJECT), "object") == 0);
    json_free(d);
}

/* json_quote's output parses back to the bytes it was given. */
TEST(json_quote_round_trip) {
    const char *samples[] = {"", "plain", "q\"b\\s/", "\x01\x1f\n\t\r\b\f", "\xc3\xa9\xf0\x9f\x98\x80", "a\x7f"};
    for (size_t k = 0; k < RLX_ARRAY_LEN(samples); k++) {
        const char *s = samples[k];
        size_t n = strlen(s), q = json_quoted_len(s, n);
        char *buf = malloc(q);
        CHECK(buf && json_quote(buf, s, n) == buf + q);
        json_doc *d;
        rlx_status st = json_parse(buf, q, NULL, &d);
        free(buf);
        CHECK_OK(st);
        CHECK_MSG(json_root(d)->type == JSON_STRING && json_root(d)->u.str.len == n && memcmp(json_root(d)->u.str.s, s, n) == 0,
                  "sample %zu", k);
        json_free(d);
    }
    size_t bad;
    CHECK(json_utf8_valid("ok\xc3\xa9", 4, NULL));
    CHECK(!json_utf8_valid("ok\xc3", 3, &bad) && bad == 2);
    char out[12];
    json_printable(out, sizeof out, "a\nbcdefghijklmnop", 17);
    CHECK_MSG(strcmp(out, "a?bcdefg...") == 0, "%s", out);
}
