// SPDX-License-Identifier: Apache-2.0
/*
 * cpusetctl: shows cpusetd's state to a person.
 *
 *   cpusetctl [--state-dir DIR] [--pin-dir DIR] <command> [options]
 *
 * Commands live in one table (cmds[] below), each in its own
 * tools/cpusetctl/ctl_<command>.c; each is a function that gets the global options
 * and its own argv (argv[0] = the command name) and returns the exit code:
 * 0 fine, 1 failed at run time, 2 bad usage, 3 shown but the daemon that
 * wrote status.json is not running (ctl_daemon_alive). Bad input prints the one
 * specific error on stderr, never the whole help.
 *
 * Sources: <state-dir>/status.json (schema in user/export/status.h), written
 * atomically by the daemon, and the telemetry maps pinned under
 * <pin-dir>/v<layout> (user/telemetry/telemetry.h). No command talks to the daemon.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "user/config/config.h"

struct ctl_cmd {
	const char *name;
	const char *summary;
	int (*run)(struct ctl_opts *o, int argc, char **argv);
};

static const struct ctl_cmd cmds[] = {
	{ "status", "placements, pools, errors, counters and contention per CPU", cmd_status },
	{ "map", "the machine drawn: who owns each logical CPU", cmd_map },
	{ "top", "live per-CPU run-queue wait, foreign time and switches", cmd_top },
	{ "isolation", "exclusive CPUs: owner, host isolation state, foreign time", cmd_isolation },
	{ "explain", "why a container has its CPUs", cmd_explain },
	{ "topology", "packages, NUMA nodes, cores and threads as sysfs says", cmd_topology },
	{ "allocate", "run kubelet/Koordinator allocation cases (fixtures)", cmd_allocate },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"Usage: %s [--state-dir DIR] [--pin-dir DIR] <command> [options]\n"
		"Shows what cpusetd decided: where every container runs and why.\n\n"
		"Commands:\n", prog);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f,
		"\nOptions:\n"
		"  -s, --state-dir DIR   cpusetd's state directory (default %s)\n"
		"  -p, --pin-dir DIR     cpusetd's BPF pin directory (default %s)\n"
		"  -h, --help            this text; '<command> --help' for a command's own\n"
		"  -V, --version         the version and git revision of this build\n"
		"\nExamples:\n"
		"  %s status                     summary of the running daemon\n"
		"  %s status --json | jq .errors admission errors as JSON\n"
		"  %s --state-dir /tmp/st status read a copy of the state elsewhere\n"
		"  %s map                        packages > NUMA nodes > cores > threads, owners\n"
		"  %s top --count 1 --json       per-CPU contention rates, once, as JSON\n"
		"  %s explain prod/db-0/postgres why that container has its CPUs\n"
		"  %s topology --json            this machine's topology as JSON\n"
		"  %s allocate --cases k8s-cases.jsonl --topologies k8s-topologies\n"
		"\nExit status: 0 ok, 1 failed (e.g. no status.json), 2 bad usage,\n"
		"3 cpusetd is not running (stopped, its pid gone, or its heartbeat late):\n"
		"what status.json last said is shown all the same.\n",
		CTL_DEFAULT_STATE_DIR, CTL_DEFAULT_PIN_DIR, prog, prog, prog, prog, prog, prog,
		prog, prog);
}

static const struct ctl_cmd *cmd_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(cmds[i].name, name) == 0)
			return &cmds[i];
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "state-dir", required_argument, NULL, 's' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	struct ctl_opts o = { .state_dir = CTL_DEFAULT_STATE_DIR, .pin_dir = CTL_DEFAULT_PIN_DIR };
	const struct ctl_cmd *cmd;
	int c;

	/* '+': stop at the command name, its options are its own. */
	while ((c = getopt_long(argc, argv, "+:s:p:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 's': o.state_dir = optarg; break;
		case 'p': o.pin_dir = optarg; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("cpusetctl %s (revision %s)\n", CPUSETD_VERSION, cpusetd_revision);
			  return 0;
		default: bad_option(c, argv, ""); return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage_error("no command given");
		return EXIT_USAGE;
	}
	cmd = cmd_find(argv[optind]);
	if (!cmd) {
		usage_error("unknown command '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	c = cmd->run(&o, argc - optind, argv + optind);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "%s: writing output: %s\n", prog, strerror(errno));
		return EXIT_RUNTIME;
	}
	return c;
}
