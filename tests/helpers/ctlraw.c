/* ctlraw: a raw, misbehaving client of the control socket, for the robustness tests: it sends
 * any bytes, holds many connections, keeps them busy, sends nothing, trickles, or never reads. */
#include "autoconf.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char status_call[] = "{\"method\":\"io.entropyd.GetStatus\"}";

static void usage(void)
{
	fprintf(stderr,
		"usage: ctlraw SOCKET send        send stdin, shut down writing, print each reply\n"
		"                                 on a line (NULs become newlines)\n"
		"       ctlraw SOCKET hold N      open N connections at once, then call GetStatus\n"
		"                                 on each; count replies and refusals\n"
"       ctlraw SOCKET keep N S    open N connections, call GetInfo on each twice a\n"
		"                                 second for S seconds; count the connections served,\n"
		"                                 refused, and closed by the daemon after serving\n"
		"       ctlraw SOCKET idle        connect, send nothing; time until closed\n"
		"       ctlraw SOCKET slow        send a byte every 0.2 s; time until closed\n"
		"       ctlraw SOCKET noread N    send up to N GetStatus calls, never read; time\n"
		"                                 until closed\n");
	exit(2);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int dial(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "ctlraw: connect %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return fd;
}

/* Wait up to `limit` seconds for the daemon to close fd, without reading. */
static double wait_closed(int fd, double t0, double limit)
{
	struct pollfd p = {.fd = fd, .events = POLLRDHUP};

	while (now() - t0 < limit) {
		p.revents = 0;
		if (poll(&p, 1, 100) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)))
			return now() - t0;
	}
	return -1;
}

static int do_send(const char *path)
{
	static char buf[1 << 20];
	size_t len = fread(buf, 1, sizeof(buf), stdin), off = 0;
	int fd = dial(path);
	double t0 = now();

	while (off < len) {
		ssize_t n = send(fd, buf + off, len - off, MSG_NOSIGNAL);

		if (n <= 0)
			break; /* the daemon may close early: read what it said */
		off += (size_t)n;
	}
	shutdown(fd, SHUT_WR);
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (now() - t0 > 10) {
			printf("TIMEOUT\n");
			return 1;
		}
		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			break; /* EOF, or ECONNRESET after it closed on our unread bytes */
		for (ssize_t i = 0; i < n; i++)
			putchar(buf[i] ? buf[i] : '\n');
	}
	close(fd);
	return 0;
}

static int do_hold(const char *path, int n)
{
	int *fds = calloc((size_t)n, sizeof(int)), ok = 0, refused = 0, other = 0, closed = 0;
	char buf[65536];

	for (int i = 0; i < n; i++)
		fds[i] = dial(path);
	for (int i = 0; i < n; i++)
		send(fds[i], status_call, sizeof(status_call), MSG_NOSIGNAL);
	for (int i = 0; i < n; i++) {
		size_t len = 0;
		double t0 = now();

		while (!memchr(buf, '\0', len) && len < sizeof(buf) - 1 && now() - t0 < 10) {
			struct pollfd p = {.fd = fds[i], .events = POLLIN};
			ssize_t r;

			if (poll(&p, 1, 100) <= 0)
				continue;
			r = recv(fds[i], buf + len, sizeof(buf) - 1 - len, 0);
			if (r <= 0)
				break;
			len += (size_t)r;
		}
		buf[len] = '\0';
		if (len == 0)
			closed++;
		else if (strstr(buf, "io.entropyd.TooManyClients"))
			refused++;
		else if (!strstr(buf, "\"error\"") && strstr(buf, "\"totals\""))
			ok++;
		else
			other++;
	}
	for (int i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	printf("ok=%d refused=%d other=%d closed=%d\n", ok, refused, other, closed);
	return 0;
}

static int do_keep(const char *path, int n, double seconds)
{
	static const char info_call[] = "{\"method\":\"org.varlink.service.GetInfo\"}";
	int *fds = calloc((size_t)n, sizeof(int)), served = 0, refused = 0, closed = 0;
	char *state = calloc((size_t)n, 1); /* 0 waiting, 's' served, 'r' refused, 'c' closed */
	double t0 = now(), next = t0;
	char buf[65536];

	for (int i = 0; i < n; i++)
		fds[i] = dial(path);
	while (now() - t0 < seconds) {
		if (now() >= next) {
			for (int i = 0; i < n; i++)
				if (state[i] == 0 || state[i] == 's')
					send(fds[i], info_call, sizeof(info_call), MSG_NOSIGNAL);
			next += 0.5;
		}
		for (int i = 0; i < n; i++) {
			struct pollfd p = {.fd = fds[i], .events = POLLIN};
			ssize_t r;

			if (state[i] == 'r' || state[i] == 'c' || poll(&p, 1, 0) <= 0)
				continue;
			r = recv(fds[i], buf, sizeof(buf) - 1, 0);
			if (r <= 0) {
				state[i] = state[i] == 's' ? 'c' : 'r';
				continue;
			}
			buf[r] = '\0';
			if (strstr(buf, "io.entropyd.TooManyClients"))
				state[i] = 'r';
			else if (state[i] == 0 && strstr(buf, "\"vendor\""))
				state[i] = 's';
		}
		usleep(10000);
	}
	for (int i = 0; i < n; i++) {
		served += state[i] == 's' || state[i] == 'c';
		refused += state[i] == 'r';
		closed += state[i] == 'c';
		close(fds[i]);
	}
	printf("served=%d refused=%d closed=%d\n", served, refused, closed);
	free(fds);
	free(state);
	return 0;
}

static int report(const char *what, double t)
{
	if (t < 0) {
		printf("%s: still open after 60 s\n", what);
		return 1;
	}
	printf("%s: closed after %.1f s\n", what, t);
	return 0;
}

static int do_idle(const char *path)
{
	int fd = dial(path);

	return report("idle", wait_closed(fd, now(), 60));
}

static int do_slow(const char *path)
{
	int fd = dial(path);
	double t0 = now();

	while (now() - t0 < 60) {
		struct pollfd p = {.fd = fd, .events = POLLRDHUP};

		if (send(fd, "[", 1, MSG_NOSIGNAL) < 0 ||
		    (poll(&p, 1, 200) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))))
			return report("slow", now() - t0);
	}
	return report("slow", -1);
}

static int do_noread(const char *path, long n)
{
	int fd = dial(path);
	long sent = 0;
	double t0 = now(), t;

	/* As many calls as the socket takes; the daemon stops reading once its replies pile up. */
	while (sent < n && now() - t0 < 60) {
		struct pollfd p = {.fd = fd, .events = POLLOUT | POLLRDHUP};

		if (poll(&p, 1, 500) <= 0)
			break; /* nothing more fits: the daemon has stopped reading */
		if (p.revents & (POLLRDHUP | POLLHUP | POLLERR))
			break;
		if (send(fd, status_call, sizeof(status_call), MSG_NOSIGNAL | MSG_DONTWAIT) !=
		    (ssize_t)sizeof(status_call))
			break;
		sent++;
	}
	t = wait_closed(fd, t0, 60);
	printf("noread: sent %ld calls\n", sent);
	return report("noread", t);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		usage();
	if (!strcmp(argv[2], "send"))
		return do_send(argv[1]);
	if (!strcmp(argv[2], "hold") && argc == 4)
		return do_hold(argv[1], atoi(argv[3]));
	if (!strcmp(argv[2], "keep") && argc == 5)
		return do_keep(argv[1], atoi(argv[3]), atof(argv[4]));
	if (!strcmp(argv[2], "idle"))
		return do_idle(argv[1]);
	if (!strcmp(argv[2], "slow"))
		return do_slow(argv[1]);
	if (!strcmp(argv[2], "noread") && argc == 4)
		return do_noread(argv[1], atol(argv[3]));
	usage();
	return 2;
}
