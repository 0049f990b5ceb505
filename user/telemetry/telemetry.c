// SPDX-License-Identifier: Apache-2.0
/*
 * Telemetry snapshots (telemetry.h): copies of the BPF telemetry maps,
 * read through the daemon's fds or the pinned files.
 *
 * Every map's key and value sizes are checked against maps/cpusetd.h
 * before anything is copied: a pinned map of another layout would
 * otherwise make the kernel write past our buffers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "telemetry.h"

/* Fails with -EPROTO unless fd's key and value sizes are ks and vs. */
static int check_sizes(int fd, size_t ks, size_t vs)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		return -errno;
	if (info.key_size != ks || info.value_size != vs)
		return -EPROTO;
	return 0;
}

/* Copies ids 0..n-1 of an array map into out (n * vs bytes). */
static int read_array(int fd, unsigned n, void *out, size_t vs)
{
	int err = check_sizes(fd, sizeof(__u32), vs);

	for (__u32 k = 0; !err && k < n; k++)
		if (bpf_map_lookup_elem(fd, &k, (char *)out + (size_t)k * vs) < 0 && errno != ENOENT)
			err = -errno;
	return err;
}

/*
 * Copies every (key, value) of a hash map into *ret as records of rs
 * bytes, key at offset 0 and value at voff. Keys that vanish between
 * get_next_key and lookup are skipped. Returns 0 or -errno; *ret is
 * malloc'd (may be NULL when empty), *ret_n its record count.
 */
static int read_hash(int fd, size_t ks, size_t vs, size_t rs, size_t voff,
		     void **ret, size_t *ret_n)
{
	char key[64], *prev = NULL, *recs = NULL;
	size_t n = 0, cap = 0;
	int err = check_sizes(fd, ks, vs);

	while (!err && ks <= sizeof(key) && bpf_map_get_next_key(fd, prev, key) == 0) {
		prev = key;
		if (n == cap) {
			char *r = realloc(recs, (cap ? cap * 2 : 64) * rs);

			if (!r) {
				err = -ENOMEM;
				break;
			}
			recs = r;
			cap = cap ? cap * 2 : 64;
		}
		memset(recs + n * rs, 0, rs);
		memcpy(recs + n * rs, key, ks);
		if (bpf_map_lookup_elem(fd, key, recs + n * rs + voff) == 0)
			n++;
		else if (errno != ENOENT)
			err = -errno;
	}
	*ret = recs;
	*ret_n = n;
	return err;
}

static int cmp_cgroup(const void *a, const void *b)
{
	uint64_t x = ((const struct telemetry_cgroup *)a)->cgroup_id;
	uint64_t y = ((const struct telemetry_cgroup *)b)->cgroup_id;

	return x < y ? -1 : x > y;
}

static int cmp_foreign(const void *a, const void *b)
{
	const struct cpusetd_foreign_key *x = &((const struct telemetry_foreign *)a)->key;
	const struct cpusetd_foreign_key *y = &((const struct telemetry_foreign *)b)->key;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->cgroup_id < y->cgroup_id ? -1 : x->cgroup_id > y->cgroup_id;
}

static int read_arrays(const struct telemetry_fds *fds, unsigned n_cpus,
		       struct telemetry_snapshot *s)
{
	int err = 0;

	s->n_cpus = n_cpus;
	s->cpu = calloc(n_cpus ? n_cpus : 1, sizeof(*s->cpu));
	s->owner = calloc(n_cpus ? n_cpus : 1, sizeof(*s->owner));
	if (!s->cpu || !s->owner)
		return -ENOMEM;
	if (fds->cpu_stats >= 0)
		err = read_array(fds->cpu_stats, n_cpus, s->cpu, sizeof(*s->cpu));
	if (!err && fds->cpu_owner >= 0)
		err = read_array(fds->cpu_owner, n_cpus, s->owner, sizeof(*s->owner));
	return err;
}

static int read_hashes(const struct telemetry_fds *fds, struct telemetry_snapshot *s)
{
	void *recs;
	int err = 0;

	if (fds->cgroup_stats >= 0) {
		err = read_hash(fds->cgroup_stats, sizeof(uint64_t), sizeof(s->cgroup->s),
				sizeof(*s->cgroup), offsetof(struct telemetry_cgroup, s),
				&recs, &s->n_cgroups);
		s->cgroup = recs;
		if (err)
			return err;
		qsort(s->cgroup, s->n_cgroups, sizeof(*s->cgroup), cmp_cgroup);
	}
	if (fds->foreign >= 0) {
		err = read_hash(fds->foreign, sizeof(s->foreign->key), sizeof(s->foreign->v),
				sizeof(*s->foreign), offsetof(struct telemetry_foreign, v),
				&recs, &s->n_foreign);
		s->foreign = recs;
		if (err)
			return err;
		qsort(s->foreign, s->n_foreign, sizeof(*s->foreign), cmp_foreign);
	}
	return 0;
}

int telemetry_read_fds(const struct telemetry_fds *fds, unsigned n_cpus,
		       struct telemetry_snapshot *ret)
{
	int err;

	memset(ret, 0, sizeof(*ret));
	if (!fds || n_cpus > CPUSETD_MAX_CPUS)
		return -EINVAL;
	err = read_arrays(fds, n_cpus, ret);
	if (!err)
		err = read_hashes(fds, ret);
	return err;
}

/* Opens <dir>/<name> read-only; -1 when it is not there, else -errno. */
static int open_pinned(const char *dir, const char *name, int *ret_fd)
{
	LIBBPF_OPTS(bpf_obj_get_opts, o, .file_flags = BPF_F_RDONLY);
	char path[4096];
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = bpf_obj_get_opts(path, &o);
	if (fd < 0 && errno != ENOENT)
		return -errno;
	*ret_fd = fd < 0 ? -1 : fd;
	return 0;
}

static void close_fds(struct telemetry_fds *f)
{
	int *all[] = { &f->cpu_stats, &f->cgroup_stats, &f->cpu_owner, &f->foreign };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (*all[i] >= 0)
			close(*all[i]);
}

int telemetry_read_pinned(const char *pin_dir, unsigned n_cpus, struct telemetry_snapshot *ret)
{
	struct telemetry_fds f = { -1, -1, -1, -1 };
	char dir[4096];
	int err;

	memset(ret, 0, sizeof(*ret));
	if ((size_t)snprintf(dir, sizeof(dir), "%s/v%d", pin_dir, CPUSETD_LAYOUT_VERSION) >=
	    sizeof(dir))
		return -ENAMETOOLONG;
	err = open_pinned(dir, TELEMETRY_MAP_CPU_STATS, &f.cpu_stats);
	if (!err && f.cpu_stats < 0)
		err = -ENOENT;
	if (!err)
		err = open_pinned(dir, TELEMETRY_MAP_CGROUP_STATS, &f.cgroup_stats);
	if (!err)
		err = open_pinned(dir, TELEMETRY_MAP_CPU_OWNER, &f.cpu_owner);
	if (!err)
		err = open_pinned(dir, TELEMETRY_MAP_FOREIGN, &f.foreign);
	if (!err)
		err = telemetry_read_fds(&f, n_cpus, ret);
	close_fds(&f);
	return err;
}

void telemetry_snapshot_free(struct telemetry_snapshot *s)
{
	if (!s)
		return;
	free(s->cpu);
	free(s->owner);
	free(s->cgroup);
	free(s->foreign);
	memset(s, 0, sizeof(*s));
}

double telemetry_hist_slot_lower_s(unsigned k)
{
	if (k == 0)
		return 0.0;
	/* 2^k µs; a power of two, exact in a double. */
	return (double)(1ULL << (k < 63 ? k : 63)) * 1e-6;
}
