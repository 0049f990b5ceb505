// SPDX-License-Identifier: Apache-2.0
/*
 * The termination message writer thread (reject_writer.h).
 *
 * A fixed array of slots, each FREE, QUEUED, RUNNING or DONE, under one
 * mutex: the loop fills a FREE slot (QUEUED) and collects DONE ones; the
 * thread takes the oldest QUEUED one, writes it without the lock held
 * (the loop never touches a RUNNING slot), marks it DONE and bumps the
 * eventfd. Bounded by construction: no allocation after
 * reject_writer_new, at most n_slots jobs in flight, and a write that
 * never returns holds one slot and the thread, nothing else: the loop
 * goes on placing, and drops (logs, counts) jobs once the slots are full.
 *
 * The thread blocks every signal (SIGTERM and SIGHUP are the loop's,
 * read from its signalfd) and logs nothing. At shutdown it gets a bounded
 * time; one stuck in the kernel is detached and frees the writer itself
 * if it ever comes back ("orphaned"), so nobody frees memory it still
 * uses and nobody waits for it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include "user/base/clock.h"
#include "reject.h"
#include "reject_writer.h"

/* The thread's stack: a job is written from its slot, not the stack. */
#define WRITER_STACK_BYTES	(256u << 10)

enum slot_state { SLOT_FREE, SLOT_QUEUED, SLOT_RUNNING, SLOT_DONE };

struct slot {
	enum slot_state state;
	uint64_t seq;			/* submit order */
	struct reject_job job;
};

struct reject_writer {
	pthread_mutex_t lock;
	pthread_cond_t wake;		/* the thread: a job or stop */
	pthread_cond_t gone;		/* reject_writer_free: the thread exited */
	reject_job_fn fn;
	int efd;
	unsigned n_slots;
	uint64_t seq;
	bool started, stop, exited, orphaned;
	pthread_t thread;
	struct slot slots[];
};

int reject_writer_write(const struct reject_job *job)
{
	return reject_write_message(job->pods_dir, job->pod_uid, job->container, job->host_path,
				    job->msg);
}

/* The oldest slot in state st, or NULL. Under the lock. */
static struct slot *oldest(struct reject_writer *w, enum slot_state st)
{
	struct slot *best = NULL;

	for (unsigned i = 0; i < w->n_slots; i++)
		if (w->slots[i].state == st && (!best || w->slots[i].seq < best->seq))
			best = &w->slots[i];
	return best;
}

static void destroy(struct reject_writer *w)
{
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->wake);
	pthread_cond_destroy(&w->gone);
	close(w->efd);
	free(w);
}

static void *run(void *arg)
{
	struct reject_writer *w = arg;
	const uint64_t one = 1;
	uint64_t t0, took;
	struct slot *s;
	bool orphaned;
	int r;

	prctl(PR_SET_NAME, "cpusetd-msg", 0, 0, 0);	/* top -H, ps -L */
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->stop && !(s = oldest(w, SLOT_QUEUED)))
			pthread_cond_wait(&w->wake, &w->lock);
		if (w->stop)
			break;
		s->state = SLOT_RUNNING;
		pthread_mutex_unlock(&w->lock);
		t0 = clock_ns(CLOCK_MONOTONIC);
		r = w->fn(&s->job);
		took = clock_ns(CLOCK_MONOTONIC) - t0;
		pthread_mutex_lock(&w->lock);
		s->job.result = r;
		s->job.took_ns = took;
		s->state = SLOT_DONE;
		if (write(w->efd, &one, sizeof(one)) < 0) {
			/* cannot fail short of 2^64 - 1 unread results */
		}
	}
	w->exited = true;
	orphaned = w->orphaned;
	pthread_cond_broadcast(&w->gone);
	pthread_mutex_unlock(&w->lock);
	if (orphaned)
		destroy(w);
	return NULL;
}

int reject_writer_new(unsigned n_slots, reject_job_fn fn, struct reject_writer **ret)
{
	struct reject_writer *w;
	pthread_condattr_t ca;
	int r;

	if (n_slots < 1 || n_slots > REJECT_WRITER_MAX_SLOTS)
		return -EINVAL;
	w = calloc(1, sizeof(*w) + n_slots * sizeof(w->slots[0]));
	if (!w)
		return -ENOMEM;
	w->n_slots = n_slots;
	w->fn = fn ? fn : reject_writer_write;
	w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->efd < 0) {
		r = -errno;
		free(w);
		return r;
	}
	/* Default attributes cannot fail on Linux; the condition the free
	 * waits on runs on CLOCK_MONOTONIC (a clock step must not cut or
	 * stretch the wait). */
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->wake, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->gone, &ca);
	pthread_condattr_destroy(&ca);
	*ret = w;
	return 0;
}

/* The thread, with every signal blocked (it inherits the mask). */
static int start(struct reject_writer *w)
{
	sigset_t all, old;
	pthread_attr_t a;
	int r;

	if (pthread_attr_init(&a) != 0)
		return -ENOMEM;
	pthread_attr_setstacksize(&a, WRITER_STACK_BYTES);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&w->thread, &a, run, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
	if (r != 0)
		return -r;
	w->started = true;
	return 0;
}

int reject_writer_submit(struct reject_writer *w, const struct reject_job *job)
{
	struct slot *s;
	int r = 0;

	pthread_mutex_lock(&w->lock);
	s = oldest(w, SLOT_FREE);
	if (!s)
		r = -EAGAIN;
	else if (!w->started)
		r = start(w);
	if (r == 0) {
		s->job = *job;
		s->job.result = 0;
		s->job.took_ns = 0;
		s->seq = w->seq++;
		s->state = SLOT_QUEUED;
		pthread_cond_signal(&w->wake);
	}
	pthread_mutex_unlock(&w->lock);
	return r;
}

int reject_writer_next(struct reject_writer *w, struct reject_job *ret)
{
	struct slot *s;
	uint64_t n;

	pthread_mutex_lock(&w->lock);
	s = oldest(w, SLOT_DONE);
	if (s) {
		*ret = s->job;
		s->state = SLOT_FREE;
	} else if (read(w->efd, &n, sizeof(n)) < 0) {
		/* EAGAIN: already clear; the thread bumps it again under the
		 * lock after its next job, so nothing is missed. */
	}
	pthread_mutex_unlock(&w->lock);
	return s != NULL;
}

unsigned reject_writer_pending(struct reject_writer *w)
{
	unsigned n = 0;

	pthread_mutex_lock(&w->lock);
	for (unsigned i = 0; i < w->n_slots; i++)
		n += w->slots[i].state != SLOT_FREE;
	pthread_mutex_unlock(&w->lock);
	return n;
}

int reject_writer_fd(const struct reject_writer *w)
{
	return w->efd;
}

int reject_writer_free(struct reject_writer *w, unsigned wait_ms)
{
	struct timespec until;
	uint64_t ns;

	if (!w)
		return 0;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_broadcast(&w->wake);
	if (w->started) {
		ns = clock_ns(CLOCK_MONOTONIC) + (uint64_t)wait_ms * 1000000ULL;
		until = (struct timespec){ .tv_sec = (time_t)(ns / 1000000000ULL),
					   .tv_nsec = (long)(ns % 1000000000ULL) };
		while (!w->exited)
			if (pthread_cond_timedwait(&w->gone, &w->lock, &until) == ETIMEDOUT)
				break;
		if (!w->exited) {
			w->orphaned = true;	/* the thread frees w when it returns */
			pthread_mutex_unlock(&w->lock);
			pthread_detach(w->thread);
			return -EBUSY;
		}
	}
	pthread_mutex_unlock(&w->lock);
	if (w->started)
		pthread_join(w->thread, NULL);
	destroy(w);
	return 0;
}
