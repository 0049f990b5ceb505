// SPDX-License-Identifier: Apache-2.0
/*
 * CPU hotplug uevents (hotplug.h): a netlink socket on the kernel's
 * uevent group, drained in batches. A storm of messages (SMT off takes
 * half the CPUs down one by one) becomes one re-read of sysfs per epoll
 * wake-up, not one per message.
 */
#include <errno.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "hotplug.h"

#define UEVENT_KERNEL_GROUP	1	/* lib/kobject_uevent.c */
#define UEVENT_RCVBUF		(1 << 20)

int hotplug_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = UEVENT_KERNEL_GROUP };
	int size = UEVENT_RCVBUF, fd, r;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
	if (fd < 0)
		return -errno;
	/* FORCE needs CAP_NET_ADMIN; without it the plain one is capped by
	 * rmem_max. Either is fine: an overflow only means one more re-read. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

static bool starts_with(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && memcmp(s, prefix, n) == 0;
}

bool hotplug_is_cpu_uevent(const char *msg, size_t len)
{
	const char *at = memchr(msg, '@', strnlen(msg, len));
	size_t off;

	if (at && starts_with(at + 1, len - (size_t)(at + 1 - msg), "/devices/system/cpu/cpu"))
		return true;
	for (off = 0; off < len; off += strnlen(msg + off, len - off) + 1)
		if (starts_with(msg + off, len - off, "SUBSYSTEM=cpu") &&
		    strnlen(msg + off, len - off) == strlen("SUBSYSTEM=cpu"))
			return true;
	return false;
}

int hotplug_drain(int fd)
{
	char buf[8192];
	int seen = 0;

	for (;;) {
		struct sockaddr_nl sa;
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr mh = { .msg_name = &sa, .msg_namelen = sizeof(sa),
				     .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n = recvmsg(fd, &mh, 0);

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return seen;
			if (errno == ENOBUFS)	/* overflowed: something was lost */
				seen = 1;
			else if (errno != EINTR)
				return -errno;
			continue;
		}
		/* Only the kernel (port 0) speaks for the hardware. */
		if (sa.nl_pid == 0 && hotplug_is_cpu_uevent(buf, (size_t)n))
			seen = 1;
	}
}
