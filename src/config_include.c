/* config_include: the files libconfig opens for a configuration's @include lines, named as
 * libconfig names them, so that the trust check (priv_trust.c) looks at exactly those: not
 * the first 4,096 bytes of a line, not what glob() makes of a name. */
#include "autoconf.h"

#include "config_include.h"

#include <libconfig.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

char *config_include_dir(const char *path)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');

	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	return dir;
}

#if LIBCONFIG_VER_MAJOR > 1 || (LIBCONFIG_VER_MAJOR == 1 && LIBCONFIG_VER_MINOR >= 7)

/* libconfig 1.7 asks its include hook for the files of each @include and opens what it says. */
struct hook {
	bool (*each)(const char *file, void *arg);
	void *arg;
	bool refused;
};

static const char **include_hook(config_t *lc, const char *dir, const char *name,
				 const char **error)
{
	struct hook *h = config_get_hook(lc);
	const char **files = config_default_include_func(lc, dir, name, error);

	for (size_t i = 0; files && files[i] && !h->refused; i++)
		h->refused = !h->each(files[i], h->arg);
	if (files && h->refused) {
		for (size_t i = 0; files[i]; i++)
			free((void *)(uintptr_t)files[i]); /* libconfig's, malloc'd */
		free(files);
		*error = "not trusted";
		return NULL;
	}
	return files;
}

bool config_include_each(const char *path, bool (*each)(const char *file, void *arg), void *arg)
{
	struct hook h = {.each = each, .arg = arg};
	char *dir = config_include_dir(path);
	config_t lc;

	config_init(&lc);
	config_set_include_dir(&lc, dir);
	config_set_hook(&lc, &h);
	config_set_include_func(&lc, include_hook);
	(void)config_read_file(&lc, path);
	config_destroy(&lc);
	free(dir);
	return !h.refused;
}

#else

/* Before 1.7 there is no hook: the @include lines are found by the rules of libconfig 1.5's
 * scanner (lib/scanner.l), which a flex scanner applies with these consequences:
 * - "^[ \t]*@include[ \t]+\"" opens an include only at the start of a line (after a newline,
 *   or at the start of a file) and only outside a comment or a string; a string may run over
 *   many lines;
 * - in the name, \\ is \ and \" is ", and any other backslash is dropped; a NUL ends what
 *   is kept of a run of other characters;
 * - an included file starts outside any comment or string, but what it leaves open at its end
 *   (a comment, a string, an @include's name) goes on in the file that included it;
 * - the name is taken below the include directory (an absolute one too), and at most 10
 *   included files are open at once. */

#define MAX_DEPTH 10 /* libconfig's MAX_INCLUDE_DEPTH */

enum lex { L_INITIAL, L_COMMENT, L_STRING, L_INCLUDE };

struct scan {
	enum lex state;
	char *name; /* the @include name read so far */
	size_t len, cap;
	bool nul; /* a NUL was in this run of the name: the rest of the run is not kept */
	const char *dir;
	bool (*each)(const char *file, void *arg);
	void *arg;
	bool stop;    /* libconfig reads no further (an include it cannot open, too deep) */
	bool refused; /* each() said no */
};

static void name_add(struct scan *s, int c)
{
	if (s->len + 2 > s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->name = xreallocarray(s->name, s->cap, 1);
	}
	s->name[s->len++] = (char)c;
	s->name[s->len] = '\0';
}

/* At the start of a line outside comments and strings, c read: past "[ \t]*@include[ \t]+\""
 * if it is there (true). Otherwise false, with *c the first character that does not fit, for
 * the caller to take as it comes (those before it are blanks or "@include", which change
 * nothing). */
static bool include_open(FILE *f, int *c)
{
	static const char word[] = "@include";
	size_t i;

	while (*c == ' ' || *c == '\t')
		*c = getc_unlocked(f);
	for (i = 0; word[i]; i++, *c = getc_unlocked(f))
		if (*c != word[i])
			return false;
	if (*c != ' ' && *c != '\t')
		return false;
	while (*c == ' ' || *c == '\t')
		*c = getc_unlocked(f);
	return *c == '"';
}

static void scan_file(struct scan *s, FILE *f, unsigned depth);

static void include(struct scan *s, unsigned depth)
{
	char *file;
	FILE *f;

	s->state = L_INITIAL; /* an included file starts outside comments and strings */
	if (depth == MAX_DEPTH) {
		s->stop = true;
		return;
	}
	file = xasprintf("%s/%s", s->dir, s->name ? s->name : "");
	s->len = 0;
	if (s->name)
		s->name[0] = '\0';
	if (!s->each(file, s->arg)) {
		s->refused = s->stop = true;
	} else if (!(f = fopen(file, "re"))) {
		s->stop = true;
	} else {
		scan_file(s, f, depth + 1);
		fclose(f);
	}
	free(file);
}

/* A character at a time, as flex's scanner takes them: getc_unlocked(), since the stream is
 * this function's alone (and most of a configuration is comments, skipped a character at a
 * time). */
static void scan_file(struct scan *s, FILE *f, unsigned depth)
{
	int c, prev = '\n', next;

	s->nul = false;
	while (!s->stop && (c = getc_unlocked(f)) != EOF) {
		switch (s->state) {
		case L_INITIAL:
			if (prev == '\n' && include_open(f, &c)) {
				s->state = L_INCLUDE;
				s->nul = false;
			} else if (c == '"') {
				s->state = L_STRING;
			} else if (c == '#' || (c == '/' && (next = getc_unlocked(f)) == '/')) {
				while (c != '\n' && c != EOF)
					c = getc_unlocked(f);
			} else if (c == '/' && next == '*') {
				s->state = L_COMMENT;
			} else if (c == '/') {
				ungetc(next, f);
			}
			break;
		case L_COMMENT:
			if (c == '*' && (next = getc_unlocked(f)) == '/')
				s->state = L_INITIAL;
			else if (c == '*')
				ungetc(next, f);
			break;
		case L_STRING:
			if (c == '\\' && (next = getc_unlocked(f)) != '"' && next != '\\')
				ungetc(next, f);
			else if (c == '"')
				s->state = L_INITIAL;
			break;
		case L_INCLUDE:
			if (c == '\\') {
				s->nul = false;
				next = getc_unlocked(f);
				if (next == '\\' || next == '"')
					name_add(s, next);
				else
					ungetc(next, f);
			} else if (c == '"') {
				include(s, depth);
			} else if (c == '\0') {
				s->nul = true;
			} else if (!s->nul) {
				name_add(s, c);
			}
			break;
		}
		prev = c;
	}
	s->nul = false;
}

bool config_include_each(const char *path, bool (*each)(const char *file, void *arg), void *arg)
{
	struct scan s = {.each = each, .arg = arg};
	char *dir = config_include_dir(path);
	FILE *f = fopen(path, "re");

	s.dir = dir;
	if (f) {
		scan_file(&s, f, 0);
		fclose(f);
	}
	free(s.name);
	free(dir);
	return !s.refused;
}

#endif
