/* check_ctl_proto: unit tests for ctl_proto.c — framing and its limit, call validation in its
 * fixed order, malformed input, replies, and the interface descriptions against the Varlink
 * grammar. */
#include <check.h>
#include <ctype.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_proto.h"
#include "testutil.h"
#include "util.h"

/* ---- framing ---- */

START_TEST(test_frame_complete)
{
	size_t n = 99;

	ck_assert_int_eq(ctl_proto_frame("{}\0{\"a\":1}\0", 12, 16, &n), CTL_FRAME_COMPLETE);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(ctl_proto_frame("\0", 1, 16, &n), CTL_FRAME_COMPLETE);
	ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(test_frame_incomplete)
{
	size_t n;

	ck_assert_int_eq(ctl_proto_frame("", 0, 16, &n), CTL_FRAME_INCOMPLETE);
	ck_assert_int_eq(ctl_proto_frame("{\"method\"", 9, 16, &n), CTL_FRAME_INCOMPLETE);
}
END_TEST

/* The limit is exact: a message of `limit` bytes passes, one byte more does not. */
START_TEST(test_frame_limit)
{
	enum { L = 64 };
	char buf[L + 8];
	size_t n;

	memset(buf, 'x', sizeof(buf));
	ck_assert_int_eq(ctl_proto_frame(buf, L, L, &n), CTL_FRAME_INCOMPLETE);
	ck_assert_int_eq(ctl_proto_frame(buf, L + 1, L, &n), CTL_FRAME_TOO_LARGE);
	ck_assert_int_eq(ctl_proto_frame(buf, sizeof(buf), L, &n), CTL_FRAME_TOO_LARGE);
	buf[L] = '\0';
	ck_assert_int_eq(ctl_proto_frame(buf, sizeof(buf), L, &n), CTL_FRAME_COMPLETE);
	ck_assert_uint_eq(n, L);
	buf[L] = 'x';
	buf[L + 1] = '\0'; /* a NUL beyond the limit does not make it acceptable */
	ck_assert_int_eq(ctl_proto_frame(buf, sizeof(buf), L, &n), CTL_FRAME_TOO_LARGE);
	ck_assert_int_eq(CTL_MAX_REQUEST, 65536);
}
END_TEST

/* ---- calls ---- */

static json_t *err_of(const char *msg)
{
	struct ctl_call call;
	json_t *err = NULL;

	ck_assert_int_eq(ctl_proto_parse_call(msg, strlen(msg), &call, &err), -1);
	ck_assert_ptr_null(call.msg);
	ck_assert_ptr_nonnull(err);
	return err;
}

static void expect_error(const char *msg, const char *error, const char *key, const char *value)
{
	json_t *err = err_of(msg);
	const json_t *params = json_object_get(err, "parameters");

	ck_assert_str_eq(json_string_value(json_object_get(err, "error")), error);
	ck_assert_msg(json_is_object(params), "%s: error without parameters", msg);
	if (key)
		ck_assert_str_eq(json_string_value(json_object_get(params, key)), value);
	json_decref(err);
}

static void expect_invalid(const char *msg)
{
	expect_error(msg, CTL_E_INVALID_REQUEST, NULL, NULL);
}

START_TEST(test_call_ok)
{
	static const char *const good[] = {
		"{\"method\":\"io.entropyd.GetStatus\"}",
		"{\"method\":\"io.entropyd.GetStatus\",\"parameters\":{}}",
		"{\"method\":\"io.entropyd.GetStatus\",\"parameters\":null}",
		" {\"method\": \"io.entropyd.GetSources\", \"more\": false} \n",
		"{\"method\":\"io.entropyd.Reload\",\"oneway\":null}",
		"{\"method\":\"org.varlink.service.GetInfo\"}",
		("{\"method\":\"org.varlink.service.GetInterfaceDescription\","
		 "\"parameters\":{\"interface\":\"io.entropyd\"}}"),
	};
	static const enum ctl_method want[] = {CTL_GET_STATUS, CTL_GET_STATUS, CTL_GET_STATUS,
					       CTL_GET_SOURCES, CTL_RELOAD, CTL_GET_INFO,
					       CTL_GET_INTERFACE_DESCRIPTION};

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		struct ctl_call call;
		json_t *err = NULL;

		ck_assert_msg(ctl_proto_parse_call(good[i], strlen(good[i]), &call, &err) == 0, "%s",
			      good[i]);
		ck_assert_ptr_null(err);
		ck_assert_int_eq(call.method, want[i]);
		ck_assert(json_is_object(call.params));
		ck_assert(!call.oneway && !call.more);
		ctl_proto_call_free(&call);
	}
}
END_TEST

START_TEST(test_call_flags)
{
	const char *m = "{\"method\":\"io.entropyd.GetStatus\",\"oneway\":true,\"more\":true}";
	struct ctl_call call;
	json_t *err = NULL;

	ck_assert_int_eq(ctl_proto_parse_call(m, strlen(m), &call, &err), 0);
	ck_assert(call.oneway);
	ck_assert(call.more);
	ctl_proto_call_free(&call);
	/* A oneway call that fails: the caller must be able to tell, to stay silent. */
	m = "{\"method\":\"io.entropyd.Nope\",\"oneway\":true}";
	ck_assert_int_eq(ctl_proto_parse_call(m, strlen(m), &call, &err), -1);
	ck_assert(call.oneway);
	json_decref(err);
}
END_TEST

START_TEST(test_call_malformed)
{
	static const char *const bad[] = {
		"",
		"{",
		"{\"method\":\"io.entropyd.GetStatus\"",
		"{\"method\":\"io.entropyd.GetStatus\"} {}",
		"{\"method\":\"io.entropyd.GetStatus\",\"method\":\"io.entropyd.Reload\"}",
		"[\"io.entropyd.GetStatus\"]",
		"\"io.entropyd.GetStatus\"",
		"42",
		"null",
		"{}",
		"{\"method\":42}",
		"{\"method\":null}",
		"{\"parameters\":{}}",
		"{\"method\":\"io.entropyd.GetStatus\",\"parameters\":[]}",
		"{\"method\":\"io.entropyd.GetStatus\",\"parameters\":\"x\"}",
		"{\"method\":\"io.entropyd.GetStatus\",\"oneway\":1}",
		"{\"method\":\"io.entropyd.GetStatus\",\"more\":\"yes\"}",
		"{\"method\":\"io.entropyd.GetStatus\",\"upgrade\":true}",
		"{\"method\":\"io.entropyd.GetStatus\",\"colour\":\"blue\"}",
		"{\"method\":\"io.entropyd.GetStatus\xff\"}",
		"{\"method\":\"io.entropyd.Get\\u0000Status\"}",
		"\xef\xbb\xbf{}",
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		expect_invalid(bad[i]);
}
END_TEST

START_TEST(test_call_unknown_method)
{
	expect_error("{\"method\":\"io.entropyd.Nope\"}", CTL_E_METHOD_NOT_FOUND, "method",
		     "io.entropyd.Nope");
	expect_error("{\"method\":\"GetStatus\"}", CTL_E_METHOD_NOT_FOUND, "method", "GetStatus");
	expect_error("{\"method\":\"org.example.ftl.Jump\"}", CTL_E_INTERFACE_NOT_FOUND,
		     "interface", "org.example.ftl");
	expect_error("{\"method\":\"org.varlink.service.Nope\"}", CTL_E_METHOD_NOT_FOUND, "method",
		     "org.varlink.service.Nope");
	expect_error("{\"method\":\"\"}", CTL_E_METHOD_NOT_FOUND, "method", "");
}
END_TEST

START_TEST(test_call_parameters)
{
	expect_error("{\"method\":\"io.entropyd.GetStatus\",\"parameters\":{\"verbose\":true}}",
		     CTL_E_INVALID_PARAMETER, "parameter", "verbose");
	expect_error("{\"method\":\"org.varlink.service.GetInterfaceDescription\"}",
		     CTL_E_INVALID_PARAMETER, "parameter", "interface");
	expect_error("{\"method\":\"org.varlink.service.GetInterfaceDescription\","
		     "\"parameters\":{\"interface\":42}}",
		     CTL_E_INVALID_PARAMETER, "parameter", "interface");
	expect_error("{\"method\":\"org.varlink.service.GetInterfaceDescription\","
		     "\"parameters\":{\"interface\":null}}",
		     CTL_E_INVALID_PARAMETER, "parameter", "interface");
	expect_error("{\"method\":\"org.varlink.service.GetInterfaceDescription\","
		     "\"parameters\":{\"interface\":\"io.entropyd\",\"x\":1}}",
		     CTL_E_INVALID_PARAMETER, "parameter", "x");
}
END_TEST

/* Size, JSON, shape, method, parameters: the first failing step decides the error. */
START_TEST(test_call_order)
{
	/* bad shape and unknown method: the shape */
	expect_invalid("{\"method\":\"io.entropyd.Nope\",\"parameters\":[]}");
	/* unknown method and bad parameters: the method */
	expect_error("{\"method\":\"io.entropyd.Nope\",\"parameters\":{\"x\":1}}",
		     CTL_E_METHOD_NOT_FOUND, "method", "io.entropyd.Nope");
	/* a root-only method with bad parameters: the parameters (access comes last) */
	expect_error("{\"method\":\"io.entropyd.Reload\",\"parameters\":{\"x\":1}}",
		     CTL_E_INVALID_PARAMETER, "parameter", "x");
	ck_assert(ctl_proto_methods[CTL_RELOAD].root_only);
	ck_assert(!ctl_proto_methods[CTL_GET_STATUS].root_only);
}
END_TEST

/* Random bytes with a fixed seed: every one is either a call or an error that encodes. */
START_TEST(test_call_random)
{
	const unsigned seed = 20260101;
	static const char alphabet[] = "{}[]\":,. \\0123456789abcdefmnortuvwxyzGSIRlp\x80\xc3\xff";
	char buf[96];

	srandom(seed);
	for (int i = 0; i < 20000; i++) {
		size_t len = (size_t)(random() % (long)sizeof(buf)), n;
		struct ctl_call call;
		json_t *err = NULL;
		char *out;

		for (size_t k = 0; k < len; k++)
			buf[k] = alphabet[random() % (long)(sizeof(alphabet) - 1)];
		if (i % 3 == 0 && len > 40) /* often start like a real call */
			memcpy(buf, "{\"method\":\"io.entropyd.GetStatus\",", 34);
		if (ctl_proto_parse_call(buf, len, &call, &err) == 0) {
			ctl_proto_call_free(&call);
			continue;
		}
		out = ctl_proto_encode(err, &n);
		ck_assert_msg(out != NULL, "seed %u, case %d: the error does not encode", seed, i);
		ck_assert_uint_eq(strlen(out) + 1, n);
		free(out);
		json_decref(err);
	}
}
END_TEST

/* ---- messages ---- */

START_TEST(test_encode)
{
	json_t *msg = ctl_proto_reply_new(json_pack("{s:s, s:o}", "a", "x\001y", "n", ctl_proto_real(NAN)));
	struct ctl_reply r;
	size_t len;
	char *out = ctl_proto_encode(msg, &len);

	ck_assert_ptr_nonnull(out);
	ck_assert_uint_eq(strlen(out) + 1, len); /* exactly one NUL, at the end */
	ck_assert_int_eq(ctl_proto_parse_reply(out, len - 1, &r), 0);
	ck_assert_ptr_null(r.error);
	ck_assert_str_eq(json_string_value(json_object_get(r.params, "a")), "x\001y");
	ck_assert(json_is_null(json_object_get(r.params, "n")));
	ctl_proto_reply_free(&r);
	free(out);
	json_decref(msg);
	ck_assert(json_is_null(ctl_proto_real(INFINITY)));
	msg = ctl_proto_real(1.5);
	ck_assert(json_real_value(msg) == 1.5);
	json_decref(msg);
}
END_TEST

START_TEST(test_reply_parse)
{
	static const char *const bad[] = {"", "[]", "{\"error\":1}", "{\"parameters\":[]}",
					  "{\"parameters\":{}} x"};
	const char *m = "{\"error\":\"io.entropyd.ConfigInvalid\",\"parameters\":"
			"{\"errors\":[\"a.conf:3: feed.mode: no\"]}}";
	struct ctl_reply r;

	ck_assert_int_eq(ctl_proto_parse_reply(m, strlen(m), &r), 0);
	ck_assert_str_eq(r.error, CTL_E_CONFIG_INVALID);
	ck_assert_uint_eq(json_array_size(json_object_get(r.params, "errors")), 1);
	ctl_proto_reply_free(&r);
	m = "{\"continues\":true}";
	ck_assert_int_eq(ctl_proto_parse_reply(m, strlen(m), &r), 0);
	ck_assert(json_is_object(r.params));
	ck_assert(r.continues);
	ctl_proto_reply_free(&r);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		ck_assert_msg(ctl_proto_parse_reply(bad[i], strlen(bad[i]), &r) == -1, "%s", bad[i]);
}
END_TEST

START_TEST(test_error_utf8)
{
	json_t *err = ctl_proto_error_str(CTL_E_INVALID_REQUEST, "reason", "cut \xc3");
	size_t n;
	char *out = ctl_proto_encode(err, &n);

	ck_assert_ptr_nonnull(out);
	free(out);
	json_decref(err);
}
END_TEST

/* ---- interface descriptions: a small parser of the Varlink interface grammar ---- */

struct idl {
	const char *p;
	jmp_buf fail;
	char why[160];
	char names[64][64]; /* types, methods and errors: one namespace */
	size_t n;
	char refs[64][64]; /* custom types used */
	size_t n_refs;
	char methods[16][64];
	size_t n_methods;
	char errors[16][64];
	size_t n_errors;
};

static void bad(struct idl *x, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void bad(struct idl *x, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(x->why, sizeof(x->why), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(x->why))
		snprintf(x->why + n, sizeof(x->why) - (size_t)n, " at: %.30s", x->p);
	longjmp(x->fail, 1);
}

static void skip_ws(struct idl *x)
{
	for (;;) {
		while (*x->p == ' ' || *x->p == '\t' || *x->p == '\n' || *x->p == '\r')
			x->p++;
		if (*x->p != '#')
			return;
		while (*x->p && *x->p != '\n')
			x->p++;
	}
}

/* A word of [A-Za-z0-9_.]; empty if none. */
static void word(struct idl *x, char *out, size_t size)
{
	size_t n = 0;

	skip_ws(x);
	while ((isalnum((unsigned char)*x->p) || *x->p == '_' || *x->p == '.') && n + 1 < size)
		out[n++] = *x->p++;
	out[n] = '\0';
}

static void expect(struct idl *x, const char *tok)
{
	skip_ws(x);
	if (strncmp(x->p, tok, strlen(tok)) != 0)
		bad(x, "expected '%s'", tok);
	x->p += strlen(tok);
}

static bool next_is(struct idl *x, char c)
{
	skip_ws(x);
	return *x->p == c;
}

static bool field_name_ok(const char *s)
{
	/* [a-z] then ([_]?[a-zA-Z0-9])* */
	if (!islower((unsigned char)s[0]))
		return false;
	for (size_t i = 1; s[i]; i++) {
		if (s[i] == '_') {
			if (!isalnum((unsigned char)s[i + 1]))
				return false;
		} else if (!isalnum((unsigned char)s[i])) {
			return false;
		}
	}
	return true;
}

static bool type_name_ok(const char *s)
{
	if (!isupper((unsigned char)s[0]))
		return false;
	for (size_t i = 1; s[i]; i++)
		if (!isalnum((unsigned char)s[i]))
			return false;
	return true;
}

static void parse_struct(struct idl *x, bool allow_enum);

static void parse_type(struct idl *x)
{
	char w[64];

	skip_ws(x);
	if (*x->p == '?') {
		x->p++;
		skip_ws(x);
		if (*x->p == '?')
			bad(x, "?? is not a type");
	}
	if (*x->p == '[') {
		x->p++;
		if (*x->p == ']') {
			x->p++;
		} else {
			word(x, w, sizeof(w));
			if (strcmp(w, "string") != 0)
				bad(x, "a map's key must be string, not '%s'", w);
			expect(x, "]");
		}
		parse_type(x);
		return;
	}
	if (*x->p == '(') {
		parse_struct(x, true);
		return;
	}
	word(x, w, sizeof(w));
	if (!strcmp(w, "bool") || !strcmp(w, "int") || !strcmp(w, "float") ||
	    !strcmp(w, "string") || !strcmp(w, "object"))
		return;
	if (!type_name_ok(w))
		bad(x, "not a type: '%s'", w);
	if (x->n_refs < ARRAY_SIZE(x->refs))
		snprintf(x->refs[x->n_refs++], 64, "%s", w);
}

/* ( field: type, ... ) or, where allowed, an enum ( a, b, c ); () is empty. */
static void parse_struct(struct idl *x, bool allow_enum)
{
	char seen[32][64];
	size_t n = 0;
	int is_enum = -1;

	expect(x, "(");
	if (next_is(x, ')')) {
		x->p++;
		return;
	}
	for (;;) {
		char name[64];

		word(x, name, sizeof(name));
		if (!field_name_ok(name))
			bad(x, "bad field name '%s'", name);
		for (size_t i = 0; i < n; i++)
			if (!strcmp(seen[i], name))
				bad(x, "field %s twice", name);
		if (n == ARRAY_SIZE(seen))
			bad(x, "too many fields for this checker");
		snprintf(seen[n++], 64, "%s", name);
		if (next_is(x, ':')) {
			if (is_enum == 1)
				bad(x, "a field in an enum");
			is_enum = 0;
			x->p++;
			parse_type(x);
		} else {
			if (!allow_enum || is_enum == 0)
				bad(x, "'%s' has no type", name);
			is_enum = 1;
		}
		if (next_is(x, ')')) {
			x->p++;
			return;
		}
		expect(x, ",");
	}
}

static void add_name(struct idl *x, const char *name)
{
	if (!type_name_ok(name))
		bad(x, "bad member name '%s'", name);
	for (size_t i = 0; i < x->n; i++)
		if (!strcmp(x->names[i], name))
			bad(x, "%s defined twice", name);
	if (x->n == ARRAY_SIZE(x->names))
		bad(x, "too many members for this checker");
	snprintf(x->names[x->n++], 64, "%s", name);
}

static void idl_members(struct idl *x, const char *want_name)
{
	char w[64], name[64];

	word(x, w, sizeof(w));
	if (strcmp(w, "interface") != 0)
		bad(x, "does not start with the interface keyword");
	word(x, name, sizeof(name));
	if (strcmp(name, want_name) != 0)
		bad(x, "interface %s, want %s", name, want_name);
	/* reverse-domain: lowercase labels, dots between, at least two */
	if (!strchr(name, '.') || name[0] == '.' || name[strlen(name) - 1] == '.')
		bad(x, "%s is not a reverse-domain name", name);
	for (const char *c = name; *c; c++)
		if (!islower((unsigned char)*c) && !isdigit((unsigned char)*c) && *c != '.' &&
		    *c != '-')
			bad(x, "%s is not a reverse-domain name", name);
	for (;;) {
		skip_ws(x);
		if (!*x->p)
			break;
		word(x, w, sizeof(w));
		word(x, name, sizeof(name));
		add_name(x, name);
		if (!strcmp(w, "type")) {
			parse_struct(x, true);
		} else if (!strcmp(w, "method")) {
			parse_struct(x, false);
			expect(x, "->");
			parse_struct(x, false);
			snprintf(x->methods[x->n_methods++ % 16], 64, "%s", name);
		} else if (!strcmp(w, "error")) {
			parse_struct(x, false);
			snprintf(x->errors[x->n_errors++ % 16], 64, "%s", name);
		} else {
			bad(x, "unknown keyword '%s'", w);
		}
	}
	for (size_t i = 0; i < x->n_refs; i++) {
		bool found = false;

		for (size_t k = 0; k < x->n; k++)
			found |= strcmp(x->names[k], x->refs[i]) == 0;
		if (!found)
			bad(x, "type %s is used but not defined", x->refs[i]);
	}
}

/* NULL if text is a valid description of interface want_name, else why not. */
static const char *parse_idl(struct idl *x, const char *text, const char *want_name)
{
	memset(x, 0, sizeof(*x));
	x->p = text;
	if (setjmp(x->fail))
		return x->why;
	idl_members(x, want_name);
	return NULL;
}

static bool has(char (*list)[64], size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i], name))
			return true;
	return false;
}

START_TEST(test_description_entropyd)
{
	static const char *const errors[] = {CTL_E_CONFIG_INVALID, CTL_E_INVALID_REQUEST,
					     CTL_E_REQUEST_TOO_LARGE, CTL_E_TOO_MANY_CLIENTS};
	const char *text = ctl_proto_interface_description(CTL_INTERFACE), *why;
	char version[64];
	static struct idl x;

	ck_assert_ptr_nonnull(text);
	why = parse_idl(&x, text, CTL_INTERFACE);
	ck_assert_msg(why == NULL, "io.entropyd: %s", why);
	/* Every io.entropyd method the server dispatches, and every error it sends, is declared. */
	for (int i = 0; i < CTL_METHOD_COUNT; i++) {
		const char *m = ctl_proto_methods[i].name;

		if (!strncmp(m, CTL_INTERFACE ".", strlen(CTL_INTERFACE) + 1))
			ck_assert_msg(has(x.methods, x.n_methods, m + strlen(CTL_INTERFACE) + 1),
				      "%s is not in the description", m);
	}
	ck_assert_uint_eq(x.n_methods, 3);
	for (size_t i = 0; i < ARRAY_SIZE(errors); i++)
		ck_assert_msg(has(x.errors, x.n_errors, errors[i] + strlen(CTL_INTERFACE) + 1),
			      "%s is not declared", errors[i]);
	/* The version in the text is the one in the header. */
	snprintf(version, sizeof(version), "# Interface version %d ", CTL_PROTO_VERSION);
	ck_assert_ptr_nonnull(strstr(text, version));
}
END_TEST

START_TEST(test_description_service)
{
	static const char *const errors[] = {CTL_E_INTERFACE_NOT_FOUND, CTL_E_METHOD_NOT_FOUND,
					     CTL_E_INVALID_PARAMETER, CTL_E_PERMISSION_DENIED};
	static struct idl x;
	const char *why = parse_idl(&x, ctl_proto_interface_description(CTL_SERVICE), CTL_SERVICE);

	ck_assert_msg(why == NULL, "org.varlink.service: %s", why);
	ck_assert(has(x.methods, x.n_methods, "GetInfo"));
	ck_assert(has(x.methods, x.n_methods, "GetInterfaceDescription"));
	for (size_t i = 0; i < ARRAY_SIZE(errors); i++)
		ck_assert(has(x.errors, x.n_errors, errors[i] + strlen(CTL_SERVICE) + 1));
	ck_assert_ptr_null(ctl_proto_interface_description("org.example.ftl"));
	ck_assert_ptr_null(ctl_proto_interface_description(""));
	for (size_t i = 0; ctl_proto_interfaces[i]; i++)
		ck_assert_ptr_nonnull(ctl_proto_interface_description(ctl_proto_interfaces[i]));
}
END_TEST

/* The checker accepts the grammar's forms and refuses what the grammar refuses. */
START_TEST(test_idl_checker)
{
	static const char *const refused[] = {
		"interface org.example.a\ntype T (Bad: int)\n",
		"interface org.example.a\nmethod M() -> (u: Undefined)\n",
		"interface org.example.a\ntype T (a: int, a: int)\n",
		"interface org.example.a\ntype T (a: int)\ntype T (b: int)\n",
		"interface org.example.a\ntype T (a_: int)\n",
		"interface org.example.a\ntype T (a: [int]string)\n",
		"interface org.example.a\nmethod M(a, b) -> ()\n",
		"interface org.example.a\nmethod M() ()\n",
		"interface org.example.a\nsignal S ()\n",
		"interface Example\n",
		"type T ()\n",
	};
	static struct idl x;
	const char *why = parse_idl(&x,
				    "# doc\ninterface org.example.a\n"
				    "type T (a: int, b: ?[]string, c: [string]T, d: (x, y),\n"
				    "  # a field comment\n  e: (f: float, g: object))\n"
				    "method M(t: T) -> ()\nerror E ()\n",
				    "org.example.a");

	ck_assert_msg(why == NULL, "%s", why);
	ck_assert_uint_eq(x.n_methods, 1);
	ck_assert_uint_eq(x.n_errors, 1);
	for (size_t i = 0; i < ARRAY_SIZE(refused); i++)
		ck_assert_msg(parse_idl(&x, refused[i], "org.example.a") != NULL, "accepted: %s",
			      refused[i]);
}
END_TEST

static Suite *ctl_proto_suite(void)
{
	Suite *s = suite_create("ctl_proto");
	TCase *tf = tcase_create("frame"), *tc = tcase_create("call"), *tm = tcase_create("msg"),
	      *td = tcase_create("description");

	tcase_add_test(tf, test_frame_complete);
	tcase_add_test(tf, test_frame_incomplete);
	tcase_add_test(tf, test_frame_limit);
	suite_add_tcase(s, tf);
	tcase_add_test(tc, test_call_ok);
	tcase_add_test(tc, test_call_flags);
	tcase_add_test(tc, test_call_malformed);
	tcase_add_test(tc, test_call_unknown_method);
	tcase_add_test(tc, test_call_parameters);
	tcase_add_test(tc, test_call_order);
	tcase_add_test(tc, test_call_random);
	suite_add_tcase(s, tc);
	tcase_add_test(tm, test_encode);
	tcase_add_test(tm, test_reply_parse);
	tcase_add_test(tm, test_error_utf8);
	suite_add_tcase(s, tm);
	tcase_add_test(td, test_description_entropyd);
	tcase_add_test(td, test_description_service);
	tcase_add_test(td, test_idl_checker);
	suite_add_tcase(s, td);
	return s;
}

int main(void)
{
	return tu_run_suite(ctl_proto_suite());
}
