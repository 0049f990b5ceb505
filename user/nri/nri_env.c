// SPDX-License-Identifier: Apache-2.0
/*
 * The pre-installed plugin's environment (nri.h nri_conn_config_from_env):
 * the runtime starts the plugin with the connection already open and
 * says which fd it is.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include "nri.h"

int nri_conn_config_from_env(struct nri_conn_config *cfg)
{
	const char *s = getenv("NRI_PLUGIN_SOCKET"), *name, *idx;
	char *end;
	long fd;

	if (!s || !*s)
		return 0;
	errno = 0;
	fd = strtol(s, &end, 10);
	if (errno || *end || end == s || fd < 0 || fd > INT_MAX || fcntl((int)fd, F_GETFD) < 0)
		return -EINVAL;
	cfg->socket_fd = (int)fd;
	name = getenv("NRI_PLUGIN_NAME");
	idx = getenv("NRI_PLUGIN_IDX");
	if (name && *name)
		cfg->plugin_name = name;
	if (idx && *idx)
		cfg->plugin_index = idx;
	return 1;
}
