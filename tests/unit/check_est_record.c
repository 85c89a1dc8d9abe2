/* check_est_record: symbol recording — file names and modes, exact bytes, bound, refusals, errors. */
#include "autoconf.h"

#include "config.h"
#include "est_record.h"
#include "log.h"
#include "testutil.h"
#include "util.h"

#include <check.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* Random symbols come from splitmix64 with this seed, so any failure can be replayed. */
#define SEED UINT64_C(0x5eed00007ec0bd01)

static uint64_t rng_state;

static uint8_t rnd(void)
{
	return (uint8_t)(tu_splitmix64(&rng_state) >> 56);
}

static uint8_t *random_symbols(size_t n)
{
	uint8_t *v = xmalloc(n);
	size_t i;

	rng_state = SEED;
	for (i = 0; i < n; i++)
		v[i] = rnd();
	return v;
}

/* ---- a private directory per test, and what the log said ---- */

static char dir[PATH_MAX];

static void setup(void)
{

	tu_mkdtemp(dir, sizeof(dir), "%s/record.XXXXXX", tu_tmpdir());
	log_open(true, 1);
}

static void teardown(void)
{
	est_record_fini();
	if (tu_rm_tree(dir) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

static char *path_of(const char *cls, const char *name)
{
	char *base = est_record_file_name(cls, name), *p = xasprintf("%s/%s", dir, base);

	free(base);
	return p;
}

static void assert_file(const char *path, const uint8_t *want, size_t n)
{
	struct stat st;
	size_t got_n;
	char *got;

	ck_assert_msg(lstat(path, &st) == 0, "%s missing", path);
	ck_assert_msg(S_ISREG(st.st_mode), "%s is not a regular file", path);
	ck_assert_msg((st.st_mode & 07777) == 0600, "%s has mode %o", path,
		      (unsigned)(st.st_mode & 07777));
	got = tu_read_file(path, &got_n);
	ck_assert_uint_eq(got_n, n);
	ck_assert_msg(memcmp(got, want, n) == 0, "%s: bytes differ (seed %#llx)", path,
		      (unsigned long long)SEED);
	free(got);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* ---- names ---- */

START_TEST(test_names)
{
	char *n, *long_name = xmalloc(401);

	n = est_record_file_name("input", "AT Translated Set 2 keyboard");
	ck_assert_str_eq(n, "input-AT_Translated_Set_2_keyboard.bin");
	free(n);
	n = est_record_file_name("block", "nvme0n1");
	ck_assert_str_eq(n, "block-nvme0n1.bin");
	free(n);
	/* a slash never leaves the directory; every other byte outside [A-Za-z0-9._-] is '_' */
	n = est_record_file_name("network", "../../etc/passwd");
	ck_assert_str_eq(n, "network-.._.._etc_passwd.bin");
	free(n);
	n = est_record_file_name("input", "Logitech\xc2\xae Mouse:1*?\n");
	ck_assert_str_eq(n, "input-Logitech___Mouse_1___.bin");
	free(n);
	/* a long name is cut, so that the file name stays below NAME_MAX */
	memset(long_name, 'a', 400);
	long_name[400] = '\0';
	n = est_record_file_name("input", long_name);
	ck_assert_uint_le(strlen(n), NAME_MAX);
	ck_assert_int_eq(strncmp(n, "input-aaaa", 10), 0);
	free(n);
	free(long_name);
}
END_TEST

/* ---- what is written ---- */

START_TEST(test_exact_bytes)
{
	const size_t n = 10000;
	uint8_t *sym = random_symbols(n);
	char *path = path_of("input", "kbd 1");
	struct recorder *r = est_record_open(dir, "input", "kbd 1", 16777216);
	size_t i;

	ck_assert_ptr_nonnull(r);
	ck_assert(est_record_active(r));
	for (i = 0; i < n; i++)
		est_record_symbol(r, sym[i]);
	ck_assert_uint_eq(est_record_bytes(r), n);
	est_record_close(r);
	assert_file(path, sym, n);
	free(path);
	free(sym);
}
END_TEST

static long long size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* With the daemon's timer, symbols reach the file within seconds, not in 4 KiB steps. */
START_TEST(test_flush_on_timer)
{
	struct event_base *base = event_base_new();
	char *path = path_of("input", "slow");
	struct recorder *r;
	uint8_t sym[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};

	ck_assert_ptr_nonnull(base);
	est_record_flush_on(base);
	r = est_record_open(dir, "input", "slow", 16777216);
	ck_assert_ptr_nonnull(r);
	for (size_t i = 0; i < 10; i++)
		est_record_symbol(r, sym[i]);
	ck_assert_int_eq(size_of(path), 0); /* buffered */
	/* 2 s, and some: 400 turns of at most 10 ms */
	TU_PUMP_UNTIL(base, 400, size_of(path) == 10);
	assert_file(path, sym, 10);
	/* and again for what comes after */
	est_record_symbol(r, 11);
	TU_PUMP_UNTIL(base, 400, size_of(path) == 11);
	est_record_close(r);
	est_record_fini(); /* frees the timer before its base */
	event_base_free(base);
	free(path);
}
END_TEST

/* Without it, nothing is written before 4 KiB or the close. */
START_TEST(test_no_timer_no_flush)
{
	char *path = path_of("input", "slow");
	struct recorder *r = est_record_open(dir, "input", "slow", 16777216);

	ck_assert_ptr_nonnull(r);
	est_record_symbol(r, 42);
	sleep(1);
	ck_assert_int_eq(size_of(path), 0);
	est_record_close(r);
	ck_assert_int_eq(size_of(path), 1);
	free(path);
}
END_TEST

/* The umask may narrow the mode of a new file; an old file may have a wider one. */
START_TEST(test_mode_always_0600)
{
	char *path = path_of("block", "sda");
	mode_t old = umask(0277);
	struct recorder *r = est_record_open(dir, "block", "sda", 4096);
	uint8_t sym = 7;

	umask(old);
	ck_assert_ptr_nonnull(r);
	est_record_symbol(r, sym);
	est_record_close(r);
	assert_file(path, &sym, 1);
	est_record_fini(); /* a new run */

	ck_assert_int_eq(chmod(path, 0644), 0);
	r = est_record_open(dir, "block", "sda", 4096);
	ck_assert_ptr_nonnull(r);
	est_record_close(r);
	assert_file(path, &sym, 0);
	free(path);
}
END_TEST

/* Truncated at the first open of a run; an instance that comes back appends. */
START_TEST(test_truncate_then_append)
{
	uint8_t *sym = random_symbols(300);
	char *path = path_of("input", "mouse");
	struct recorder *r;
	size_t i;

	write_file(path, "left over from the last run", 0600);
	r = est_record_open(dir, "input", "mouse", 1 << 20);
	ck_assert_ptr_nonnull(r);
	for (i = 0; i < 100; i++)
		est_record_symbol(r, sym[i]);
	est_record_close(r);
	assert_file(path, sym, 100);

	r = est_record_open(dir, "input", "mouse", 1 << 20);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(est_record_bytes(r), 100);
	for (i = 100; i < 300; i++)
		est_record_symbol(r, sym[i]);
	est_record_close(r);
	assert_file(path, sym, 300);

	est_record_fini(); /* the next run starts afresh */
	r = est_record_open(dir, "input", "mouse", 1 << 20);
	ck_assert_ptr_nonnull(r);
	est_record_close(r);
	assert_file(path, sym, 0);
	free(path);
	free(sym);
}
END_TEST

/* ---- the bound ---- */

START_TEST(test_bound)
{
	const size_t n = 20000, max = 4096 + 10;
	uint8_t *sym = random_symbols(n);
	char *path = path_of("network", "eth0"), *log;
	struct recorder *r;
	size_t i;

	tu_capture_begin();
	r = est_record_open(dir, "network", "eth0", max);
	ck_assert_ptr_nonnull(r);
	for (i = 0; i < n; i++)
		est_record_symbol(r, sym[i]);
	ck_assert(!est_record_active(r));
	ck_assert_uint_eq(est_record_bytes(r), max);
	est_record_close(r);
	/* stopped for this run: a new attach does not start again */
	ck_assert_ptr_null(est_record_open(dir, "network", "eth0", max));
	log = tu_capture_end();
	assert_file(path, sym, max);
	ck_assert_msg(tu_count(log, "reached record.max_bytes") == 1, "log: %s", log);
	ck_assert_msg(strstr(log, "network/eth0") != NULL, "log: %s", log);
	free(log);
	free(path);
	free(sym);
}
END_TEST

/* The bound is of the file: an instance that comes back cannot pass it. */
START_TEST(test_bound_across_reattach)
{
	uint8_t *sym = random_symbols(6000);
	char *path = path_of("input", "kbd");
	struct recorder *r;
	size_t i;

	r = est_record_open(dir, "input", "kbd", 4096);
	for (i = 0; i < 3000; i++)
		est_record_symbol(r, sym[i]);
	est_record_close(r);
	r = est_record_open(dir, "input", "kbd", 4096);
	ck_assert_ptr_nonnull(r);
	for (; i < 6000; i++)
		est_record_symbol(r, sym[i]);
	ck_assert(!est_record_active(r));
	est_record_close(r);
	assert_file(path, sym, 4096);
	free(path);
	free(sym);
}
END_TEST

/* ---- what is refused ---- */

START_TEST(test_symlink_refused)
{
	char *path = path_of("input", "kbd"), *target = xasprintf("%s/target", dir);
	char *dangling = xasprintf("%s/nowhere", dir), *log;
	struct stat st;
	size_t n;

	write_file(target, "precious", 0644);
	ck_assert_int_eq(symlink(target, path), 0);
	tu_capture_begin();
	ck_assert_ptr_null(est_record_open(dir, "input", "kbd", 4096));
	log = tu_capture_end();
	ck_assert_msg(strstr(log, "symbolic link") != NULL, "log: %s", log);
	free(log);
	free(tu_read_file(target, &n));
	ck_assert_uint_eq(n, strlen("precious"));
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));

	/* a link to nothing must not create its target either */
	unlink(path);
	ck_assert_int_eq(symlink(dangling, path), 0);
	ck_assert_ptr_null(est_record_open(dir, "input", "kbd", 4096));
	ck_assert_int_eq(lstat(dangling, &st), -1);
	free(dangling);
	free(target);
	free(path);
}
END_TEST

START_TEST(test_other_files_refused)
{
	char *path = path_of("input", "kbd"), *other = xasprintf("%s/other", dir);
	size_t n;

	/* a FIFO: refused at once, without blocking or opening it */
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_ptr_null(est_record_open(dir, "input", "kbd", 4096));
	unlink(path);
	/* a directory */
	ck_assert_int_eq(mkdir(path, 0700), 0);
	ck_assert_ptr_null(est_record_open(dir, "input", "kbd", 4096));
	rmdir(path);
	/* a hard link to some other file: it would be truncated */
	write_file(other, "precious", 0600);
	ck_assert_int_eq(link(other, path), 0);
	ck_assert_ptr_null(est_record_open(dir, "input", "kbd", 4096));
	free(tu_read_file(other, &n));
	ck_assert_uint_eq(n, strlen("precious"));
	free(other);
	free(path);
}
END_TEST

/* Two instances whose names sanitise alike: the second is not recorded. */
START_TEST(test_same_file_twice)
{
	struct recorder *a = est_record_open(dir, "input", "kbd:1", 4096);
	struct recorder *b = est_record_open(dir, "input", "kbd/1", 4096);

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_null(b);
	est_record_close(a);
}
END_TEST

/* ---- errors ---- */

START_TEST(test_off_and_bad_dir)
{
	char *file = xasprintf("%s/plain", dir), *under = xasprintf("%s/sub", file), *log;

	/* off */
	ck_assert_ptr_null(est_record_open(NULL, "input", "kbd", 4096));
	ck_assert_ptr_null(est_record_open("", "input", "kbd", 4096));
	tu_capture_begin();
	ck_assert_ptr_null(est_record_open("relative/dir", "input", "kbd", 4096));
	write_file(file, "x", 0600);
	ck_assert_ptr_null(est_record_open(under, "input", "kbd", 4096));
	/* unwritable: sysfs refuses new files even to root */
	ck_assert_ptr_null(est_record_open("/sys", "input", "kbd", 4096));
	if (geteuid() != 0) {
		char *ro = xasprintf("%s/ro", dir);

		ck_assert_int_eq(mkdir(ro, 0500), 0);
		ck_assert_ptr_null(est_record_open(ro, "input", "kbd", 4096));
		chmod(ro, 0700);
		free(ro);
	}
	log = tu_capture_end();
	ck_assert_msg(strstr(log, "not an absolute path") != NULL, "log: %s", log);
	ck_assert_msg(strstr(log, under) != NULL, "log: %s", log);
	ck_assert_msg(strstr(log, "/sys/input-kbd.bin") != NULL, "log: %s", log);
	free(log);
	/* null is harmless everywhere */
	est_record_symbol(NULL, 1);
	est_record_close(NULL);
	ck_assert(!est_record_active(NULL));
	ck_assert_uint_eq(est_record_bytes(NULL), 0);
	free(under);
	free(file);
}
END_TEST

/* The last component of DIR is made (0700) if it is missing. */
START_TEST(test_dir_created)
{
	char *sub = xasprintf("%s/rec", dir);
	struct recorder *r = est_record_open(sub, "block", "sda", 4096);
	struct stat st;

	ck_assert_ptr_nonnull(r);
	est_record_close(r);
	ck_assert_int_eq(stat(sub, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	free(sub);
}
END_TEST

/* A write error (here the file size limit) stops that recording, logged, never a crash. */
START_TEST(test_write_error)
{
	const size_t n = 50000;
	uint8_t *sym = random_symbols(n);
	struct rlimit rl = {.rlim_cur = 8192, .rlim_max = 8192};
	char *path = path_of("input", "kbd"), *log;
	struct recorder *r;
	size_t i, got;

	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	tu_capture_begin();
	r = est_record_open(dir, "input", "kbd", 1 << 20);
	ck_assert_ptr_nonnull(r);
	for (i = 0; i < n; i++)
		est_record_symbol(r, sym[i]);
	ck_assert(!est_record_active(r));
	est_record_close(r);
	log = tu_capture_end();
	ck_assert_msg(tu_count(log, "recording of input/kbd stopped") == 1, "log: %s", log);
	ck_assert_msg(strstr(log, "File too large") != NULL, "log: %s", log);
	free(tu_read_file(path, &got));
	ck_assert_uint_le(got, 8192);
	free(log);
	free(path);
	free(sym);
}
END_TEST

/* ---- the config keys ---- */

static struct config *load_text(const char *text, struct config_errors *errs)
{
	char *path = xasprintf("%s/test.conf", dir);
	struct config *cfg;

	write_file(path, text, 0600);
	cfg = config_load(path, errs);
	free(path);
	return cfg;
}

START_TEST(test_config_keys)
{
	struct config_errors errs = {0};
	struct config *cfg = config_defaults();
	char *printed = NULL;
	size_t len = 0;
	FILE *f;

	ck_assert_str_eq(cfg->record.dir, "");
	ck_assert_int_eq(cfg->record.max_bytes, 16777216);
	config_free(cfg);

	cfg = load_text("record = { dir = \"/var/tmp/rec\"; max_bytes = 4096; };\n", &errs);
	ck_assert_ptr_nonnull(cfg);
	ck_assert_str_eq(cfg->record.dir, "/var/tmp/rec");
	ck_assert_int_eq(cfg->record.max_bytes, 4096);
	f = open_memstream(&printed, &len);
	config_print(cfg, f);
	fclose(f);
	ck_assert_msg(strstr(printed, "dir = \"/var/tmp/rec\";") != NULL, "%s", printed);
	ck_assert_msg(strstr(printed, "max_bytes = 4096;") != NULL, "%s", printed);
	free(printed);
	config_free(cfg);

	cfg = load_text("record = {\n  dir = \"rec\";\n  max_bytes = 4095;\n};\n", &errs);
	ck_assert_ptr_null(cfg);
	ck_assert_uint_eq(errs.n, 2);
	ck_assert_msg(strstr(errs.msg[0], ":2: record.dir: \"rec\" is not an absolute path") &&
			      strstr(errs.msg[0], "allowed: "),
		      "%s", errs.msg[0]);
	ck_assert_msg(strstr(errs.msg[1], ":3: record.max_bytes: 4095 is out of range") != NULL,
		      "%s", errs.msg[1]);
	config_errors_free(&errs);

	cfg = load_text("record = { max_bytes = 2147483648L; };\n", &errs);
	ck_assert_ptr_null(cfg);
	ck_assert_uint_eq(errs.n, 1);
	config_errors_free(&errs);
}
END_TEST

static Suite *record_suite(void)
{
	Suite *s = suite_create("record");
	TCase *tc = tcase_create("record");

	tcase_add_checked_fixture(tc, setup, teardown);
	/* the flush timer's test waits for it twice (2 s each): past Check's default 4 s */
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_exact_bytes);
	tcase_add_test(tc, test_flush_on_timer);
	tcase_add_test(tc, test_no_timer_no_flush);
	tcase_add_test(tc, test_mode_always_0600);
	tcase_add_test(tc, test_truncate_then_append);
	tcase_add_test(tc, test_bound);
	tcase_add_test(tc, test_bound_across_reattach);
	tcase_add_test(tc, test_symlink_refused);
	tcase_add_test(tc, test_other_files_refused);
	tcase_add_test(tc, test_same_file_twice);
	tcase_add_test(tc, test_off_and_bad_dir);
	tcase_add_test(tc, test_dir_created);
	tcase_add_test(tc, test_write_error);
	tcase_add_test(tc, test_config_keys);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(record_suite());
}
