/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Safe file access for paths that others can write.
 *
 * cpusetd runs as root and reads or writes files in directories that pods
 * (hostPath mounts), other agents or a careless admin may also write: the
 * bundle config.json, kubelet's state file, the config file, the state dir
 * (status.json) and node_exporter's textfile dir. Every such open goes
 * through here, so one module holds the rules:
 *
 *   - never follow a symlink at the last component (O_NOFOLLOW) and never
 *     block: a FIFO planted at a path would otherwise freeze the daemon in
 *     open() until something opens the other end (O_NONBLOCK);
 *   - fstat the descriptor and use it only when it is a regular file;
 *   - read at most a given number of bytes;
 *   - write through a new temporary file (O_CREAT|O_EXCL under a random
 *     name, so nothing planted there is opened, truncated or chmod-ed) and
 *     rename it over the destination;
 *   - create directories one component at a time relative to the parent's
 *     descriptor, without following a symlink in what was just created.
 *
 * The directories named in the configuration are trusted to be the
 * administrator's: symlinks in their existing parents are followed.
 */
#ifndef CPUSETD_FILES_H
#define CPUSETD_FILES_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * Opens path read-only with O_NONBLOCK|O_NOFOLLOW|O_CLOEXEC|O_NOCTTY and
 * checks, on the descriptor, that it is a regular file; *size_ret (may be
 * NULL) gets its size in bytes. O_NONBLOCK stays set (harmless on a
 * regular file). Returns the fd (caller closes); -ENOENT; -ELOOP for a
 * symlink; -EINVAL for anything but a regular file (FIFO, device,
 * directory, socket); -errno of open/fstat.
 */
int files_open_regular(const char *path, off_t *size_ret);

/*
 * files_open_regular, for a file cpusetd wrote for itself and whose
 * content drives privileged writes (host isolation's record): it must
 * also be owned by owner (the daemon's euid), have no group or other
 * write bit, and exactly one link (a hard link planted at the name is
 * another file). *st_ret (may be NULL) gets its fstat, also when refused
 * (for files_refused_why). Returns the fd (caller closes); -ENOENT;
 * -ELOOP (a symlink); -EINVAL (not a regular file); -EPERM (another
 * owner); -EACCES (group or others may write it); -EMLINK (more than one
 * link); -errno of open/fstat.
 */
int files_open_private(const char *path, uid_t owner, struct stat *st_ret);

/*
 * A directory cpusetd keeps such files in (the state dir): dir itself,
 * not a symlink (O_NOFOLLOW), a directory, owned by owner, with no group
 * or other write bit. Its parents are not checked (see above: the
 * configured path is the administrator's). *st_ret (may be NULL) gets its
 * fstat. Returns 0; -ENOENT; -ELOOP; -ENOTDIR; -EPERM; -EACCES; -errno.
 */
int files_check_private_dir(const char *dir, uid_t owner, struct stat *st_ret);

/*
 * Why files_open_private or files_check_private_dir refused, in words for
 * a log line ("owned by uid 1000, not 0", "mode 0664: group or others may
 * write it", "2 links", "a symbolic link"), into buf[len]; st is what they
 * gave (may be NULL for -ELOOP/-ENOENT). Returns buf. Cannot fail.
 */
const char *files_refused_why(int err, const struct stat *st, uid_t owner, char *buf,
			      size_t len);

/*
 * files_read over files_open_private: the same checks, then the same
 * read. Returns files_read's and files_open_private's values.
 */
int files_read_private(const char *path, uid_t owner, size_t max, char **ret, size_t *ret_len,
		       struct stat *st_ret);

/*
 * Reads the regular file at path (files_open_regular), at most max bytes.
 * Returns 0 with *ret (malloc'd, NUL-terminated, caller frees) and
 * *ret_len (bytes read, not counting the NUL); -EFBIG when the file holds
 * more than max bytes (checked on its size first, so a huge file is never
 * read); -ENOMEM; files_open_regular's errors; -errno of read. A file
 * that grows while being read is cut off one byte past max, so it is
 * also -EFBIG.
 */
int files_read(const char *path, size_t max, char **ret, size_t *ret_len);

/*
 * Writes len bytes of text to dir/name: into a new file
 * dir/.name.XXXXXXXX.tmp (random suffix, O_CREAT|O_EXCL|O_NOFOLLOW, so a
 * FIFO, symlink or hardlink planted under any name is never opened),
 * fchmod to mode (open's mode is masked by the umask; node_exporter reads
 * as its own user), then renameat(2) over dir/name, so a reader sees the
 * old file or the new one, never a part (no fsync: after a crash the
 * daemon rewrites it anyway). The temporary name starts with '.' and ends
 * in ".tmp", so globs like "*.prom" never match it. dir itself is opened
 * with O_DIRECTORY|O_NOFOLLOW. Returns 0, -EINVAL (name has a '/'),
 * -ENAMETOOLONG (name over 200 bytes), -ELOOP when dir is a symlink, or
 * -errno of open/write/rename;
 * on failure the old file stays and the temporary one is removed.
 */
int files_write_atomic(const char *dir, const char *name, const char *text, size_t len,
		       mode_t mode);

/*
 * Creates dir and its missing parents with mode (like mkdir -p), walking
 * from "/" (or the working directory for a relative path) one component
 * at a time with openat(O_DIRECTORY|O_NOFOLLOW) relative to the parent's
 * descriptor. Existing parents may be symlinks (the configured path is
 * the administrator's); a component this call had to create is never
 * followed through a symlink swapped in after its mkdirat (-ELOOP).
 * Returns 0 (also when it exists), -ENAMETOOLONG, -ENOTDIR, -ELOOP, or
 * -errno of the first mkdirat/openat that failed for a reason other
 * than EEXIST.
 */
int files_mkdir_p(const char *dir, mode_t mode);

#endif
