// SPDX-License-Identifier: Apache-2.0
/*
 * bench-bpf-load: loads a BPF object's programs, attaches them and holds
 * them until SIGTERM/SIGINT. tools/bench/telemetry.sh uses it for the
 * empty sched_switch program (its floor) and for the telemetry variants
 * built with one part left out (build/bench/telemetry-*.bpf.o), so each
 * runs under the same load and bpf_stats as the daemon's programs.
 * bpftool 7.1 cannot attach what `prog loadall` loads (no `autoattach`).
 *
 * Shape as in libbpf-bootstrap: open -> choose programs -> load ->
 * attach; one forward goto on failure, err set before it.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#define MAX_LINKS 16

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bench-bpf-load [-p PROG]... OBJ\n"
		"Loads OBJ (only the programs named with -p, else all), attaches them,\n"
		"prints 'attached NAME' for each, then waits for SIGTERM or SIGINT.\n"
		"  bench-bpf-load build/bench/empty.bpf.o\n"
		"  bench-bpf-load -p switch_btf build/bench/telemetry-no-cache.bpf.o\n");
}

/* Whether name is one of the n names in want (n == 0: every name is). */
static int wanted(const char *name, char **want, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(name, want[i]))
			return 1;
	return n == 0;
}

int main(int argc, char **argv)
{
	struct bpf_link *links[MAX_LINKS] = { NULL };
	struct bpf_object *obj = NULL;
	struct bpf_program *prog;
	char *want[MAX_LINKS];
	int nwant = 0, nlinks = 0, err = 0, c;

	while ((c = getopt(argc, argv, "p:h")) != -1) {
		switch (c) {
		case 'p':
			if (nwant == MAX_LINKS) {
				fprintf(stderr, "bench-bpf-load: at most %d -p\n", MAX_LINKS);
				return 2;
			}
			want[nwant++] = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "bench-bpf-load: one OBJ expected\n");
		return 2;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);

	obj = bpf_object__open_file(argv[optind], NULL);
	if (!obj) {
		err = -errno;
		fprintf(stderr, "bench-bpf-load: open %s: %s\n", argv[optind], strerror(-err));
		goto cleanup;
	}
	bpf_object__for_each_program(prog, obj)
		bpf_program__set_autoload(prog, wanted(bpf_program__name(prog), want, nwant));
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "bench-bpf-load: load %s: %s\n", argv[optind], strerror(-err));
		goto cleanup;
	}
	bpf_object__for_each_program(prog, obj) {
		if (!bpf_program__autoload(prog))
			continue;
		if (nlinks == MAX_LINKS) {
			err = -E2BIG;
			fprintf(stderr, "bench-bpf-load: more than %d programs\n", MAX_LINKS);
			goto cleanup;
		}
		links[nlinks] = bpf_program__attach(prog);
		if (!links[nlinks]) {
			err = -errno;
			fprintf(stderr, "bench-bpf-load: attach %s: %s\n",
				bpf_program__name(prog), strerror(-err));
			goto cleanup;
		}
		nlinks++;
		printf("attached %s\n", bpf_program__name(prog));
	}
	if (!nlinks) {
		err = -ENOENT;
		fprintf(stderr, "bench-bpf-load: no program of %s chosen\n", argv[optind]);
		goto cleanup;
	}
	fflush(stdout);
	/* sleep() returns early on the signal; at worst 1 s late. */
	while (!stop)
		sleep(1);

cleanup:
	for (int i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	bpf_object__close(obj);
	return err ? 1 : 0;
}
