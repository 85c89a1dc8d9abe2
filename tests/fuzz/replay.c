/* replay: a harness without libFuzzer: every file of its corpus (tests/fuzz/corpus/NAME, or
 * the files and directories given) fed once to LLVMFuzzerTestOneInput. A harness that
 * crashes, or breaks one of its properties, aborts the program. */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "util.h"

static unsigned replayed;

static void replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	do {
		if (len == cap) {
			cap = cap ? cap * 2 : 4096;
			buf = xreallocarray(buf, cap, 1);
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	if (ferror(f)) {
		fprintf(stderr, "replay: %s: read error\n", path);
		exit(1);
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	replayed++;
}

static void replay(const char *path)
{
	struct stat st;
	struct dirent **names;
	int n;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	if (!S_ISDIR(st.st_mode)) {
		replay_file(path);
		return;
	}
	n = scandir(path, &names, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.') {
			char *p = xasprintf("%s/%s", path, names[i]->d_name);

			replay(p);
			free(p);
		}
		free(names[i]);
	}
	free(names);
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			replay(argv[i]);
	} else {
		replay(SRCDIR "/tests/fuzz/corpus/" FUZZ_NAME);
	}
	/* An empty corpus would pass without testing anything. */
	if (!replayed) {
		fprintf(stderr, "replay: no input in the corpus\n");
		return 1;
	}
	printf("%s: %u inputs replayed, no crash and every property held\n", FUZZ_NAME, replayed);
	return 0;
}
