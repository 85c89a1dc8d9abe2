/* config_settings: one table of typed keys drives defaults, parsing, validation and printing. */
#ifndef ENTROPYD_CONFIG_SETTINGS_H
#define ENTROPYD_CONFIG_SETTINGS_H

#include <libconfig.h>
#include <stddef.h>
#include <stdio.h>

#include "config.h"
#include "util.h"

/* What a key holds, and so the C type at its offset. */
enum setting_type {
	SET_BOOL,      /* bool */
	SET_INT,       /* int */
	SET_INT64,     /* int64_t: libconfig's 64-bit integer, range-checked to fit */
	SET_FLOAT,     /* double; an integer is accepted too */
	SET_STRING,    /* char *, owned */
	SET_ENUM,      /* an enum (int-sized), written as one of `names` */
	SET_STRLIST,   /* struct strlist, owned */
	SET_GROUP,     /* { ... }: only the type is checked here, the caller parses it */
	SET_GROUPLIST, /* ( { ... }, ... ): likewise */
};

enum {
	SF_MIN_EXCL = 1 << 0, /* min itself is not allowed */
	SF_MAX_EXCL = 1 << 1, /* max itself is not allowed */
	SF_ABSPATH = 1 << 2,  /* string: an absolute path */
	SF_NONEMPTY = 1 << 3, /* string: not empty; list: at least one element */
	SF_AUTO = 1 << 4,     /* list: "auto" is allowed, but only on its own */
	SF_REQUIRED = 1 << 5, /* the key must be given */
	SF_PICKS = 1 << 6,    /* list: names or globs that pick instances by their own name;
			       * one that picks none is warned about (source_names.c) */
	SF_PICKS_ANY = 1 << 7, /* the same, matched against every name the driver gives
				* (an input device's node and device name, its kind) */
	SF_EXCLUDES = 1 << 8, /* with SF_PICKS*: what it picks is left out, not read (one that
			       * picks nothing is not a source that is missing) */
};

struct setting {
	const char *key;  /* NULL ends a table */
	enum setting_type type;
	size_t offset;    /* into the struct the table is applied to */
	unsigned flags;   /* SF_* */
	unsigned set_bit; /* added to config_settings_apply's result when the key is given */
	double min, max;  /* numbers; exact in a double for every range we use */
	double def_num;   /* bool, numbers; for an enum the value */
	const char *def_str;
	const char *const *def_list;  /* NULL-terminated */
	const char *const *names;     /* enum: NULL-terminated, indexed by value */
	const struct setting *sub;    /* grouplist: the keys of each group, for the key list */
	const char *unit;             /* NULL when the value has none */
	const char *example;          /* a list of names: valid names, for error messages */
	const char *help;             /* one line */
};

/* One parse: where messages go, and what has been found wrong so far. */
struct settings_msg;
struct settings_ctx {
	const char *path; /* for messages when libconfig knows no file */
	struct settings_msg *msgs;
	size_t n_msgs;
	size_t n_notes; /* of n_msgs, those that are notices: the file is still valid */
	/* Set by the caller, may be NULL: the literal as written if libconfig stored the
	 * integer setting cs wrapped to 32 bits, else NULL. */
	const char *(*wrapped_int)(struct settings_ctx *ctx, const config_setting_t *cs);
	void *arg; /* for wrapped_int */
};

void config_settings_ctx_init(struct settings_ctx *ctx, const char *path);
/* Hand every message over, in file and line order (errors to errs->msg, notices to
 * errs->note), and release the rest. */
void config_settings_ctx_finish(struct settings_ctx *ctx, struct config_errors *errs);

/* The file cs came from (libconfig knows it for included files), else ctx->path. */
const char *config_settings_file(const struct settings_ctx *ctx, const config_setting_t *cs);

/* Record "FILE:LINE: KEY: problem; allowed: ALLOWED" with FILE and LINE taken from `at`. */
void config_settings_err(struct settings_ctx *ctx, const config_setting_t *at, const char *key,
		  const char *allowed, const char *fmt, ...) PRINTF_LIKE(5, 6);
/* Record "FILE:LINE: notice: KEY: what; ignored": something the file says that has no
 * effect, which does not make the file invalid. */
void config_settings_note(struct settings_ctx *ctx, const config_setting_t *at, const char *key,
		   const char *fmt, ...) PRINTF_LIKE(4, 5);
/* A message that already has its final form ("FILE:LINE: syntax error: ..."). */
void config_settings_err_raw(struct settings_ctx *ctx, const char *file, unsigned line,
		      const char *fmt, ...) PRINTF_LIKE(4, 5);

/* Fill every key of `tab` into `base` with its default. */
void config_settings_defaults(const struct setting *tab, void *base);

/* Parse the members of group `grp` (NULL: nothing given) into `base`. Every problem is
 * recorded in ctx; a key in error keeps its previous value. `prefix` is the dotted path of
 * the group, for messages. Returns the set_bit of every key that was given. */
unsigned config_settings_apply(struct settings_ctx *ctx, const struct setting *tab,
			const config_setting_t *grp, const char *prefix, void *base);

/* Member `key` of grp if it has the shape of `type` (SET_GROUP: a group; SET_GROUPLIST: a
 * list), else NULL: config_settings_apply has already reported a member of the wrong type. */
const config_setting_t *config_settings_member(const config_setting_t *grp, const char *key,
					enum setting_type type);

/* "a string", "an integer", ...: for messages about a value of the wrong type. */
const char *config_settings_type_name(const config_setting_t *cs);

/* Free what config_settings_defaults/config_settings_apply allocated in base. */
void config_settings_free(const struct setting *tab, void *base);

/* Print the keys in libconfig syntax, one per line at `indent` spaces, each with a
 * "# help (unit, range)" comment. A key with a set_bit is printed only if that bit is in
 * `only`; SET_GROUP and SET_GROUPLIST keys are left to the caller. */
void config_settings_print(const struct setting *tab, const void *base, unsigned only, int indent,
		    FILE *out);

/* "prefix.key" for every key but SET_GROUP ones (the caller descends into those); after a
 * SET_GROUPLIST key with a `sub` table, "prefix.key[].subkey" for each of its keys. */
void config_settings_print_keys(const struct setting *tab, const char *prefix, FILE *out);

#endif
