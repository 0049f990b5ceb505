// SPDX-License-Identifier: Apache-2.0
/*
 * Liveness of the daemon behind a status.json: ctl_live_decide's verdict
 * for each combination of what the file and /proc say, the line cpusetctl
 * prints for it, and the /proc look-ups it rests on (procs_comm,
 * procs_pidns); and procs_start_state, which resync judges a container
 * the daemon did not see start by.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "tools/cpusetctl/ctl_live.h"
#include "user/base/procs.h"

#define NOW	1700000000.0

/* A live daemon with a heartbeat every 10 s, 2 s ago; cases change one
 * thing or two. */
static struct ctl_live_facts alive(void)
{
	return (struct ctl_live_facts){
		.state = "running", .beat = NOW - 2, .interval_s = 10, .pid = 1234,
		.want_comm = "cpusetd", .seen = CTL_PID_ALIVE, .comm = "cpusetd", .now = NOW,
	};
}

static void test_decide(void **state)
{
	static const struct {
		const char *name;
		const char *st;		/* NULL = keep "running"; "-" = absent */
		double age;		/* now - beat; -1 = keep 2 s */
		unsigned interval_s;	/* 0 = keep 10; 99999 = absent */
		enum ctl_pid_seen seen;	/* CTL_PID_ALIVE unless said */
		const char *comm;	/* NULL = keep "cpusetd"; "-" = unreadable */
		enum ctl_live want;
	} cases[] = {
		{ "fresh, pid is cpusetd", NULL, -1, 0, CTL_PID_ALIVE, NULL, CTL_LIVE_RUNNING },
		{ "just inside 3 x 10 + 5 s", NULL, 34.9, 0, CTL_PID_ALIVE, NULL, CTL_LIVE_RUNNING },
		{ "just past 3 x 10 + 5 s", NULL, 35.1, 0, CTL_PID_ALIVE, NULL, CTL_LIVE_STALE },
		{ "1 s period: stale after 8 s", NULL, 8.5, 1, CTL_PID_ALIVE, NULL, CTL_LIVE_STALE },
		{ "clock stepped back", NULL, -3600, 0, CTL_PID_ALIVE, NULL, CTL_LIVE_RUNNING },
		{ "stopped wins over a fresh beat", "stopped", -1, 0, CTL_PID_ALIVE, NULL,
		  CTL_LIVE_STOPPED },
		{ "stopped, pid gone", "stopped", 600, 0, CTL_PID_GONE, NULL, CTL_LIVE_STOPPED },
		{ "pid gone, beat fresh", NULL, -1, 0, CTL_PID_GONE, NULL, CTL_LIVE_GONE },
		{ "pid gone and stale", NULL, 600, 0, CTL_PID_GONE, NULL, CTL_LIVE_GONE },
		{ "pid reused by bash", NULL, -1, 0, CTL_PID_ALIVE, "bash", CTL_LIVE_OTHER },
		{ "comm unreadable (hidepid)", NULL, -1, 0, CTL_PID_ALIVE, "-", CTL_LIVE_RUNNING },
		{ "other PID namespace, fresh", NULL, -1, 0, CTL_PID_UNCHECKED, NULL,
		  CTL_LIVE_RUNNING },
		{ "other PID namespace, stale", NULL, 60, 0, CTL_PID_UNCHECKED, NULL,
		  CTL_LIVE_STALE },
		{ "older daemon: no state, no period", "-", 600, 99999, CTL_PID_ALIVE, NULL,
		  CTL_LIVE_RUNNING },
		{ "older daemon, pid gone", "-", 600, 99999, CTL_PID_GONE, NULL, CTL_LIVE_GONE },
		{ "unknown state is not stopped", "starting", -1, 0, CTL_PID_ALIVE, NULL,
		  CTL_LIVE_RUNNING },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ctl_live_facts f = alive();

		if (cases[i].st)
			f.state = strcmp(cases[i].st, "-") ? cases[i].st : NULL;
		if (cases[i].age != -1)
			f.beat = NOW - cases[i].age;
		if (cases[i].interval_s)
			f.interval_s = cases[i].interval_s == 99999 ? 0 : cases[i].interval_s;
		f.seen = cases[i].seen;
		if (cases[i].comm)
			f.comm = strcmp(cases[i].comm, "-") ? cases[i].comm : NULL;
		if (ctl_live_decide(&f) != cases[i].want)
			fail_msg("%s: verdict %d, want %d", cases[i].name, ctl_live_decide(&f),
				 cases[i].want);
	}
}

static void test_comm_not_compared_when_unknown(void **state)
{
	struct ctl_live_facts f = alive();

	(void)state;
	f.want_comm = "";	/* the daemon could not read its own */
	f.comm = "anything";
	assert_int_equal(ctl_live_decide(&f), CTL_LIVE_RUNNING);
}

static void test_messages(void **state)
{
	struct ctl_live_facts f;
	char buf[256];

	(void)state;
	f = alive();
	assert_string_equal(ctl_live_message(&f, CTL_LIVE_RUNNING, buf, sizeof(buf)), "");

	f = alive();
	f.seen = CTL_PID_GONE;
	f.beat = NOW - 42.7;
	assert_string_equal(ctl_live_message(&f, ctl_live_decide(&f), buf, sizeof(buf)),
			    "status is 42 s old (heartbeat every 10 s): daemon not running? "
			    "pid 1234 is gone");

	f = alive();
	f.state = "stopped";
	f.beat = NOW - 300;
	assert_string_equal(ctl_live_message(&f, ctl_live_decide(&f), buf, sizeof(buf)),
			    "status is 5 min old: daemon not running: pid 1234 stopped cleanly");

	f = alive();
	f.comm = "bash";
	assert_string_equal(ctl_live_message(&f, ctl_live_decide(&f), buf, sizeof(buf)),
			    "status is 2 s old (heartbeat every 10 s): daemon not running? "
			    "pid 1234 is now 'bash', not 'cpusetd'");

	f = alive();
	f.beat = NOW - 3 * 3600;
	assert_string_equal(ctl_live_message(&f, ctl_live_decide(&f), buf, sizeof(buf)),
			    "status is 3 h old (heartbeat every 10 s): daemon not running or "
			    "hung? pid 1234 is still there");

	f = alive();
	f.seen = CTL_PID_UNCHECKED;
	f.beat = NOW - 4 * 86400;
	assert_string_equal(ctl_live_message(&f, ctl_live_decide(&f), buf, sizeof(buf)),
			    "status is 4 d old (heartbeat every 10 s): daemon not running? (pid "
			    "1234 cannot be checked from this PID namespace)");

	f = alive();
	f.seen = CTL_PID_GONE;
	f.beat = 0;
	f.interval_s = 0;
	assert_string_equal(ctl_live_message(&f, ctl_live_decide(&f), buf, sizeof(buf)),
			    "status has no time: daemon not running? pid 1234 is gone");

	/* a short buffer gets a cut line, never an overflow */
	f = alive();
	f.seen = CTL_PID_GONE;
	assert_string_equal(ctl_live_message(&f, ctl_live_decide(&f), buf, 10), "status is");
}

static void test_procs_comm(void **state)
{
	char comm[32] = "untouched";
	uint64_t a = 0, b = 0;
	pid_t child;

	(void)state;
	assert_int_equal(procs_comm(0, comm, sizeof(comm)), 0);
	assert_string_equal(comm, "test_ctl_live");
	assert_int_equal(procs_comm(getpid(), comm, sizeof(comm)), 0);
	assert_string_equal(comm, "test_ctl_live");
	assert_int_equal(procs_comm(0, comm, 5), 0);	/* cut to fit */
	assert_string_equal(comm, "test");

	/* a reaped child's pid is gone (until reused, which takes a wrap) */
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	snprintf(comm, sizeof(comm), "untouched");
	assert_int_equal(procs_comm(child, comm, sizeof(comm)), -ENOENT);
	assert_string_equal(comm, "untouched");

	assert_int_equal(procs_pidns(0, &a), 0);
	assert_int_equal(procs_pidns(getpid(), &b), 0);
	assert_true(a != 0);
	assert_true(a == b);
}

/* A child that runs `sleep 100` from a memfd copy of /bin/sleep (as
 * runc 1.1 runs `runc init`); its pid once /proc shows the memfd. */
static pid_t memfd_child(void)
{
	char exe[64] = "";
	pid_t child = fork();

	assert_true(child >= 0);
	if (child == 0) {
		int in = open("/bin/sleep", O_RDONLY | O_CLOEXEC);
		int fd = memfd_create("runc_cloned:/proc/self/exe", MFD_CLOEXEC);
		char *args[] = { "sleep", "100", NULL }, *env[] = { NULL };

		while (sendfile(fd, in, NULL, 1 << 20) > 0)
			;
		fexecve(fd, args, env);
		_exit(127);
	}
	for (int i = 0; i < 5000 && strncmp(exe, "/memfd:", 7); i++) {
		char link[64];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/%d/exe", (int)child);
		n = readlink(link, exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		usleep(1000);
	}
	assert_memory_equal(exe, "/memfd:", 7);
	return child;
}

static void test_procs_start_state(void **state)
{
	struct procs_file_id self_exe, rt[8];
	struct stat st;
	uint64_t own;
	int pid = getpid(), gone, n_rt;
	pid_t child;

	(void)state;
	assert_int_equal(procs_mntns(0, &own), 0);
	assert_int_equal(stat("/proc/self/exe", &st), 0);
	self_exe = (struct procs_file_id){ st.st_dev, st.st_ino };
	/* in the runtime's namespace: the runtime's, whatever it runs */
	assert_int_equal(procs_start_state(&pid, 1, own, NULL, 0), PROCS_NOT_STARTED);
	/* elsewhere, running its own file: started, whatever its comm says */
	prctl(PR_SET_NAME, "runc:[2:INIT]");
	assert_int_equal(procs_start_state(&pid, 1, own + 1, NULL, 0), PROCS_STARTED);
	prctl(PR_SET_NAME, "test_ctl_live");
	/* elsewhere, running a runtime's binary: its init stage */
	assert_int_equal(procs_start_state(&pid, 1, own + 1, &self_exe, 1), PROCS_INIT_STAGE);
	/* gone: skipped; no task at all: not started */
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	gone = (int)child;
	assert_int_equal(procs_start_state(&gone, 1, own + 1, NULL, 0), PROCS_NOT_STARTED);
	assert_int_equal(procs_start_state(NULL, 0, own + 1, NULL, 0), PROCS_NOT_STARTED);
	/* run from a memfd (runc 1.1's init stage, or a forger): an init
	 * stage, which the caller bounds in time; one started task wins */
	child = memfd_child();
	{
		int both[2] = { (int)child, pid };

		assert_int_equal(procs_start_state(both, 1, own + 1, NULL, 0), PROCS_INIT_STAGE);
		assert_int_equal(procs_start_state(both, 2, own + 1, NULL, 0), PROCS_STARTED);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* the list of runtime binaries holds only regular files that exist */
	n_rt = procs_runtime_binaries(rt, 8);
	assert_true(n_rt >= 0 && n_rt <= 8);
	for (int i = 0; i < n_rt; i++)
		assert_true(rt[i].ino != 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_comm_not_compared_when_unknown),
		cmocka_unit_test(test_messages),
		cmocka_unit_test(test_procs_comm),
		cmocka_unit_test(test_procs_start_state),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
