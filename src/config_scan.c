/* config_scan: the file's text read again where libconfig's own error says too little: a
 * tokenizer of libconfig's grammar just deep enough to know which group each setting is
 * in. */
#include "autoconf.h"

#include "config_scan.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Files larger than this are not read again (the configuration is a few kB). */
#define SCAN_MAX (1024 * 1024)
#define DEPTH_MAX 32

struct frame {
	unsigned id;   /* the group's: settings are duplicates only within one */
	char kind;     /* '{', '(' or '[' */
	char name[64]; /* "feed"; "[2]" for the third group of a list; "" at the top */
	unsigned next; /* a list's: the index of its next element */
};

struct setting {
	unsigned group, line;
	char name[64];
};

struct scan {
	const char *p, *end;
	unsigned line;
	struct frame stack[DEPTH_MAX];
	size_t depth;
	unsigned groups;
	struct setting *v;
	size_t n;
	/* What is looked for: a setting on this line its group has had before. */
	unsigned target, first;
	char *key;
	size_t size;
};

/* Whitespace and the three kinds of comment; @include lines (the grammar's only directive). */
static void skip_blank(struct scan *s)
{
	while (s->p < s->end) {
		if (*s->p == '\n') {
			s->line++;
			s->p++;
		} else if (isspace((unsigned char)*s->p)) {
			s->p++;
		} else if (*s->p == '#' || *s->p == '@' ||
			   (*s->p == '/' && s->p + 1 < s->end && s->p[1] == '/')) {
			while (s->p < s->end && *s->p != '\n')
				s->p++;
		} else if (*s->p == '/' && s->p + 1 < s->end && s->p[1] == '*') {
			for (s->p += 2; s->p < s->end && !(s->p[0] == '*' && s->p + 1 < s->end &&
							   s->p[1] == '/');
			     s->p++)
				s->line += *s->p == '\n';
			s->p = s->p + 2 < s->end ? s->p + 2 : s->end;
		} else {
			return;
		}
	}
}

static void skip_string(struct scan *s)
{
	for (s->p++; s->p < s->end && *s->p != '"'; s->p++) {
		if (*s->p == '\\' && s->p + 1 < s->end)
			s->p++;
		s->line += *s->p == '\n';
	}
	if (s->p < s->end)
		s->p++;
}

static bool name_char(char c, bool first)
{
	return isalpha((unsigned char)c) || c == '*' ||
	       (!first && (isdigit((unsigned char)c) || c == '_' || c == '-'));
}

static void push(struct scan *s, char kind, const char *name)
{
	struct frame *f;

	if (s->depth + 1 >= DEPTH_MAX)
		return;
	f = &s->stack[++s->depth];
	f->id = ++s->groups;
	f->kind = kind;
	f->next = 0;
	snprintf(f->name, sizeof(f->name), "%s", name);
}

/* The full key of a setting named name read now: the names of the groups open, then its
 * own. */
static void key_now(const struct scan *s, const char *name, char *key, size_t size)
{
	size_t used = 0;

	key[0] = '\0';
	for (size_t d = 1; d <= s->depth && used < size; d++) {
		const char *n = s->stack[d].name;
		int w;

		if (!n[0])
			continue;
		w = snprintf(key + used, size - used, "%s%s", used && n[0] != '[' ? "." : "", n);
		used = w < 0 ? size : used + (size_t)w;
	}
	if (used < size)
		snprintf(key + used, size - used, "%s%s", used ? "." : "", name);
}

/* A setting read at line: recorded; true if it is the duplicate looked for. */
static bool setting(struct scan *s, const char *name, unsigned line)
{
	unsigned group = s->stack[s->depth].id;

	if (line == s->target)
		for (size_t i = 0; i < s->n; i++)
			if (s->v[i].group == group && !strcmp(s->v[i].name, name)) {
				s->first = s->v[i].line;
				key_now(s, name, s->key, s->size);
				return true;
			}
	s->v = xreallocarray(s->v, s->n + 1, sizeof(*s->v));
	s->v[s->n] = (struct setting){.group = group, .line = line};
	snprintf(s->v[s->n].name, sizeof(s->v[s->n].name), "%s", name);
	s->n++;
	return false;
}

/* Read settings in order until the duplicate looked for, or past its line. */
static bool scan(struct scan *s)
{
	char pending[64] = "", word[64];

	while (skip_blank(s), s->p < s->end && s->line <= s->target) {
		char c = *s->p;
		struct frame *top = &s->stack[s->depth];

		if (c == '"') {
			skip_string(s);
		} else if (name_char(c, true)) {
			const char *w = s->p;
			unsigned line = s->line;

			while (s->p < s->end && name_char(*s->p, false))
				s->p++;
			snprintf(word, sizeof(word), "%.*s", (int)(s->p - w), w);
			skip_blank(s);
			if (s->p < s->end && (*s->p == '=' || *s->p == ':')) {
				s->p++;
				if (setting(s, word, line))
					return true;
				snprintf(pending, sizeof(pending), "%s", word);
			}
		} else if (c == '{' || c == '(' || c == '[') {
			char element[24];

			s->p++;
			if (!pending[0] && top->kind == '(') {
				snprintf(element, sizeof(element), "[%u]", top->next++);
				push(s, c, element);
			} else {
				push(s, c, pending);
			}
			pending[0] = '\0';
		} else if (c == '}' || c == ')' || c == ']') {
			s->p++;
			if (s->depth)
				s->depth--;
			pending[0] = '\0';
		} else {
			if (c == ';' || c == ',')
				pending[0] = '\0';
			s->p++;
		}
	}
	return false;
}

bool config_scan_duplicate(const char *file, unsigned line, char *key, size_t size,
			   unsigned *first)
{
	FILE *f = fopen(file, "re");
	char *text;
	size_t len;
	struct scan s = {.line = 1, .target = line, .key = key, .size = size};
	bool found;

	if (!f || !size)
		return f ? (fclose(f), false) : false;
	text = xmalloc(SCAN_MAX);
	len = fread(text, 1, SCAN_MAX, f);
	fclose(f);
	s.p = text;
	s.end = text + len;
	found = scan(&s);
	if (found)
		*first = s.first;
	free(s.v);
	free(text);
	return found;
}
