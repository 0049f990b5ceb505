// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * cpusetd detection and enforcement programs. Through the `events` ring
 * buffer they tell user space that, below the kubepods root,
 *   - a cgroup appeared (cgroup_mkdir) or went away (cgroup_rmdir);
 *   - a cgroup gained its first live task or lost its last
 *     (cgroup_notify_populated, v1 and v2 alike);
 *   - a container ran its own first exec, when user space armed the check
 *     (sched_process_exec);
 *   - another process wrote a managed container's cpuset.cpus or
 *     cpuset.mems (fexit on cpuset_write_resmask; else a kprobe pair on
 *     it; else the write syscalls' tracepoints).
 *
 * "Own exec": the runtime makes the container's cgroup from its own mount
 * namespace, and the container's program runs in a new one. An exec from
 * the runtime's namespace (runc re-executing itself as `runc init`) is the
 * runtime's; any other is the container's. The lifecycle map keeps the
 * runtime's namespace per cgroup from its mkdir on.
 *
 * One act is taken here rather than in user space: a container whose
 * placement says reject is SIGKILLed at its own exec, from the exec'ing
 * task itself, before its program runs an instruction. That is the one
 * moment at which a rejection neither races the runtime's create (runc's
 * init is never touched) nor lets the program run. User space decided it
 * and wrote the termination message before arming it.
 *
 * No policy here: the programs filter to the managed hierarchy and
 * subtree and copy ids out. Settings are rodata, fixed at load time.
 *
 * Each tracepoint has two twins sharing one __always_inline body: a tp_btf
 * program (typed, cheapest) and a raw_tp program for kernels without BTF
 * for that tracepoint. The loader (user/bpf/bpf_events.c) probes and loads only
 * one twin of each pair. Both twins read kernel memory through
 * BPF_CORE_READ, so one body is valid under either verifier model.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "maps/cpusetd.h"
#include "core_fixes.bpf.h"
#include "task_cgroup.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by the loader before load (struct bpf_events_opts). */
const volatile __u32 hierarchy_id = 0;		/* cpuset hierarchy; 0 = v2 */
const volatile bool cpuset_on_v2 = false;	/* exec: use css_set->dfl_cgrp */
const volatile __u32 self_tgid = 0;		/* the daemon: its writes are not foreign */
/* Not rodata: user space narrows the filter when the kubepods root
 * appears after start-up (bpf_events_set_root). */
__u64 root_cgroup_id = 0;	/* kubepods root's kernfs id */
__u32 root_level = 0;		/* kubepods root's depth */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

#include "placement.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);			/* cgroup id */
	__type(value, struct cpusetd_lifecycle);
} lifecycle SEC(".maps");

/*
 * A cpuset write seen at its start, kept by pid_tgid until its end (the
 * kprobe and syscall hooks: only the end knows whether it went through,
 * and user space must read the file after it changed).
 */
struct write_start {
	__u64 cgroup_id;
	__u32 file;		/* enum cpusetd_cpuset_file */
	__u32 pad;
	char value[64];		/* what was written, truncated */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, struct write_start);
} write_starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpusetd_bpf_health);
} health SEC(".maps");

/*
 * The first 8 bytes of struct cpusetd_placement, seen as one word.
 * clang 14 without -mcpu=v3 (our BPF_CFLAGS) can only emit 64-bit atomics,
 * so verify_pending is cleared by a 64-bit compare-and-swap of this word.
 */
union placement_head {
	__u64 word;
	struct {
		__u32 kind;
		__u32 verify_pending;
	};
};
_Static_assert(__builtin_offsetof(struct cpusetd_placement, kind) == 0 &&
	       __builtin_offsetof(struct cpusetd_placement, verify_pending) == 4,
	       "placement_head must mirror struct cpusetd_placement");

static __always_inline void count(bool sent)
{
	struct cpusetd_bpf_health *h;
	__u32 zero = 0;

	h = bpf_map_lookup_elem(&health, &zero);
	if (!h)
		return;
	if (sent)
		__sync_fetch_and_add(&h->events_sent, 1);
	else
		__sync_fetch_and_add(&h->events_lost, 1);
}

/* Reserves an event with its header filled in; NULL (counted lost) if full. */
static __always_inline struct cpusetd_event *
event_new(__u32 type, __u64 cgroup_id, __u32 pid, __u32 level)
{
	struct cpusetd_event *ev;

	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		count(false);
		return NULL;
	}
	ev->ts_ns = bpf_ktime_get_ns();
	ev->cgroup_id = cgroup_id;
	ev->type = type;
	ev->pid = pid;
	ev->level = level;
	ev->arg = 0;
	ev->mntns = 0;
	__builtin_memset(ev->comm, 0, sizeof(ev->comm));
	ev->path[0] = '\0';
	return ev;
}

static __always_inline void event_send(struct cpusetd_event *ev)
{
	bpf_ringbuf_submit(ev, 0);
	count(true);
}

/* Mount namespace inode of task p; 0 if unreadable. */
static __always_inline __u64 task_mntns(struct task_struct *p)
{
	return BPF_CORE_READ(p, nsproxy, mnt_ns, ns.inum);
}

/* Whether cgrp is strictly below the kubepods root in the cpuset hierarchy. */
static __always_inline bool managed_cgroup(struct cgroup *cgrp)
{
	int level;

	if (BPF_CORE_READ(cgrp, root, hierarchy_id) != (int)hierarchy_id)
		return false;
	level = BPF_CORE_READ(cgrp, level);
	if (level <= 0 || (__u32)level <= root_level)
		return false;
	return cgroup_ancestor_id(cgrp, root_level) == root_cgroup_id;
}

/*
 * cgroup_mkdir / cgroup_rmdir / cgroup_notify_populated: cgroups strictly
 * below the kubepods root. mkdir records the creator's mount namespace
 * (the runtime's) in lifecycle, rmdir drops the entry.
 */
static __always_inline int on_cgroup(struct cgroup *cgrp, const char *path, __u32 type,
				     __u32 arg)
{
	struct cpusetd_event *ev;
	__u64 id, mntns = 0;

	if (!managed_cgroup(cgrp))
		return 0;
	id = BPF_CORE_READ(cgrp, kn, id);
	if (type == CPUSETD_EV_MKDIR) {
		struct cpusetd_lifecycle lc = {};

		mntns = task_mntns((struct task_struct *)bpf_get_current_task());
		lc.runtime_mntns = mntns;
		bpf_map_update_elem(&lifecycle, &id, &lc, BPF_ANY);
	} else if (type == CPUSETD_EV_RMDIR) {
		bpf_map_delete_elem(&lifecycle, &id);
	}
	ev = event_new(type, id, 0, BPF_CORE_READ(cgrp, level));
	if (!ev)
		return 0;
	ev->arg = arg;
	ev->mntns = mntns;
	/* Relative to the hierarchy root, starts with '/'; truncated to fit. */
	bpf_probe_read_kernel_str(ev->path, sizeof(ev->path), path);
	event_send(ev);
	return 0;
}

/* count_exec's answers. */
#define EXEC_UNKNOWN	-1	/* no lifecycle entry */
#define EXEC_RUNTIME	0	/* from the runtime's mount namespace */
#define EXEC_OWN	1	/* the container's own */
#define EXEC_OWN_FIRST	2	/* the container's own, its first */

/*
 * The runtime's mount namespace as user space guesses it for cgroups made
 * while the daemon was down (BPF saw no mkdir to record it from): that of
 * the daemon's nearest ancestor in another mount namespace than the
 * daemon's own, i.e. of whoever started it: systemd for the unit (whose
 * sandbox gives the daemon a namespace of its own), the runtime's shim
 * for a DaemonSet, or, when every ancestor shares the daemon's namespace,
 * that one. Read here because /proc/<pid>/ns/mnt of another root process
 * needs ptrace access, which the unit does not grant (CAP_SYS_PTRACE).
 * Never attached: user space runs it once in its own context
 * (BPF_PROG_TEST_RUN, kernel 5.10+) and reads the answer from .bss.
 */
__u64 probed_mntns = 0;		/* the answer; 0 until probed */
__u64 probed_own_mntns = 0;	/* the daemon's own */
__u32 probed_pid = 0;		/* the ancestor it came from (0: none) */
char probed_comm[16] = {};

SEC("raw_tp")
int probe_runtime_mntns(void *ctx)
{
	struct task_struct *p = (struct task_struct *)bpf_get_current_task();
	__u64 own = task_mntns(p), ns;

	probed_own_mntns = own;
	probed_mntns = own;
	for (int i = 0; i < 64; i++) {
		p = BPF_CORE_READ(p, real_parent);
		if (!p || BPF_CORE_READ(p, pid) == 0)
			break;
		ns = task_mntns(p);
		if (ns && ns != own) {
			probed_mntns = ns;
			probed_pid = BPF_CORE_READ(p, tgid);
			bpf_probe_read_kernel_str(probed_comm, sizeof(probed_comm), &p->comm);
			break;
		}
		if (BPF_CORE_READ(p, pid) == 1)
			break;
	}
	return 0;
}

/*
 * Counts an exec in cgroup id and says whether it is the container's own
 * (another mount namespace than the runtime's), and its first. Unknown
 * cgroups (no lifecycle entry: made while the daemon was down, before
 * user space filled it in) give EXEC_UNKNOWN. The count is an atomic, a
 * full barrier: user space arms a rejection and then reads own_execs, so
 * an exec either sees the armed placement or is seen in the count.
 */
static __always_inline int count_exec(__u64 id, struct task_struct *p)
{
	struct cpusetd_lifecycle *lc = bpf_map_lookup_elem(&lifecycle, &id);

	if (!lc)
		return EXEC_UNKNOWN;
	if (task_mntns(p) == lc->runtime_mntns)
		return EXEC_RUNTIME;
	if (__sync_fetch_and_add(&lc->own_execs, 1) != 0)
		return EXEC_OWN;
	lc->first_exec_ns = bpf_ktime_get_ns();
	return EXEC_OWN_FIRST;
}

static __always_inline void send_exec(struct task_struct *p, __u64 id, struct cgroup *cgrp,
				      __u32 flags)
{
	struct cpusetd_event *ev;

	ev = event_new(CPUSETD_EV_EXEC, id, BPF_CORE_READ(p, tgid), BPF_CORE_READ(cgrp, level));
	if (!ev)
		return;
	ev->arg = flags;
	ev->mntns = task_mntns(p);
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	event_send(ev);
}

/*
 * sched_process_exec in a container with a placement: a rejected one is
 * killed at each own exec; otherwise the first own exec is reported when
 * the check is armed (verify_pending == 1). Clearing the flag is a
 * compare-and-swap, so when several tasks exec at once exactly one
 * reports. An exec in a cgroup with no lifecycle entry counts as own for
 * the check (a harmless re-read), never for a kill.
 *
 * A container the lifecycle map knows but the placement map does not
 * (user space could not write its entry: the map was full) has its first
 * own exec reported (CPUSETD_EXEC_UNPLACED), once: user space then does
 * the exec check itself, and kills a rejection it could not arm here.
 */
static __always_inline int on_exec(struct task_struct *p)
{
	union placement_head old, new;
	struct cpusetd_placement *pl;
	struct cgroup *cgrp;
	__u64 id;
	int own;

	cgrp = task_cgroup(p, cpuset_on_v2);
	if (!cgrp)
		return 0;
	id = BPF_CORE_READ(cgrp, kn, id);
	own = count_exec(id, p);
	if (own == EXEC_RUNTIME)
		return 0;	/* the runtime's own exec: it is still creating */
	pl = bpf_map_lookup_elem(&placement, &id);
	if (!pl) {
		if (own == EXEC_OWN_FIRST)
			send_exec(p, id, cgrp, CPUSETD_EXEC_OWN | CPUSETD_EXEC_UNPLACED);
		return 0;
	}
	/* One aligned load: the element may have been recycled for another
	 * key since the lookup (maps/cpusetd.h), and then names that key. */
	if (own >= EXEC_OWN && *(volatile __u64 *)&pl->reject_id == id) {
		bpf_send_signal(9 /* SIGKILL */);
		send_exec(p, id, cgrp, CPUSETD_EXEC_OWN | CPUSETD_EXEC_KILLED);
		return 0;
	}

	old.word = *(volatile __u64 *)pl;
	if (old.verify_pending != 1)
		return 0;
	new = old;
	new.verify_pending = 0;
	/*
	 * Fails if another exec cleared the flag first (it reports), or if
	 * user space replaced the entry meanwhile; the next exec then sees
	 * the new value, so nothing armed is lost for good.
	 * Racy in one corner we live with: a preallocated hash map recycles a
	 * replaced element without waiting for readers, so if user space
	 * rewrites this key and another key reuses the old element between
	 * our lookup and the swap, we may clear that key's flag and report
	 * under our id: a needless re-read for us, a missed check for the
	 * other, which user space re-arms at resync. (The kill above cannot
	 * be misdirected so: it is keyed to the id.)
	 */
	if (__sync_val_compare_and_swap((__u64 *)pl, old.word, new.word) != old.word)
		return 0;
	send_exec(p, id, cgrp, own >= EXEC_OWN ? CPUSETD_EXEC_OWN : 0);
	return 0;
}

#define CGROUP_SUPER_MAGIC	0x27e0eb
#define CGROUP2_SUPER_MAGIC	0x63677270

/*
 * Whether file is cpuset.cpus or cpuset.mems (v1 noprefix: cpus, mems) of
 * a managed container: a cgroupfs file whose directory (inode number ==
 * cgroup id) has a placement entry. Returns the enum cpusetd_cpuset_file
 * and *ret_id, or CPUSETD_FILE_OTHER.
 */
static __always_inline __u32 managed_cpuset_file(struct file *file, __u64 *ret_id)
{
	struct dentry *d = BPF_CORE_READ(file, f_path.dentry);
	unsigned long magic = BPF_CORE_READ(d, d_sb, s_magic);
	char name[32] = {};
	__u64 id;
	int n;

	if (magic != CGROUP_SUPER_MAGIC && magic != CGROUP2_SUPER_MAGIC)
		return CPUSETD_FILE_OTHER;
	id = BPF_CORE_READ(d, d_parent, d_inode, i_ino);
	if (!bpf_map_lookup_elem(&placement, &id))
		return CPUSETD_FILE_OTHER;
	n = bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(d, d_name.name));
	/* n counts the NUL: the name's last four bytes are n-5 .. n-2. */
	if (n < 5 || n > (int)sizeof(name))
		return CPUSETD_FILE_OTHER;
	*ret_id = id;
	if (name[(n - 5) & 31] == 'c' && name[(n - 4) & 31] == 'p' &&
	    name[(n - 3) & 31] == 'u' && name[(n - 2) & 31] == 's')
		return CPUSETD_FILE_CPUS;
	if (name[(n - 5) & 31] == 'm' && name[(n - 4) & 31] == 'e' &&
	    name[(n - 3) & 31] == 'm' && name[(n - 2) & 31] == 's')
		return CPUSETD_FILE_MEMS;
	return CPUSETD_FILE_OTHER;
}

/* Sends a foreign write that went through. */
static __always_inline void send_write(const struct write_start *w)
{
	struct cpusetd_event *ev;

	ev = event_new(CPUSETD_EV_CPUSET_WRITE, w->cgroup_id,
		       bpf_get_current_pid_tgid() >> 32, 0);
	if (!ev)
		return;
	ev->arg = w->file;
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	bpf_probe_read_kernel_str(ev->path, sizeof(w->value), w->value);
	event_send(ev);
}

/* The start of a write by anyone but the daemon: kept when it is to a
 * managed container's cpuset file. value: len bytes of kernel or user
 * memory (not NUL-terminated), of which the first 63 are kept. */
static __always_inline void write_started(struct file *file, const void *value,
					  unsigned long len, bool user)
{
	__u64 key = bpf_get_current_pid_tgid();
	struct write_start w = {};
	__u32 n = len < sizeof(w.value) - 1 ? len : sizeof(w.value) - 1;

	if ((__u32)(key >> 32) == self_tgid)
		return;
	w.file = managed_cpuset_file(file, &w.cgroup_id);
	if (w.file == CPUSETD_FILE_OTHER)
		return;
	if (user)
		bpf_probe_read_user(w.value, n & 63, value);
	else
		bpf_probe_read_kernel(w.value, n & 63, value);
	bpf_map_update_elem(&write_starts, &key, &w, BPF_ANY);
}

/* The end of a write: reported when it went through (ret >= 0). */
static __always_inline void write_ended(long ret)
{
	__u64 key = bpf_get_current_pid_tgid();
	struct write_start *w = bpf_map_lookup_elem(&write_starts, &key);

	if (!w)
		return;
	if (ret >= 0)
		send_write(w);
	bpf_map_delete_elem(&write_starts, &key);
}

/* Hook 1, where the kernel has trampolines: fexit on the handler of
 * cpuset.cpus/cpuset.mems writes (v1 and v2), after it returned. */
SEC("fexit/cpuset_write_resmask")
int BPF_PROG(cpuset_write_fexit, struct kernfs_open_file *of, char *buf, size_t nbytes,
	     loff_t off, ssize_t ret)
{
	write_started(BPF_CORE_READ(of, file), buf, nbytes, false);
	write_ended(ret);
	return 0;
}

/* Hook 2: the same handler through a kprobe/kretprobe pair. */
SEC("kprobe/cpuset_write_resmask")
int BPF_KPROBE(cpuset_write_kprobe, struct kernfs_open_file *of, char *buf, size_t nbytes)
{
	write_started(BPF_CORE_READ(of, file), buf, nbytes, false);
	return 0;
}

SEC("kretprobe/cpuset_write_resmask")
int BPF_KRETPROBE(cpuset_write_kretprobe, long ret)
{
	write_ended(ret);
	return 0;
}

/*
 * Hook 3, for kernels with neither (no trampolines, CONFIG_KPROBES off):
 * the write(2), pwrite64(2) and writev(2) syscall tracepoints, which see
 * every way a process writes a cgroup file. The fd is looked up in the
 * task's file table.
 */
static __always_inline struct file *fd_file(unsigned long fd)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	struct file **fds = BPF_CORE_READ(fdt, fd);
	struct file *f = NULL;

	if (!fds || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	return f;
}

static __always_inline int syscall_write_enter(unsigned long fd, const void *ubuf,
					       unsigned long len)
{
	struct file *f = fd_file(fd);

	if (f)
		write_started(f, ubuf, len, true);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_write")
int write_enter(struct trace_event_raw_sys_enter *ctx)
{
	return syscall_write_enter(ctx->args[0], (const void *)ctx->args[1], ctx->args[2]);
}

SEC("tracepoint/syscalls/sys_enter_pwrite64")
int pwrite_enter(struct trace_event_raw_sys_enter *ctx)
{
	return syscall_write_enter(ctx->args[0], (const void *)ctx->args[1], ctx->args[2]);
}

SEC("tracepoint/syscalls/sys_enter_writev")
int writev_enter(struct trace_event_raw_sys_enter *ctx)
{
	struct iovec iov = {};

	/* The first buffer is what a cpulist write carries. */
	bpf_probe_read_user(&iov, sizeof(iov), (const void *)ctx->args[1]);
	return syscall_write_enter(ctx->args[0], iov.iov_base, iov.iov_len);
}

SEC("tracepoint/syscalls/sys_exit_write")
int write_exit(struct trace_event_raw_sys_exit *ctx)
{
	write_ended(ctx->ret);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_pwrite64")
int pwrite_exit(struct trace_event_raw_sys_exit *ctx)
{
	write_ended(ctx->ret);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_writev")
int writev_exit(struct trace_event_raw_sys_exit *ctx)
{
	write_ended(ctx->ret);
	return 0;
}

SEC("tp_btf/cgroup_mkdir")
int BPF_PROG(cg_mkdir_btf, struct cgroup *cgrp, const char *path)
{
	return on_cgroup(cgrp, path, CPUSETD_EV_MKDIR, 0);
}

SEC("raw_tp/cgroup_mkdir")
int BPF_PROG(cg_mkdir_raw, struct cgroup *cgrp, const char *path)
{
	return on_cgroup(cgrp, path, CPUSETD_EV_MKDIR, 0);
}

SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(cg_rmdir_btf, struct cgroup *cgrp, const char *path)
{
	return on_cgroup(cgrp, path, CPUSETD_EV_RMDIR, 0);
}

SEC("raw_tp/cgroup_rmdir")
int BPF_PROG(cg_rmdir_raw, struct cgroup *cgrp, const char *path)
{
	return on_cgroup(cgrp, path, CPUSETD_EV_RMDIR, 0);
}

SEC("tp_btf/cgroup_notify_populated")
int BPF_PROG(cg_populated_btf, struct cgroup *cgrp, const char *path, int val)
{
	return on_cgroup(cgrp, path, CPUSETD_EV_POPULATED, val ? 1 : 0);
}

SEC("raw_tp/cgroup_notify_populated")
int BPF_PROG(cg_populated_raw, struct cgroup *cgrp, const char *path, int val)
{
	return on_cgroup(cgrp, path, CPUSETD_EV_POPULATED, val ? 1 : 0);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(exec_btf, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	return on_exec(p);
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(exec_raw, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	return on_exec(p);
}
