// SPDX-License-Identifier: Apache-2.0
/* Pinned telemetry maps for cpusetctl; see ctl_telemetry.h. */
#include <errno.h>
#include <string.h>
#include "user/base/cpumask.h"
#include "ctl_telemetry.h"

/* Highest id of a cpulist + 1, or 0. */
static unsigned list_end(const char *list)
{
	struct cpumask m;
	int id, last = -1;

	if (!list || cpulist_parse(list, &m) < 0)
		return 0;
	cpumask_for_each(id, &m)
		last = id;
	return (unsigned)(last + 1);
}

unsigned ctl_n_cpus(json_object *root)
{
	json_object *t = ctl_jget(root, "topology", json_type_object);
	json_object *cpus = ctl_jget(t, "cpus", json_type_array);
	unsigned n = 0;

	for (size_t i = 0; cpus && i < json_object_array_length(cpus); i++) {
		int64_t id = ctl_jint(json_object_array_get_idx(cpus, i), "id", -1);

		if (id >= 0 && id < CPUSETD_MAX_CPUS && (unsigned)id + 1 > n)
			n = (unsigned)id + 1;
	}
	if (!n)
		n = list_end(ctl_jstr(t, "online", NULL));
	return n ? n : CPUSETD_MAX_CPUS;
}

int ctl_telemetry_read(const struct ctl_opts *o, unsigned n_cpus, struct telemetry_snapshot *ret)
{
	return telemetry_read_pinned(o->pin_dir, n_cpus, ret);
}

bool ctl_telemetry_basic(json_object *root)
{
	json_object *d = ctl_jget(root, "daemon", json_type_object);

	return strcmp(ctl_jstr(d, "telemetry", ""), "basic") == 0;
}

/* The rate figures telemetry = basic does not collect. */
static void null_waits(json_object *fig)
{
	static const char *const keys[] = { "rq_wait_s_per_s", "rq_wait_mean_us", "rq_waits" };

	for (size_t i = 0; fig && i < sizeof(keys) / sizeof(keys[0]); i++)
		json_object_object_add(fig, keys[i], NULL);
}

void ctl_telemetry_json_basic(json_object *o)
{
	json_object *cpus = ctl_jget(o, "cpus", json_type_array);

	if (!o)
		return;
	json_object_object_add(o, "telemetry", json_object_new_string("basic"));
	for (size_t i = 0; cpus && i < json_object_array_length(cpus); i++)
		null_waits(json_object_array_get_idx(cpus, i));
	null_waits(ctl_jget(o, "totals", json_type_object));
}

const char *ctl_telemetry_why(const struct ctl_opts *o, int err, char *buf, size_t len)
{
	if (err == -ENOENT)
		snprintf(buf, len, "no telemetry maps pinned at %s/v%d (cpusetd not running with "
			 "--pin-dir %s, or an older cpusetd)", o->pin_dir, CPUSETD_LAYOUT_VERSION,
			 o->pin_dir);
	else if (err == -EACCES || err == -EPERM)
		snprintf(buf, len, "cannot open the maps pinned at %s/v%d: %s (run as root)",
			 o->pin_dir, CPUSETD_LAYOUT_VERSION, strerror(-err));
	else
		snprintf(buf, len, "cannot read the maps pinned at %s/v%d: %s", o->pin_dir,
			 CPUSETD_LAYOUT_VERSION, strerror(-err));
	return buf;
}
