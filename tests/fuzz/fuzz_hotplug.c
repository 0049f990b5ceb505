// SPDX-License-Identifier: Apache-2.0
/*
 * The uevent classifier (user/topo/hotplug.c hotplug_is_cpu_uevent): netlink
 * messages of any length and content, NULs included, in a buffer of
 * exactly that size so that any read past the end is an ASan report.
 *
 * Invariant: the answer equals a plain reading of hotplug.h's rule,
 * written here independently: the devpath after the first '@' of the
 * first string starts with "/devices/system/cpu/cpu", or some
 * NUL-separated field is exactly "SUBSYSTEM=cpu".
 */
#include "fuzz.h"
#include "user/topo/hotplug.h"

#define CPU_DEVPATH	"/devices/system/cpu/cpu"
#define CPU_SUBSYSTEM	"SUBSYSTEM=cpu"

static bool reference(const char *msg, size_t len)
{
	size_t first = 0, start = 0;

	while (first < len && msg[first])
		first++;
	for (size_t i = 0; i < first; i++) {
		if (msg[i] != '@')
			continue;
		if (len - i - 1 >= strlen(CPU_DEVPATH) &&
		    !memcmp(msg + i + 1, CPU_DEVPATH, strlen(CPU_DEVPATH)))
			return true;
		break;
	}
	for (size_t i = 0; i <= len; i++) {
		if (i < len && msg[i])
			continue;
		if (i - start == strlen(CPU_SUBSYSTEM) && !memcmp(msg + start, CPU_SUBSYSTEM, i - start))
			return true;
		start = i + 1;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *msg = fuzz_memdup(data, size);

	FUZZ_CHECK(hotplug_is_cpu_uevent(msg, size) == reference(msg, size));
	free(msg);
	return 0;
}
