/*
 * What cpusetctl's command files share: global options, exit codes and
 * the one-line usage errors. Each command is `int cmd_X(struct ctl_opts *,
 * int argc, char **argv)` (argv[0] = the command name) returning the exit
 * code.
 */
#ifndef CPUSETD_CTL_H
#define CPUSETD_CTL_H

#include <stdio.h>

enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

struct ctl_opts {
	const char *state_dir;
};

extern const char *prog;

/* "cpusetctl: <what> (see 'cpusetctl --help')" on stderr. */
void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Reports getopt_long's ':' or '?' result c, prefixed by ctx ("topology: "). */
void bad_option(int c, char **argv, const char *ctx);

/* cpusetctl topology [--sysfs DIR] [--json]: the machine as sysfs says. */
int cmd_topology(struct ctl_opts *o, int argc, char **argv);

/* cpusetctl allocate --cases FILE [--topologies DIR]: fixture cases. */
int cmd_allocate(struct ctl_opts *o, int argc, char **argv);

#endif
