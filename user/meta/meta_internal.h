/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON helpers of meta_json.c, shared by meta.c and meta_pod.c (not for
 * other modules), and meta_pod.c's entry point for meta.c. Calls go one
 * way: meta.c -> meta_pod.c, and both -> meta_json.c, which calls neither.
 */
#ifndef CPUSETD_META_INTERNAL_H
#define CPUSETD_META_INTERNAL_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stddef.h>
#include <json-c/json.h>
#include "meta.h"

/* Looks up key in parent. Returns 1 and *ret when present with the given
 * type, 0 when absent or null, -EBADMSG for another type. */
int meta_member(struct json_object *parent, const char *key, enum json_type type,
		struct json_object **ret);

/* The text of the JSON string v when it fits a buffer of size bytes.
 * Returns 0 and *ret (owned by v), or -EBADMSG when too long or when it
 * carries a NUL ("\u0000"), which C would silently cut at. */
int meta_string_fit(struct json_object *v, size_t size, const char **ret);

/* A string member copied into dst[size]. Returns 1 copied, 0 absent,
 * -EBADMSG for another type, a NUL inside, or a value that does not fit. */
int meta_get_string(struct json_object *parent, const char *key, char *dst, size_t size);

/* A string member of at most max bytes, strdup'd into *ret (caller frees).
 * Returns 1, 0 absent, -EBADMSG (wrong type, NUL inside, longer), -ENOMEM. */
int meta_dup_string(struct json_object *parent, const char *key, size_t max, char **ret);

/* Why parent[key] was refused, as one line into buf[len]: wrong type
 * ("\"key\" is a number, expected a string"), a NUL inside, or longer than
 * limit - 1 bytes (limit: the buffer size it had to fit). Never quotes
 * the value. */
void meta_why(struct json_object *parent, const char *key, enum json_type type, size_t limit,
	      char *buf, size_t len);

/* Strict JSON (UTF-8 checked, no trailing garbage, nesting at most
 * META_MAX_JSON_DEPTH) from len bytes. Returns 0 and *ret (caller puts
 * it); -EBADMSG or -EFBIG with the reason in why[why_len]; -ENOMEM. */
int meta_parse_json(const char *text, size_t len, struct json_object **ret, char *why,
		    size_t why_len);

/* The pod policy annotations of meta.h from one annotation object (the
 * bundle's, or CRI-O's inner copy). Values already set are kept: the
 * first source wins. A malformed value is recorded in ret->error, never
 * returned. Returns 0 or -ENOMEM. */
int meta_parse_pod_policy(struct json_object *ann, struct pod_policy_ann *ret);

/* The pod labels into *a (meta.h meta_parse_pod): the qosClass label over
 * the annotation. Cannot fail; a bad value is recorded in a->error. */
void meta_pod_labels(const struct meta_annotation *l, size_t n, struct pod_policy_ann *a);

#endif
