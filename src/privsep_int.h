/* privsep_int: what privsep.c (the collector's side) and privsep_serve.c (the privileged
 * process) share, and nothing else includes. */
#ifndef ENTROPYD_PRIVSEP_INT_H
#define ENTROPYD_PRIVSEP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "privsep.h"

/* The size of each request type (0: no such type). */
extern const size_t priv_req_size[PRIV_TYPE_MAX + 1];

/* The privileged steps themselves, done by whichever process runs them. */
int priv_local_add_entropy(int fd, const uint8_t *data, size_t len, int bits);
int priv_local_perf_open(unsigned cpu, unsigned what, unsigned flags);
/* An input node's name: "event" then [A-Za-z0-9._-], NUL-terminated within size, zeros
 * after. */
bool priv_input_name_ok(const char *s, size_t size);
/* Open input node name of directory watch as priv_input_open says; why (160 bytes, or
 * NULL) gets the reason of a refusal (EACCES). */
int priv_local_input_open(const char *watch, const char *name, char *why);

#define PRIV_INPUT_MAJOR 13 /* the kernel's input subsystem (evdev nodes) */

#endif
