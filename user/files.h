/*
 * Small file helpers shared by the daemon's writers (status.json, the
 * Prometheus textfile): replace-by-rename and mkdir -p.
 */
#ifndef CPUSETD_FILES_H
#define CPUSETD_FILES_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Writes len bytes of text to dir/name through dir/.name.tmp and
 * rename(2), so a reader sees the old file or the new one, never a part
 * (no fsync: after a crash the daemon rewrites it anyway). The temporary
 * name starts with '.' and ends in ".tmp", so globs like "*.prom" never
 * match it. mode is for a new file (e.g. 0644). Returns 0, or
 * -ENAMETOOLONG, or -errno of open/write/close/rename; on failure the old
 * file stays and the temporary one is removed.
 */
int files_write_atomic(const char *dir, const char *name, const char *text, size_t len,
		       mode_t mode);

/*
 * Creates dir and its missing parents with mode (like mkdir -p). Returns 0
 * (also when it exists), -ENAMETOOLONG, or -errno of the first mkdir that
 * failed for a reason other than EEXIST.
 */
int files_mkdir_p(const char *dir, mode_t mode);

#endif
