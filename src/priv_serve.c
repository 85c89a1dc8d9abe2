/* priv_serve: the privileged process's loop: it reads the collector's messages one at a
 * time, has priv_dispatch.c answer each, sends the reply (with a descriptor where the type
 * hands one out), passes signals on to the collector and, when it ends or breaks the
 * protocol, reaps it. What is allowed is priv_policy.c's, the system calls priv_ops.c's;
 * the whole of the two processes is described in priv_start.c. */
#include "autoconf.h"

#include "priv_serve.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef HAVE_VALGRIND_VALGRIND_H
#include <valgrind/valgrind.h>
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

#include "log.h"
#include "priv_dispatch.h"
#include "priv_ops.h"
#include "util.h"

/* Send the reply and the descriptor (closed here) of one answered request; false (the
 * reason given to d) if the collector cannot take it. */
static bool reply(int sock, struct priv_dispatch *d, struct priv_reply *rep, int fd)
{
	bool ok = util_send_with_fd(sock, rep, sizeof(*rep), fd) == (ssize_t)sizeof(*rep);
	int e = errno;

	if (fd >= 0)
		close(fd);
	if (!ok && (e == EAGAIN || e == EWOULDBLOCK))
		priv_dispatch_close(d, "the collector does not read its replies (its queue is full)");
	else if (!ok)
		priv_dispatch_close(d, "the reply could not be sent: %s", strerror(e));
	return ok;
}

/* One request: false at the end (EOF, with why empty) or on a broken one. */
static bool serve_one(int sock, struct priv_dispatch *d)
{
	union priv_req req;
	struct priv_reply rep;
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct iovec iov = {.iov_base = &req, .iov_len = sizeof(req)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	ssize_t n;
	int fd;
	bool ok;

	n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n < 0) {
		priv_dispatch_close(d, "reading from the collector failed: %s", strerror(errno));
		return false;
	}
	if (n == 0)
		return false;
	if (mh.msg_controllen > 0) {
		/* Descriptors go one way only; close what was sent and stop. */
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
				for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
				     i++) {
					memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(fd));
					close(fd);
				}
		priv_dispatch_close(d, "the collector sent a message with ancillary data");
		return false;
	}
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		priv_dispatch_close(d, "the collector sent a message longer than any request");
		return false;
	}
	ok = priv_dispatch_answer(d, &req, (size_t)n, &rep, &fd) && reply(sock, d, &rep, fd);
	util_wipe(&req, sizeof(req));
	return ok;
}

/* How long the collector has to end after SIGTERM or SIGINT passed on to it: then it is
 * killed, whatever it does (stops reading, ignores the signal, hangs in its exit), so that a
 * stop never waits on it. Longer where the memory checkers make every exit slow. */
#define STOP_GRACE_NS (2 * NS_PER_SEC)
#define STOP_GRACE_SLOW_NS (30 * NS_PER_SEC)

static uint64_t stop_grace_ns(void)
{
#ifdef HAVE_SANITIZERS
	return STOP_GRACE_SLOW_NS;
#else
	return RUNNING_ON_VALGRIND ? STOP_GRACE_SLOW_NS : STOP_GRACE_NS;
#endif
}

/* Pass the signals that came on to the collector; a stop starts its deadline. */
static void pass_signals(int sfd, pid_t child, uint64_t *deadline)
{
	struct signalfd_siginfo si;

	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		kill(child, (int)si.ssi_signo);
		if ((si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) && !*deadline)
			*deadline = util_mono_ns() + stop_grace_ns();
	}
}

/* poll()'s timeout until deadline (0: none). */
static int until(uint64_t deadline)
{
	uint64_t now = util_mono_ns();

	if (!deadline)
		return -1;
	return deadline <= now ? 0 : (int)((deadline - now + 999999) / 1000000);
}

/* Wait for the collector to end, passing signals on meanwhile; past the deadline of a stop
 * it is killed. Its wait status. */
static int reap(pid_t child, int sfd, uint64_t deadline)
{
	int ws = 0, pidfd = -1;

#ifdef SYS_pidfd_open
	/* valgrind knows no pidfd_open (and says so): there, a plain wait. */
	if (!RUNNING_ON_VALGRIND)
		pidfd = (int)syscall(SYS_pidfd_open, child, 0);
#endif
	while (pidfd >= 0) {
		struct pollfd pfd[2] = {{.fd = pidfd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
		int n = poll(pfd, sfd >= 0 ? 2 : 1, until(deadline));

		if (n < 0 && errno != EINTR)
			break;
		if (n == 0) {
			log_err("privileged process: the collector did not end within %.0f s of the "
				"signal to stop: killed",
				(double)stop_grace_ns() / NS_PER_SEC);
			kill(child, SIGKILL);
			deadline = 0;
		}
		if (n > 0 && (pfd[0].revents & POLLIN))
			break;
		if (n > 0 && sfd >= 0 && (pfd[1].revents & POLLIN))
			pass_signals(sfd, child, &deadline);
	}
	if (pidfd >= 0)
		close(pidfd);
	while (waitpid(child, &ws, 0) < 0 && errno == EINTR)
		;
	return ws;
}

static int signals_fd(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGUSR1);
	return signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK);
}

int priv_serve(int sock, struct config *cfg, const char *config_path, int rnd_fd, pid_t child)
{
	struct priv_dispatch *d;
	struct pollfd pfd[2];
	sigset_t set;
	int sfd = -1, status = EXIT_OK, ws;
	uint64_t stop_deadline = 0; /* set by SIGTERM or SIGINT: see STOP_GRACE_NS */
	bool broken = false;
	char *ctl_path = xstrdup(cfg->control.socket); /* as at start: see priv_ops_remove_socket */

	d = priv_dispatch_new(cfg, config_path, rnd_fd);
	if (child > 0)
		sfd = signals_fd(&set);
	/* Replies never wait on the collector: one that does not read them (an honest one has
	 * one request at a time in flight) fills its queue, and is a failed collector. */
	if (fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK) < 0)
		log_errno(LOG_WARNING, "privileged process: cannot make its socket non-blocking");
	pfd[0] = (struct pollfd){.fd = sock, .events = POLLIN};
	pfd[1] = (struct pollfd){.fd = sfd, .events = POLLIN};
	for (;;) {
		int n = poll(pfd, sfd >= 0 ? 2 : 1, until(stop_deadline));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			priv_dispatch_close(d, "poll: %s", strerror(errno));
			broken = true;
			break;
		}
		if (n == 0) {
			priv_dispatch_close(d, "the collector did not end within %.0f s of the "
					       "signal to stop",
					    (double)stop_grace_ns() / NS_PER_SEC);
			broken = true;
			break;
		}
		if (sfd >= 0 && (pfd[1].revents & POLLIN))
			pass_signals(sfd, child, &stop_deadline);
		if ((pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) && !serve_one(sock, d)) {
			broken = priv_dispatch_why(d)[0] != '\0';
			break;
		}
	}
	if (broken)
		log_err("privileged process: %s: closing the connection to the collector",
			priv_dispatch_why(d));
	close(sock);
	priv_dispatch_free(d);
	if (child > 0) {
		if (broken)
			kill(child, SIGKILL);
		ws = reap(child, sfd, broken ? 0 : stop_deadline); /* broken: killed already */
		if (WIFEXITED(ws))
			status = WEXITSTATUS(ws);
		else {
			log_err("the collector was killed by signal %d", WTERMSIG(ws));
			status = EXIT_LOST;
		}
	}
	if (broken)
		status = EXIT_LOST;
	if (child > 0)
		priv_ops_remove_socket(ctl_path);
	free(ctl_path);
	if (sfd >= 0)
		close(sfd);
	return status;
}
