/* entropyctl_watch: `entropyctl watch`, a table of every instance refreshed with its rates,
 * on a terminal (cut to its width) or as frames one after another on a pipe; while no
 * daemon answers, it says so and waits for one. */
#include "autoconf.h"

#include "entropyctl_watch.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "ctl_proto.h"
#include "entropyctl_client.h"
#include "util.h"

/* The terminal as it was, put back at exit and on the signals that end the program. */
static struct termios watch_saved;
static bool watch_raw;
static volatile sig_atomic_t watch_signal;

static void watch_restore(void)
{
	if (watch_raw)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &watch_saved);
	watch_raw = false;
}

static void watch_on_signal(int sig)
{
	watch_signal = sig;
}

/* Keys without Enter and without echo, where stdin is a terminal; signals still work
 * (ISIG stays), and end the loop so that the terminal is put back first. */
static void watch_raw_mode(void)
{
	struct termios t;
	struct sigaction sa = {.sa_handler = watch_on_signal};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &watch_saved) < 0)
		return;
	t = watch_saved;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &t) == 0) {
		watch_raw = true;
		atexit(watch_restore);
	}
}

/* One instance's counters at the previous frame, for its rates. */
struct watch_prev {
	char key[200];
	double events, credited;
	double ev_rate, cr_rate;
};

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The terminal's width in columns; 0 (no limit) if it is not a terminal or does not say. */
static size_t watch_width(bool tty)
{
	struct winsize ws;

	if (!tty || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0)
		return 0;
	return ws.ws_col;
}

/* A frame made in a buffer, shown: on a terminal after home and clear, each line cut to its
 * width (every byte of it is printable ASCII: s_() made it so), so that none wraps; else as
 * it is, a blank line after it. */
static void watch_show(char *text, size_t len, bool tty)
{
	size_t width = watch_width(tty);

	if (tty)
		fputs("\033[H\033[2J", stdout); /* home, clear: any ANSI terminal, over ssh too */
	for (size_t at = 0; at < len;) {
		char *nl = memchr(text + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (text + at)) : len - at;

		fwrite(text + at, 1, width && n > width ? width : n, stdout);
		putchar('\n');
		at += n + 1;
	}
	if (!tty)
		printf("\n"); /* frames one after another: a blank line between them */
	fflush(stdout);
}

/* One frame: the overview's first lines, then one row per instance with its rates. prev
 * holds *n_prev instances of the frame before, taken dt seconds ago (0: the first). */
static void watch_frame(FILE *o, const json_t *st, const json_t *sources,
			struct watch_prev **prev, size_t *n_prev, double dt, bool moved,
			double every)
{
	enum { W_CLASS, W_NAME, W_STATE, W_EVENTS, W_EVS, W_CRED, W_BITS, W_WHY, W_HEALTH, WN };
	static const char *const head[WN] = {"CLASS", "NAME",  "STATE",   "EVENTS", "EV/S",
					     "CREDITED", "BITS/S", "WHY NOT", "HEALTH"};
	static const bool right[WN] = {false, false, false, true, true, true, true, false, false};
	const json_t *d = json_object_get(st, "daemon"), *k = json_object_get(st, "kernel"),
		     *t = json_object_get(st, "totals");
	size_t n = json_array_size(sources), w[WN];
	char(*cell)[WN][64] = xcalloc(n ? n : 1, sizeof(*cell));
	struct watch_prev *next = xcalloc(n ? n : 1, sizeof(*next));
	time_t now = time(NULL);
	char clock[16];

	strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&now));
	fprintf(o, "entropyd %s (pid %lld), up ", s_(d, "version"), i_(d, "pid"));
	entropyctl_client_print_duration(o, i_(d, "uptime_s"));
	fprintf(o, "; phase %s; CRNG %s; %s every %g s, q quits\n", s_(d, "feed_phase"),
		b_(k, "crng_ready") ? "ready" : "not ready", clock, every);
	fprintf(o, "totals: %lld %s, %.1f bits credited, %lld %s fed to the kernel\n",
		i_(t, "events"), N(i_(t, "events"), "event"), f_(t, "credited_bits"),
		i_(t, "fed_credit_bits"), N(i_(t, "fed_credit_bits"), "bit"));
	for (int c = 0; c < WN; c++)
		w[c] = strlen(head[c]);
	for (size_t i = 0; i < n; i++) {
		const json_t *s = json_array_get(sources, i);
		struct watch_prev *p = &next[i];
		const struct watch_prev *was = NULL;

		snprintf(p->key, sizeof(p->key), "%s/%s", s_(s, "class"), s_(s, "name"));
		p->events = f_(s, "events");
		p->credited = f_(s, "credited_bits");
		for (size_t j = 0; j < *n_prev; j++)
			if (!strcmp((*prev)[j].key, p->key))
				was = &(*prev)[j];
		if (was && dt > 0 && moved) {
			p->ev_rate = (p->events - was->events) / dt;
			p->cr_rate = (p->credited - was->credited) / dt;
		} else if (was) {
			/* the same snapshot as before (users other than root): the same rates */
			p->ev_rate = was->ev_rate;
			p->cr_rate = was->cr_rate;
		} else {
			p->ev_rate = p->cr_rate = NAN;
		}
		snprintf(cell[i][W_CLASS], 64, "%s", s_(s, "class"));
		snprintf(cell[i][W_NAME], 64, "%s", s_(s, "name"));
		snprintf(cell[i][W_STATE], 64, "%s", s_(s, "state"));
		snprintf(cell[i][W_EVENTS], 64, "%.0f", p->events);
		if (isnan(p->ev_rate))
			snprintf(cell[i][W_EVS], 64, "-");
		else
			snprintf(cell[i][W_EVS], 64, "%.1f", p->ev_rate);
		snprintf(cell[i][W_CRED], 64, "%.1f", p->credited);
		if (isnan(p->cr_rate))
			snprintf(cell[i][W_BITS], 64, "-");
		else
			snprintf(cell[i][W_BITS], 64, "%.2f", p->cr_rate);
		snprintf(cell[i][W_WHY], 64, "%s", entropyctl_client_why_not(s));
		entropyctl_client_health_text(s, cell[i][W_HEALTH], 64);
		for (int c = 0; c < WN; c++)
			if (strlen(cell[i][c]) > w[c])
				w[c] = strlen(cell[i][c]);
	}
	fprintf(o, "\n");
	for (int c = 0; c < WN; c++)
		fprintf(o, right[c] ? "%*s%s" : "%-*s%s", c == WN - 1 ? 0 : (int)w[c], head[c],
			c == WN - 1 ? "\n" : "  ");
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < WN; c++)
			fprintf(o, right[c] ? "%*s%s" : "%-*s%s", c == WN - 1 ? 0 : (int)w[c],
				cell[i][c], c == WN - 1 ? "\n" : "  ");
	if (!n)
		fprintf(o, "(no source instance)\n");
	free(cell);
	free(*prev);
	*prev = next;
	*n_prev = n;
}

/* Wait up to `seconds` for a key: true if it was q (or Q). Keys come from stdin whether or
 * not it is a terminal; at its end, only the time passes. */
static bool watch_wait(double seconds, bool *stdin_open)
{
	double until = mono_s() + seconds;

	for (;;) {
		struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
		double left = until - mono_s();
		char buf[64];
		ssize_t r;

		if (left <= 0 || watch_signal)
			return false;
		if (poll(&p, *stdin_open ? 1 : 0, (int)(left * 1000) + 1) <= 0)
			continue;
		r = read(STDIN_FILENO, buf, sizeof(buf));
		if (r <= 0) {
			*stdin_open = r < 0 && (errno == EINTR || errno == EAGAIN);
			continue;
		}
		for (ssize_t i = 0; i < r; i++)
			if (buf[i] == 'q' || buf[i] == 'Q')
				return true;
	}
}

/* The frame while no daemon answers: why, and that it waits. */
static void watch_absent(FILE *o, const char *why, double every)
{
	time_t now = time(NULL);
	char clock[16];

	strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&now));
	fprintf(o, "%s\nentropyd not running, waiting; %s every %g s, q quits\n", why, clock,
		every);
}

int entropyctl_watch_cmd(const char *path, double timeout, double every)
{
	struct watch_prev *prev = NULL;
	size_t n_prev = 0;
	double last = 0, last_uptime = -1, last_events = -1;
	bool tty = isatty(STDOUT_FILENO), stdin_open = true, absent = false;
	char why[512];
	int rc = XC_OK;

	watch_raw_mode();
	while (!watch_signal) {
		struct conn c;
		json_t *st, *src;
		double now, up, ev;
		bool moved;
		char *text = NULL;
		size_t len = 0;
		FILE *o;

		/* A connection a frame: a daemon restarted in between is found again, and a
		 * user other than root is not held past control.max_hold. Why it fails goes
		 * into the frame, not across it. */
		rc = entropyctl_client_fetch_snapshot(&c, path, timeout, &st, &src, why, sizeof(why));
		if (rc != XC_OK && !entropyctl_client_absent(&c, rc)) {
			/* No permission, not a socket, no sense: waiting would not help. */
			entropyctl_client_errx_msg("%s", why);
			break;
		}
		o = open_memstream(&text, &len);
		if (!o) {
			json_decref(st);
			json_decref(src);
			entropyctl_client_errx_msg("cannot make a frame: %s", strerror(errno));
			rc = XC_PROTOCOL;
			break;
		}
		if (rc != XC_OK) {
			/* Gone, or not there yet: said once without a terminal, every frame on
			 * one; the rates start afresh with the daemon that comes back. */
			watch_absent(o, why, every);
			fclose(o);
			if (tty || !absent)
				watch_show(text, len, tty);
			absent = true;
			free(text);
			free(prev);
			prev = NULL;
			n_prev = 0;
			last = 0;
			last_uptime = last_events = -1;
			rc = XC_OK;
			if (watch_wait(every, &stdin_open))
				break;
			continue;
		}
		absent = false;
		now = mono_s();
		up = (double)i_(json_object_get(st, "daemon"), "uptime_s");
		ev = f_(json_object_get(st, "totals"), "events");
		/* Users other than root get a snapshot that changes every 10 s: rates over the
		 * time between two that differ. */
		moved = up != last_uptime || ev != last_events;
		watch_frame(o, st, json_object_get(src, "sources"), &prev, &n_prev,
			    last > 0 ? now - last : 0, moved, every);
		fclose(o);
		watch_show(text, len, tty);
		free(text);
		if (moved) {
			last = now;
			last_uptime = up;
			last_events = ev;
		}
		json_decref(st);
		json_decref(src);
		if (watch_wait(every, &stdin_open))
			break;
	}
	free(prev);
	watch_restore();
	if (watch_signal) {
		/* Ended by a signal: the terminal is back; end as the signal would have. */
		signal(watch_signal, SIG_DFL);
		raise(watch_signal);
	}
	return rc;
}
