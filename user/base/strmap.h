/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A string-keyed hash map (separate chaining, doubling at load 1).
 * Keys are copied; values are borrowed pointers the caller owns.
 */
#ifndef CPUSETD_STRMAP_H
#define CPUSETD_STRMAP_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stddef.h>

struct strmap;

/* Returns a new empty map, or NULL on ENOMEM. */
struct strmap *strmap_new(void);
/* Frees the map and its key copies, not the values. Accepts NULL. */
void strmap_free(struct strmap *m);

/* Value for key, or NULL. */
void *strmap_get(const struct strmap *m, const char *key);
/* Inserts or replaces. Returns 0 or -ENOMEM (map unchanged). */
int strmap_put(struct strmap *m, const char *key, void *value);
/* Removes key; returns its value, or NULL when absent. */
void *strmap_del(struct strmap *m, const char *key);
size_t strmap_count(const struct strmap *m);

/*
 * Iteration: `size_t it = 0; const char *k; void *v;
 * while (strmap_next(m, &it, &k, &v)) ...`. Order is unspecified. The map
 * must not change during an iteration.
 */
int strmap_next(const struct strmap *m, size_t *it, const char **ret_key, void **ret_value);

#endif
