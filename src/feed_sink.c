/* feed_sink: where batches go — the kernel (RNDADDENTROPY) or the dry run (the log). */
#include "autoconf.h"

#include "feed_sink.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "priv.h"
#include "util.h"

static struct log_ratelimit feed_rl = LOG_RATELIMIT_INIT;

static int probe_kernel(struct sink *s)
{
	uint64_t probe = util_mono_ns() ^ ((uint64_t)getpid() << 32);

	int credited;

	if (priv_add_entropy(s->fd, (const uint8_t *)&probe, sizeof(probe), 0, &credited) == 0)
		return 0;
	if (errno == EPERM)
		log_err("cannot credit entropy: RNDADDENTROPY on %s is not permitted (EPERM) "
			"(entropyd needs CAP_SYS_ADMIN: run it as root, outside a user namespace, "
			"and keep CAP_SYS_ADMIN in its capability bounding set; "
			"--dry-run tries a policy without crediting)",
			s->device);
	else
		log_errno(LOG_ERR, "RNDADDENTROPY on %s failed", s->device);
	return -1;
}

int feed_sink_open(struct sink *s, enum sink_kind kind, const char *device)
{
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->fd = -1;
	s->device = xstrdup(device);
	if (kind == SINK_DRY_RUN) {
		log_notice("dry run: nothing is fed to the kernel; batches are logged instead");
		return 0;
	}
	s->fd = open(device, O_WRONLY | O_CLOEXEC);
	if (s->fd < 0) {
		log_err("cannot open %s: %s (feed.device names it; --dry-run feeds nothing)", device,
			strerror(errno));
		return -1;
	}
	if (probe_kernel(s) < 0) {
		close(s->fd);
		s->fd = -1;
		return -1;
	}
	return 0;
}

int feed_sink_feed(struct sink *s, const struct batch *b)
{
	int credited = b->credit_bits;

	if (b->len == 0)
		return 0;
	if (s->kind == SINK_DRY_RUN) {
		log_info("dry run: would feed %zu %s from %llu %s, crediting %d %s", b->len,
			 util_plural(b->len, "byte", "bytes"), (unsigned long long)b->events,
			 util_plural(b->events, "event", "events"), b->credit_bits,
			 util_plural((unsigned long long)b->credit_bits, "bit", "bits"));
	} else if (priv_add_entropy(s->fd, b->data, b->len, b->credit_bits, &credited) < 0) {
		s->errors++;
		log_limited(&feed_rl, LOG_WARNING, "RNDADDENTROPY on %s failed: %s", s->device,
			    strerror(errno));
		return -1;
	}
	s->feeds++;
	s->mixed_bytes += b->len;
	s->credited += (uint64_t)credited;
	return 0;
}

int feed_sink_reseed(struct sink *s)
{
	if (s->kind == SINK_DRY_RUN) {
		log_debug("dry run: would reseed the CRNG");
	} else if (priv_reseed(s->fd) < 0) {
		s->errors++;
		log_limited(&feed_rl, LOG_WARNING, "RNDRESEEDCRNG on %s failed: %s", s->device,
			    strerror(errno));
		return -1;
	}
	s->reseeds++;
	return 0;
}

void feed_sink_close(struct sink *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free(s->device);
	s->device = NULL;
}

const char *feed_sink_name(const struct sink *s)
{
	return s->kind == SINK_DRY_RUN ? "dry-run" : "kernel";
}
