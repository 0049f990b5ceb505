// SPDX-License-Identifier: Apache-2.0
/*
 * hotplug_is_cpu_uevent: which kernel uevents trigger a re-read of the
 * online set. Messages as the kernel formats them (lib/kobject_uevent.c):
 * "action@devpath" then NUL-separated KEY=value pairs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "user/topo/hotplug.h"

#define MSG(s)	s, sizeof(s) - 1

static void test_cpu_uevents(void **state)
{
	(void)state;
	assert_true(hotplug_is_cpu_uevent(MSG("offline@/devices/system/cpu/cpu3\0ACTION=offline\0"
					      "DEVPATH=/devices/system/cpu/cpu3\0SUBSYSTEM=cpu\0SEQNUM=9\0")));
	assert_true(hotplug_is_cpu_uevent(MSG("online@/devices/system/cpu/cpu12\0ACTION=online\0")));
	/* No devpath prefix we know, but the subsystem says cpu. */
	assert_true(hotplug_is_cpu_uevent(MSG("add@/x\0ACTION=add\0SUBSYSTEM=cpu\0")));
}

static void test_other_uevents(void **state)
{
	(void)state;
	assert_false(hotplug_is_cpu_uevent(MSG("add@/devices/virtual/net/veth1\0ACTION=add\0"
					       "SUBSYSTEM=net\0")));
	assert_false(hotplug_is_cpu_uevent(MSG("change@/devices/system/memory/memory3\0"
					       "SUBSYSTEM=memory\0")));
	assert_false(hotplug_is_cpu_uevent(MSG("add@/x\0SUBSYSTEM=cpuid\0")));
	assert_false(hotplug_is_cpu_uevent(MSG("garbage without an at sign")));
	assert_false(hotplug_is_cpu_uevent("", 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_uevents),
		cmocka_unit_test(test_other_uevents),
	};

	return cmocka_run_group_tests_name("hotplug uevents", tests, NULL, NULL);
}
