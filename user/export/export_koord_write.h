/* SPDX-License-Identifier: Apache-2.0 */
/* Daemon side of topology.json (schema in export_koord.h). */
#ifndef CPUSETD_EXPORT_KOORD_WRITE_H
#define CPUSETD_EXPORT_KOORD_WRITE_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

struct snapshot;

/*
 * Writes <state_dir>/topology.json for the snapshot's topology, exclusive pods and
 * shared pool, atomically (files_write_atomic), when its text differs
 * from what the last call wrote to that directory or that file is no
 * longer the one written (removed, replaced: checked by inode and size);
 * otherwise writes nothing. Returns 0 (written or unchanged), -ENOMEM,
 * or the -errno of the write (the old file stays in place, and the next
 * call tries again).
 */
int export_koord_write(const struct snapshot *s, const char *state_dir);

#endif
