// udtbench.cpp - a UDT4 (Debian's libudt) throughput meter: issue 20's
// reference in bench-wan.sh, run in the same emulated links as ldsd and
// iperf3.  The one C++ program of the project: UDT's API is C++.
//
//   udtbench -s PORT [-t SECS] [-O SECS] [--json]
//       receives one connection; measures what arrives in SECS seconds
//       (default: until the sender closes) after the first OMIT seconds
//       from its first byte, then closes and prints the goodput.
//   udtbench -c HOST PORT [-t SECS | -n BYTES] [--json]
//       sends for SECS seconds (default 10) or BYTES bytes, or until the
//       receiver closes; prints what it handed to UDT and, with -n, the
//       rate until all of it was acknowledged.
//
// Exit 0 after a measured run, 1 on an error (printed), 2 on bad usage.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <udt/udt.h>

namespace {

const int kChunk = 1 << 20;          // bytes per send/recv call
const int kBuf = 64 << 20;           // UDT's own buffers: ten BDPs of 200 Mb/s x 200 ms
const int kUdpBuf = 16 << 20;        // the UDP socket's (the kernel may clamp it)

double now_s()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int usage()
{
	std::fprintf(stderr, "usage: udtbench -s PORT [-t SECS] [-O SECS] [--json]\n"
			     "       udtbench -c HOST PORT [-t SECS | -n BYTES] [--json]\n");
	return 2;
}

int udt_fail(const char *what)
{
	std::fprintf(stderr, "udtbench: %s: %s\n", what, UDT::getlasterror_desc());
	return 1;
}

// Options every socket gets before it connects: buffers large enough for
// the bandwidth-delay products of bench-wan.sh's paths.
int tune(UDTSOCKET u)
{
	int big = kBuf, udp = kUdpBuf, timeo = 200;

	if (UDT::setsockopt(u, 0, UDT_SNDBUF, &big, sizeof(big)) == UDT::ERROR ||
	    UDT::setsockopt(u, 0, UDT_RCVBUF, &big, sizeof(big)) == UDT::ERROR ||
	    UDT::setsockopt(u, 0, UDP_SNDBUF, &udp, sizeof(udp)) == UDT::ERROR ||
	    UDT::setsockopt(u, 0, UDP_RCVBUF, &udp, sizeof(udp)) == UDT::ERROR ||
	    UDT::setsockopt(u, 0, UDT_RCVTIMEO, &timeo, sizeof(timeo)) == UDT::ERROR ||
	    UDT::setsockopt(u, 0, UDT_SNDTIMEO, &timeo, sizeof(timeo)) == UDT::ERROR)
		return udt_fail("setsockopt");
	return 0;
}

// One line of results, text or JSON.
void report(bool json, const char *role, double bytes, double secs, double omit, UDTSOCKET u)
{
	UDT::TRACEINFO perf;
	double mbps = secs > 0 ? bytes * 8 / secs / 1e6 : 0;
	bool have = UDT::perfmon(u, &perf, false) != UDT::ERROR;

	if (json)
		std::printf("{\"role\":\"%s\",\"bytes\":%.0f,\"seconds\":%.3f,\"omit\":%.3f,\"mbps\":%.3f,"
			    "\"rtt_ms\":%.3f,\"retransmits\":%d,\"loss_reported\":%d}\n",
			    role, bytes, secs, omit, mbps, have ? perf.msRTT : 0.0, have ? perf.pktRetransTotal : 0,
			    have ? (std::strcmp(role, "server") == 0 ? perf.pktRcvLossTotal : perf.pktSndLossTotal) : 0);
	else
		std::printf("udtbench: %s: %.0f bytes in %.3f s (first %.1f s omitted): %.2f Mb/s\n", role, bytes,
			    secs, omit, mbps);
	std::fflush(stdout);
}

int server(int port, double secs, double omit, bool json)
{
	struct sockaddr_in a = {};
	UDTSOCKET l = UDT::socket(AF_INET, SOCK_STREAM, 0), u;
	std::vector<char> buf(kChunk);
	double t0 = 0, tl = 0, counted = 0;
	bool timed = false;

	if (l == UDT::INVALID_SOCK)
		return udt_fail("socket");
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = INADDR_ANY;
	if (tune(l) != 0)
		return 1;
	if (UDT::bind(l, (struct sockaddr *)&a, sizeof(a)) == UDT::ERROR)
		return udt_fail("bind");
	if (UDT::listen(l, 1) == UDT::ERROR)
		return udt_fail("listen");
	if ((u = UDT::accept(l, NULL, NULL)) == UDT::INVALID_SOCK)
		return udt_fail("accept");
	UDT::close(l);
	for (;;) {
		int n = UDT::recv(u, buf.data(), kChunk, 0);
		double t = now_s();

		if (n == UDT::ERROR) {
			if (UDT::getlasterror_code() != CUDTException::ETIMEOUT)
				break;   // the sender closed (or the conn broke): the run ends
		} else if (n > 0) {
			if (t0 == 0)
				t0 = t;
			if (t - t0 >= omit) {
				counted += n;
				tl = t;
			}
		}
		if (secs > 0 && t0 > 0 && t - t0 >= omit + secs) {
			timed = true;
			break;
		}
	}
	if (counted == 0) {
		std::fprintf(stderr, "udtbench: server: nothing received%s\n", t0 ? " after the omitted start" : "");
		return 1;
	}
	// Ended by -t: the window is exactly SECS; else up to the last byte.
	report(json, "server", counted, timed ? secs : tl - t0 - omit, omit, u);
	UDT::close(u);
	return 0;
}

int client(const char *host, const char *port, double secs, double bytes, bool json)
{
	struct addrinfo hints = {}, *ai;
	UDTSOCKET u = UDT::socket(AF_INET, SOCK_STREAM, 0);
	std::vector<char> buf(kChunk, 'u');
	double t0, sent = 0;
	int r;

	if (u == UDT::INVALID_SOCK)
		return udt_fail("socket");
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_DGRAM;
	if ((r = getaddrinfo(host, port, &hints, &ai)) != 0) {
		std::fprintf(stderr, "udtbench: %s:%s: %s\n", host, port, gai_strerror(r));
		return 1;
	}
	if (tune(u) != 0)
		return 1;
	r = UDT::connect(u, ai->ai_addr, (int)ai->ai_addrlen);
	freeaddrinfo(ai);
	if (r == UDT::ERROR)
		return udt_fail("connect");
	t0 = now_s();
	while ((bytes > 0 && sent < bytes) || (bytes == 0 && now_s() - t0 < secs)) {
		int want = bytes > 0 && bytes - sent < kChunk ? (int)(bytes - sent) : kChunk;
		int n = UDT::send(u, buf.data(), want, 0);

		if (n == UDT::ERROR) {
			if (UDT::getlasterror_code() == CUDTException::ETIMEOUT)
				continue;
			if (sent > 0)
				break;   // the receiver ended the run
			return udt_fail("send");
		}
		sent += n;
	}
	if (bytes > 0) {
		// Until the last byte is acknowledged (at most a minute).
		int pending = 1, len = sizeof(pending);
		double stop = now_s() + 60;

		while (now_s() < stop && UDT::getsockopt(u, 0, UDT_SNDDATA, &pending, &len) != UDT::ERROR && pending > 0)
			usleep(10000);
	}
	report(json, "client", sent, now_s() - t0, 0, u);
	UDT::close(u);
	return 0;
}

bool number(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = std::strtod(s, &end);
	return errno == 0 && end != s && *end == '\0' && *v >= 0;
}

}  // namespace

int main(int argc, char **argv)
{
	const char *host = NULL, *port = NULL;
	double secs = -1, omit = 0, bytes = 0, p;
	bool json = false, srv = false;
	int r;

	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];

		if (a == "--json") {
			json = true;
		} else if (a == "-s" && i + 1 < argc) {
			srv = true;
			port = argv[++i];
		} else if (a == "-c" && i + 2 < argc) {
			host = argv[++i];
			port = argv[++i];
		} else if ((a == "-t" || a == "-O" || a == "-n") && i + 1 < argc) {
			double v;

			if (!number(argv[++i], &v)) {
				std::fprintf(stderr, "udtbench: %s: not a number: %s\n", a.c_str(), argv[i]);
				return 2;
			}
			(a == "-t" ? secs : a == "-O" ? omit : bytes) = v;
		} else {
			return usage();
		}
	}
	if (port == NULL || !number(port, &p) || p < 1 || p > 65535 || (srv && bytes > 0) ||
	    (!srv && (omit > 0 || (bytes > 0 && secs >= 0))))
		return usage();
	if (UDT::startup() == UDT::ERROR)
		return udt_fail("startup");
	r = srv ? server((int)p, secs > 0 ? secs : 0, omit, json)
		: client(host, port, secs >= 0 ? secs : 10, bytes, json);
	UDT::cleanup();
	return r;
}
