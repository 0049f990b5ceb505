// SPDX-License-Identifier: Apache-2.0
/*
 * Typed access to hostile JSON, shared by the bundle parser (meta.c) and
 * the pod policy annotations (meta_pod.c): strict parsing with bounded
 * depth, members of a required type, strings that must fit their buffer
 * whole and carry no NUL, and the one-line reason a member was refused.
 *
 * It calls neither of its users, so calls in meta/ go one way: meta.c ->
 * meta_pod.c, and both -> here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "meta_internal.h"

int meta_member(struct json_object *parent, const char *key, enum json_type type,
		struct json_object **ret)
{
	struct json_object *v;

	if (!json_object_object_get_ex(parent, key, &v) || !v)
		return 0;
	if (!json_object_is_type(v, type))
		return -EBADMSG;
	*ret = v;
	return 1;
}

/* json-c's name of a type with its article: "an int", "a string". */
static const char *type_phrase(enum json_type type, char *buf, size_t len)
{
	const char *name = json_type_to_name(type);

	snprintf(buf, len, "%s %s", strchr("aeiou", name[0]) ? "an" : "a", name);
	return buf;
}

void meta_why(struct json_object *parent, const char *key, enum json_type type, size_t limit,
	      char *buf, size_t len)
{
	struct json_object *v = NULL;
	char is[32], want[32];
	size_t n;

	json_object_object_get_ex(parent, key, &v);
	if (!json_object_is_type(v, type)) {
		snprintf(buf, len, "\"%s\" is %s, expected %s", key,
			 type_phrase(json_object_get_type(v), is, sizeof(is)),
			 type_phrase(type, want, sizeof(want)));
		return;
	}
	if (type != json_type_string) {
		snprintf(buf, len, "\"%s\" is out of range", key);
		return;
	}
	n = (size_t)json_object_get_string_len(v);
	if (strlen(json_object_get_string(v)) != n)
		snprintf(buf, len, "\"%s\" contains a NUL character", key);
	else
		snprintf(buf, len, "\"%s\" is %zu bytes, limit %zu", key, n, limit ? limit - 1 : 0);
}

int meta_string_fit(struct json_object *v, size_t size, const char **ret)
{
	const char *s = json_object_get_string(v);
	size_t len = (size_t)json_object_get_string_len(v);

	if (strlen(s) != len || len >= size)
		return -EBADMSG;
	*ret = s;
	return 0;
}

/* A string member that fits size bytes: 1 and *ret (owned by parent),
 * 0 absent, -EBADMSG (another type, a NUL inside, too long). */
static int fit_member(struct json_object *parent, const char *key, size_t size,
		      const char **ret)
{
	struct json_object *v;
	int r = meta_member(parent, key, json_type_string, &v);

	if (r <= 0)
		return r;
	return meta_string_fit(v, size, ret) < 0 ? -EBADMSG : 1;
}

/* fit_member() + copy. Returns 1 copied, 0 absent, -EBADMSG. */
int meta_get_string(struct json_object *parent, const char *key, char *dst, size_t size)
{
	const char *s;
	int r = fit_member(parent, key, size, &s);

	if (r > 0)
		memcpy(dst, s, strlen(s) + 1);
	return r;
}

int meta_dup_string(struct json_object *parent, const char *key, size_t max, char **ret)
{
	const char *s;
	int r = fit_member(parent, key, max + 1, &s);

	if (r <= 0)
		return r;
	*ret = strdup(s);
	return *ret ? 1 : -ENOMEM;
}

int meta_parse_json(const char *text, size_t len, struct json_object **ret, char *why,
		    size_t why_len)
{
	struct json_tokener *tok;
	struct json_object *o;
	enum json_tokener_error e = json_tokener_success;

	if (len > META_MAX_CONFIG_BYTES) {
		snprintf(why, why_len, "%zu bytes, limit %u", len, META_MAX_CONFIG_BYTES);
		return -EFBIG;
	}
	if (memchr(text, '\0', len)) {
		snprintf(why, why_len, "a NUL byte in the JSON text");
		return -EBADMSG;
	}
	/* The depth bounds json-c's recursion: 100k nested arrays must be an
	 * error, not a stack overflow or a minute of work. */
	tok = json_tokener_new_ex(META_MAX_JSON_DEPTH);
	if (!tok)
		return -ENOMEM;
	/* Strict: no trailing garbage or commas; UTF-8 checked because the
	 * strings end up in logs and termination messages. */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, text, (int)len);
	if (!o) {
		e = json_tokener_get_error(tok);
		if (e == json_tokener_error_depth)
			snprintf(why, why_len, "JSON nested deeper than %d", META_MAX_JSON_DEPTH);
		else
			snprintf(why, why_len, "not JSON (%s at byte %zu)",
				 e == json_tokener_continue ? "unexpected end of text" :
				 json_tokener_error_desc(e), json_tokener_get_parse_end(tok));
	}
	json_tokener_free(tok);
	if (!o)
		return -EBADMSG;
	*ret = o;
	return 0;
}

