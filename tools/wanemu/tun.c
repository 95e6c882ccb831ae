/* tun.c - creates a TUN device inside a network namespace.
 *
 * A TUN device belongs to the namespace of the thread that creates it, so
 * this thread enters the site's namespace, creates and configures the
 * device with plain ioctls, and comes back; the fd keeps working from
 * here.  No netlink, no `ip` binary needed. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "ldsd/log.h"
#include "wanemu.h"

/* Debian 12's headers predate UDP segmentation offload on TUN (Linux 6.2). */
#ifndef TUN_F_USO4
#define TUN_F_USO4 0x20
#define TUN_F_USO6 0x40
#endif
#define TUN_OFFLOADS (TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN)

static int tun_ifflags_up(int sock, const char *ifname)
{
	struct ifreq ifr = { 0 };

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(sock, SIOCGIFFLAGS, &ifr) < 0)
		return -errno;
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	return ioctl(sock, SIOCSIFFLAGS, &ifr) < 0 ? -errno : 0;
}

static int tun_set_addr(int sock, const char *ifname, struct in_addr addr, int plen, unsigned mtu)
{
	struct ifreq ifr = { 0 };
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	sin->sin_family = AF_INET;
	sin->sin_addr = addr;
	if (ioctl(sock, SIOCSIFADDR, &ifr) < 0)
		return -errno;
	sin->sin_addr.s_addr = plen ? htonl(~0u << (32 - plen)) : 0;
	if (ioctl(sock, SIOCSIFNETMASK, &ifr) < 0)
		return -errno;
	ifr.ifr_mtu = (int)mtu;
	if (ioctl(sock, SIOCSIFMTU, &ifr) < 0)
		return -errno;
	return tun_ifflags_up(sock, ifname);
}

/* Inside the namespace: the device, its offloads and addresses, lo up. */
static int tun_create(const char *ifname, struct in_addr addr, int plen, unsigned mtu, int uso)
{
	struct ifreq ifr = { 0 };
	int fd, sock, r;

	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		log_warn("open /dev/net/tun");
		return r;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI | IFF_VNET_HDR;
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		r = -errno;
		log_warn("TUNSETIFF %s", ifname);
		goto close_fd;
	}
	/* TSO: the kernel hands over 64 KiB super-packets instead of MTU
	 * sized ones, which is what lets one core forward > 1 Gb/s.  USO
	 * does the same for UDP GSO sends, as a NIC with UDP segmentation
	 * offload would; kernels before 6.2 refuse it, and then the sender's
	 * kernel cuts those in software. */
	r = ioctl(fd, TUNSETOFFLOAD, TUN_OFFLOADS | (uso ? TUN_F_USO4 | TUN_F_USO6 : 0));
	if (r < 0 && uso && errno == EINVAL) {
		log_info("%s: no UDP segmentation offload (Linux 6.2 has it): the senders' kernels cut UDP GSO sends",
			 ifname);
		r = ioctl(fd, TUNSETOFFLOAD, TUN_OFFLOADS);
	}
	if (r < 0) {
		r = -errno;
		log_warn("TUNSETOFFLOAD %s", ifname);
		goto close_fd;
	}
	sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0) {
		r = -errno;
		log_warn("socket");
		goto close_fd;
	}
	r = tun_set_addr(sock, ifname, addr, plen, mtu);
	if (r < 0) {
		errno = -r;
		log_warn("configuring %s (%s/%d, mtu %u)", ifname, inet_ntoa(addr), plen, mtu);
	} else if ((r = tun_ifflags_up(sock, "lo")) < 0) {
		errno = -r;
		log_warn("setting lo up");
	}
	close(sock);
	if (r == 0)
		return fd;
close_fd:
	close(fd);
	return r;
}

int tun_open_in(const char *netns, const char *ifname, struct in_addr addr, int plen, unsigned mtu, int uso)
{
	char path[300];
	int self, target, fd;

	if (strchr(netns, '/') != NULL)
		snprintf(path, sizeof(path), "%s", netns);
	else
		snprintf(path, sizeof(path), "/run/netns/%s", netns);
	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0) {
		fd = -errno;
		log_warn("open /proc/self/ns/net");
		return fd;
	}
	target = open(path, O_RDONLY | O_CLOEXEC);
	if (target < 0) {
		fd = -errno;
		log_warn("network namespace %s (create it with `ip netns add`)", path);
		close(self);
		return fd;
	}
	if (setns(target, CLONE_NEWNET) < 0) {
		fd = -errno;
		log_warn("entering network namespace %s (needs root)", path);
	} else {
		fd = tun_create(ifname, addr, plen, mtu, uso);
		if (setns(self, CLONE_NEWNET) < 0)
			fatal("returning to wanemu's own network namespace");
	}
	close(target);
	close(self);
	return fd;
}
