/* priv_dispatch: the privileged process's answer to one message of the collector, by a table
 * of the message types (see priv_dispatch.c). */
#ifndef ENTROPYD_PRIV_DISPATCH_H
#define ENTROPYD_PRIV_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "priv_wire.h"

struct priv_dispatch;

/* The state between messages: the policy from cfg (taken; freed by priv_dispatch_free), the
 * configuration's path (re-read on RELOAD; kept, not copied), /dev/random (rnd_fd, or -1:
 * ADD_ENTROPY and RESEED then fail with EBADF). */
struct priv_dispatch *priv_dispatch_new(struct config *cfg, const char *config_path,
					int rnd_fd);
/* Check message req of n bytes (its header, its size, every field) and answer it: true with
 * the whole reply in *rep and, for a type that hands one out, a descriptor in *fd (else -1;
 * the caller sends and closes it); false if the collector broke the protocol, with the
 * reason in priv_dispatch_why(): then the connection is closed. A well-formed request that
 * the configuration does not allow is answered EACCES, not closed. */
bool priv_dispatch_answer(struct priv_dispatch *d, const union priv_req *req, size_t n,
			  struct priv_reply *rep, int *fd);
/* Why the last message closed the connection ("" if none did); priv_dispatch_close() sets
 * it for a reason of the loop's own. */
const char *priv_dispatch_why(const struct priv_dispatch *d);
void priv_dispatch_close(struct priv_dispatch *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The size of a request of type (0: no such type): the collector's side writes them so. */
size_t priv_dispatch_size(unsigned type);
/* Tear down what was set up for the collector (its blktraces, the packet sockets kept), say
 * what was credited, free d. */
void priv_dispatch_free(struct priv_dispatch *d);

#endif
