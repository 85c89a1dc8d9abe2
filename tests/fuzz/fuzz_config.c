/* fuzz_config: the configuration parser on any file, and its round trip: a file that loads
 * is printed (config_print), the print must load again and print the same. Errors must be
 * messages, never a crash. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"
#include "fuzz.h"
#include "log.h"

/* The text as a file that config_load can open by name, without touching a disk. */
static int file_of(const void *text, size_t len, char *path, size_t size)
{
	int fd = memfd_create("fuzz_config", MFD_CLOEXEC);

	FUZZ_ASSERT(fd >= 0);
	FUZZ_ASSERT(write(fd, text, len) == (ssize_t)len);
	snprintf(path, size, "/proc/self/fd/%d", fd);
	return fd;
}

static char *print(const struct config *cfg, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	FUZZ_ASSERT(f != NULL);
	config_print(cfg, f);
	FUZZ_ASSERT(fclose(f) == 0);
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool opened;
	struct config_errors errs = {0};
	struct config *cfg, *again;
	char path[64];
	char *text, *text2;
	size_t len, len2;
	int fd;

	if (!opened) {
		log_open(true, 0);
		opened = true;
	}
	/* @include reads the file it names: which files exist is not the parser's business,
	 * and "/dev/zero" would never end. */
	if (memmem(data, size, "@include", 8) || memmem(data, size, "@INCLUDE", 8))
		return 0;
	fd = file_of(data, size, path, sizeof(path));
	cfg = config_load(path, &errs);
	close(fd);
	if (!cfg) {
		FUZZ_ASSERT(errs.n > 0);
		for (size_t i = 0; i < errs.n; i++)
			FUZZ_ASSERT(errs.msg[i] && errs.msg[i][0]);
		config_errors_free(&errs);
		return 0;
	}
	FUZZ_ASSERT(errs.n == 0);
	config_errors_free(&errs); /* the notices of keys that do not apply, if any */
	(void)net_class_capture_config(cfg, "eth0");
	text = print(cfg, &len);
	fd = file_of(text, len, path, sizeof(path));
	again = config_load(path, &errs);
	close(fd);
	if (!again)
		fprintf(stderr, "printed configuration does not load: %s\n%s\n",
			errs.n ? errs.msg[0] : "?", text);
	FUZZ_ASSERT(again != NULL);
	text2 = print(again, &len2);
	if (len != len2 || memcmp(text, text2, len) != 0)
		fprintf(stderr, "printed configuration prints differently:\n%s\n----\n%s\n", text, text2);
	FUZZ_ASSERT(len == len2 && memcmp(text, text2, len) == 0);
	config_errors_free(&errs);
	free(text);
	free(text2);
	config_free(again);
	config_free(cfg);
	config_errors_free(&errs);
	return 0;
}
