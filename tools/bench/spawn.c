// SPDX-License-Identifier: Apache-2.0
/* spawn_paused(): spawn.h says what and why. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "spawn.h"

pid_t spawn_paused(const char *procs)
{
	char pid[32];
	pid_t kid = fork();
	int fd, err = 0;

	if (kid < 0)
		return -errno;
	if (kid == 0) {
		pause();
		_exit(0);
	}
	snprintf(pid, sizeof(pid), "%d", kid);
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
		err = -errno;
	if (fd >= 0)
		close(fd);
	if (err) {
		kill(kid, SIGKILL);
		waitpid(kid, NULL, 0);
		return err;
	}
	return kid;
}
