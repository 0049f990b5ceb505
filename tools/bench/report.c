// SPDX-License-Identifier: Apache-2.0
/*
 * bench-resize, the figures: percentiles, the convergence phases, the
 * report lines and the ratios to the floor.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "user/base/cpumask.h"
#include "resize.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t pct(uint64_t *v, size_t n, int p)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[(n - 1) * (size_t)p / 100];
}

/* Convergence samples of the last 2*rounds events from status.json. */
void read_samples(json_object *s, uint64_t *out, size_t n)
{
	json_object *conv, *rec;
	size_t len;

	json_object_object_get_ex(s, "convergence", &conv);
	json_object_object_get_ex(conv, "recent_ns", &rec);
	len = json_object_array_length(rec);
	for (size_t i = 0; i < n; i++)
		out[i] = (uint64_t)json_object_get_int64(json_object_array_get_idx(rec, len - n + i));
}

/* The daemon's convergence phases (status.json convergence.phases, in
 * its order: wakeup, plan, writes, finish) of the same n samples. */
static const char *const phase_names[N_PHASES] = { "wakeup", "plan", "writes", "finish" };

/* *ret_ph[p] (n each, malloc'd) from s; false when the daemon does not
 * report phases (an older build: the line is left out). */
bool read_phases(json_object *s, uint64_t *ret_ph[N_PHASES], size_t n)
{
	json_object *conv, *ph, *a;
	char key[32];

	if (!json_object_object_get_ex(s, "convergence", &conv) ||
	    !json_object_object_get_ex(conv, "phases", &ph))
		return false;
	for (int p = 0; p < N_PHASES; p++) {
		size_t len;

		snprintf(key, sizeof(key), "%s_ns", phase_names[p]);
		ret_ph[p] = calloc(n ? n : 1, sizeof(uint64_t));
		if (!ret_ph[p])
			die("calloc");
		if (!json_object_object_get_ex(ph, key, &a))
			continue;
		len = json_object_array_length(a);
		for (size_t i = 0; i < n && len >= n; i++)
			ret_ph[p][i] = (uint64_t)json_object_get_int64(
				json_object_array_get_idx(a, len - n + i));
	}
	return true;
}

/* One line: each phase's p50 and p99 over the samples i = from, from +
 * step, ... below n (start/stop split: step 2), and its share of the
 * summed p50s. */
void report_phases(const char *what, uint64_t *ph[N_PHASES], size_t n, size_t from,
			  size_t step)
{
	uint64_t *v = calloc(n ? n : 1, sizeof(*v));
	size_t m;

	if (!v)
		die("calloc");
	printf("  %-5s phases:", what);
	for (int p = 0; p < N_PHASES; p++) {
		m = 0;
		for (size_t i = from; i < n; i += step)
			v[m++] = ph[p][i];
		printf(" %s p50 %.1f p99 %.1f us%s", phase_names[p], pct(v, m, 50) / 1e3,
		       pct(v, m, 99) / 1e3, p + 1 < N_PHASES ? " |" : "\n");
	}
	free(v);
}

void free_phases(uint64_t *ph[N_PHASES])
{
	for (int p = 0; p < N_PHASES; p++)
		free(ph[p]);
}

void report(const struct bench *b, uint64_t *conv, uint64_t *flo, uint64_t *flo_fd,
		   size_t n, double writes_per_resize, long rss)
{
	uint64_t c50 = pct(conv, n, 50), c99 = pct(conv, n, 99);
	uint64_t f50 = pct(flo, n, 50), g50 = pct(flo_fd, n, 50);

	printf("%s N=%d rounds=%d%s: convergence p50 %.1f us p99 %.1f us | "
	       "floor (open+write+close) p50 %.1f us, ratio p50 %.2f p99 %.2f | "
	       "floor (open fds) p50 %.1f us, ratio p50 %.2f p99 %.2f | "
	       "writes/resize %.1f | daemon RSS %ld KiB\n",
	       on_v2 ? (strcmp(b->strategy, "hierarchical") ? "v2 per-container" : "v2 hierarchical") :
	       "v1", b->n, b->rounds, b->load ? " load=stress-ng" : "", c50 / 1e3, c99 / 1e3,
	       f50 / 1e3, (double)c50 / (double)f50, (double)c99 / (double)f50,
	       g50 / 1e3, (double)c50 / (double)g50, (double)c99 / (double)g50,
	       writes_per_resize, rss);
}

/* The cold floors (each round after gap_us idle, as the daemon's writes
 * come): the plain scene's second line. */
void report_cold(const struct bench *b, uint64_t *cold, uint64_t *cold_fd, size_t n,
		 uint64_t gap_us)
{
	printf("  cold floor (each round after %llu us idle, the daemon's median gap): "
	       "open+write+close p50 %.1f us | open fds p50 %.1f us, %.2f us a write\n",
	       (unsigned long long)gap_us, pct(cold, n, 50) / 1e3, pct(cold_fd, n, 50) / 1e3,
	       pct(cold_fd, n, 50) / 1e3 / b->n);
}

/* Every other sample from v[0..n): the starts (from 0) or stops (from 1). */
static void split(const uint64_t *v, size_t n, size_t from, uint64_t *out)
{
	for (size_t i = from, j = 0; i < n; i += 2, j++)
		out[j] = v[i];
}


static void report_line(const char *what, uint64_t *own, uint64_t *ext, uint64_t *low,
			size_t n, uint64_t f_q, uint64_t f_a)
{
	uint64_t o50 = pct(own, n, 50), o99 = pct(own, n, 99);
	uint64_t e50 = pct(ext, n, 50), e99 = pct(ext, n, 99);
	uint64_t l50 = pct(low, n, 50), l99 = pct(low, n, 99);

	printf("  %-5s daemon p50 %7.1f us p99 %7.1f us | external p50 %7.1f us p99 %7.1f us "
	       "(lower bound p50 %.1f p99 %.1f) | daemon p99/floor %.2f | "
	       "external/floor p50 %.2f p99 %.2f (after-run floor: %.2f %.2f)\n",
	       what, o50 / 1e3, o99 / 1e3, e50 / 1e3, e99 / 1e3, l50 / 1e3, l99 / 1e3,
	       (double)o99 / (double)f_q,
	       (double)e50 / (double)f_q, (double)e99 / (double)f_q,
	       (double)e50 / (double)f_a, (double)e99 / (double)f_a);
}

void report_kubelet(const struct bench *b, struct kubelet_figures *f)
{
	size_t n = (size_t)b->rounds, all = 2 * n;
	uint64_t *own = calloc(n, sizeof(*own)), *ext = calloc(n, sizeof(*ext));
	uint64_t *low = calloc(n, sizeof(*low));
	uint64_t f_q = pct(f->flo_quiet, all, 50), f_a = pct(f->flo_after, all, 50);
	uint64_t g_q = pct(f->flo_fd_quiet, all, 50), f_c = pct(f->flo_cold, all, 50);
	uint64_t g_c = pct(f->flo_fd_cold, all, 50), f_ac = pct(f->flo_after_cold, all, 50);

	printf("v1 kubelet N=%d rounds=%d load=%s daemon config:", b->n, b->rounds,
	       b->load ? "stress-ng --cpu 0" : "none");
	for (int i = 0; i < b->n_opts; i++)
		printf(" %s", b->opts[i]);
	printf("%s\n", b->n_opts ? "" : " (defaults)");
	for (size_t i = 0; b->verbose && i < all; i++)
		printf("  # %s %zu: daemon %.1f us, external %.1f us (lower bound %.1f us)\n",
		       i % 2 ? "stop" : "start", i / 2, f->conv[i] / 1e3, f->ext[i] / 1e3,
		       f->low[i] / 1e3);
	/* the samples alternate start, stop: one line (and phases) each */
	for (size_t from = 0; from < 2; from++) {
		const char *what = from ? "stop" : "start";

		split(f->conv, all, from, own);
		split(f->ext, all, from, ext);
		split(f->low, all, from, low);
		report_line(what, own, ext, low, n, f_q, f_a);
		if (f->ph[0])
			report_phases(what, f->ph, all, from, 2);
	}
	/* the targets, both kinds together (issue 24 item 2) */
	{
		/* pct sorts: last use of these arrays */
		uint64_t *e_all = f->ext, *c_all = f->conv;

		uint64_t c99 = pct(c_all, all, 99), e50 = pct(e_all, all, 50);
		uint64_t e99 = pct(e_all, all, 99);

		printf("  ratios N=%d: daemon p99/floor %.2f (target <= 1.0) | external p50/floor %.2f "
		       "(<= 2) | external p99/floor %.2f (<= 2.5)\n", b->n,
		       (double)c99 / (double)f_q, (double)e50 / (double)f_q,
		       (double)e99 / (double)f_q);
		/* the same against the floor written after the daemon's idle gap:
		 * the same kernel work in the same cache state (BENCHMARKS.md) */
		printf("  cold ratios N=%d: daemon p99/floor %.2f | external p50/floor %.2f | "
		       "external p99/floor %.2f | cold floor p50 %.1f us (each round after %llu us "
		       "idle), open fds %.1f us, %.2f us a write | after the run%s, SCHED_FIFO 10: cold floor p50 "
		       "%.1f us, daemon p99/it %.2f\n", b->n,
		       (double)c99 / (double)f_c, (double)e50 / (double)f_c,
		       (double)e99 / (double)f_c, f_c / 1e3, (unsigned long long)f->gap_us,
		       g_c / 1e3, g_c / 1e3 / b->n, b->load ? " (loaded)" : "", f_ac / 1e3,
		       (double)c99 / (double)f_ac);
	}
	printf("  floor open+write+close of the %d cpuset.cpus: p50 %.1f us before the daemon "
	       "(quiet), %.1f us after it stopped%s | open fds p50 %.1f us (quiet) | "
	       "writes/resize %.1f | daemon RSS %ld KiB\n",
	       b->n, f_q / 1e3, f_a / 1e3, b->load ? " (loaded)" : "", g_q / 1e3,
	       f->writes_per_resize, f->rss);
	free(own);
	free(ext);
	free(low);
}
