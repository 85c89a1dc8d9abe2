/* check_kernel_boot: unit tests for kernel_boot.c — the boot record written in the initramfs
 * reads back the same; a record of another boot, malformed, out of range, too large, with
 * too many sources or a hostile name is refused (or made printable) with a reason that names
 * the problem; the file is refused through a symlink, writable by others, or not a file. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel_boot.h"
#include "testutil.h"
#include "util.h"

#define ID "0b9ad8c3-6c43-4f25-a3a8-6c1f2f0e9d11"

static char dir[4096];

static void setup(void)
{
	tu_mkdtemp(dir, sizeof(dir), "%s/boot.XXXXXX", tu_tmpdir());
}

static void teardown(void)
{
	tu_rm_tree(dir);
}

static struct kboot sample(void)
{
	struct kboot b = {
		.boot_id = ID, .started_s = 1.25, .ran_s = 3.5, .ended = true,
		.ready_at_start = false, .needed_at_start = 256, .ready_after_s = 0.7,
		.credited_bits = 300, .credited_before_ready = 256, .n_sources = 2,
		.src = {{"block", "vda", 4000, 298.5}, {"input", "event0", 12, 0}},
	};

	return b;
}

/* parse TEXT as a record of boot ID: 0, or -1 with why */
static int parse(const char *text, struct kboot *out, char *why)
{
	return kernel_boot_parse(text, strlen(text), ID, out, why, 256);
}

START_TEST(test_round_trip)
{
	struct kboot b = sample(), r;
	char *s = kernel_boot_format(&b), why[256] = "";

	ck_assert_int_eq(parse(s, &r, why), 0);
	ck_assert_str_eq(r.boot_id, ID);
	ck_assert(r.ended && !r.ready_at_start);
	ck_assert_int_eq(r.needed_at_start, 256);
	ck_assert_double_eq_tol(r.ready_after_s, 0.7, 1e-9);
	ck_assert_double_eq_tol(r.started_s, 1.25, 1e-9);
	ck_assert_double_eq_tol(r.credited_bits, 300, 1e-9);
	ck_assert_double_eq_tol(r.credited_before_ready, 256, 1e-9);
	ck_assert_uint_eq(r.n_sources, 2);
	ck_assert_str_eq(r.src[0].cls, "block");
	ck_assert_str_eq(r.src[0].name, "vda");
	ck_assert_uint_eq(r.src[0].events, 4000);
	ck_assert_double_eq_tol(r.src[0].credited_bits, 298.5, 1e-9);
	/* Not seen ready, needed not known: null, read back as such. */
	b.ready_after_s = -1;
	b.needed_at_start = -1;
	b.ended = false;
	free(s);
	s = kernel_boot_format(&b);
	ck_assert_ptr_nonnull(strstr(s, "\"ready_after_s\":null"));
	ck_assert_int_eq(parse(s, &r, why), 0);
	ck_assert(r.ready_after_s < 0 && r.needed_at_start == -1 && !r.ended);
	free(s);
}
END_TEST

/* expect_refused TEXT, WORDS: refused, the reason holding WORDS; *out untouched */
static void expect_refused(const char *text, const char *words)
{
	struct kboot r = {.credited_bits = 42};
	char why[256] = "";

	ck_assert_msg(parse(text, &r, why) == -1, "accepted: %s", text);
	ck_assert_msg(strstr(why, words), "reason \"%s\" does not say \"%s\" for %s", why, words,
		      text);
	ck_assert_double_eq(r.credited_bits, 42);
}

#define GOOD_HEAD "{\"version\":1,\"boot_id\":\"" ID "\",\"started_s\":1,\"ran_s\":2,\"ended\":true,"
#define GOOD_TAIL "\"ready_after_s\":0.5,\"credited_bits\":10,\"credited_before_ready_bits\":10,\"sources\":[]}"

START_TEST(test_refused)
{
	struct kboot r;
	char why[256];

	ck_assert_int_eq(parse(GOOD_HEAD "\"ready_at_start\":false,\"needed_bits_at_start\":256," GOOD_TAIL,
			       &r, why), 0);
	expect_refused("", "not JSON");
	expect_refused("{\"version\":1", "not JSON");
	expect_refused("[1,2]", "not a JSON object");
	expect_refused("{\"version\":2}", "\"version\" is not 1");
	expect_refused("{\"version\":1,\"boot_id\":\"ffff\"}", "another boot");
	expect_refused(GOOD_HEAD "\"ready_at_start\":false,\"needed_bits_at_start\":256,"
		       "\"ready_after_s\":0.5,\"credited_bits\":-1,\"credited_before_ready_bits\":0,"
		       "\"sources\":[]}", "\"credited_bits\" is -1, outside");
	expect_refused(GOOD_HEAD "\"ready_at_start\":false,\"needed_bits_at_start\":256,"
		       "\"ready_after_s\":0.5,\"credited_bits\":1e300,\"credited_before_ready_bits\":0,"
		       "\"sources\":[]}", "\"credited_bits\" is 1e+300, outside");
	expect_refused(GOOD_HEAD "\"ready_at_start\":false,\"needed_bits_at_start\":256,"
		       "\"ready_after_s\":0.5,\"credited_bits\":\"256\",\"credited_before_ready_bits\":0,"
		       "\"sources\":[]}", "\"credited_bits\" is of another type");
	expect_refused(GOOD_HEAD "\"ready_at_start\":false,\"needed_bits_at_start\":256,"
		       "\"ready_after_s\":0.5,\"credited_bits\":5,\"credited_before_ready_bits\":9,"
		       "\"sources\":[]}", "more credited before the CRNG was ready");
	expect_refused(GOOD_HEAD "\"ready_at_start\":true,\"needed_bits_at_start\":0," GOOD_TAIL,
		       "ready at its start, yet");
	expect_refused(GOOD_HEAD "\"ready_at_start\":1,\"needed_bits_at_start\":256," GOOD_TAIL,
		       "\"ready_at_start\" is of another type");
	expect_refused(GOOD_HEAD "\"ready_at_start\":false," GOOD_TAIL,
		       "\"needed_bits_at_start\" is missing");
	/* The same key twice: which one would count? */
	expect_refused(GOOD_HEAD "\"ready_at_start\":false,\"ready_at_start\":true,"
		       "\"needed_bits_at_start\":256," GOOD_TAIL, "duplicate");
	expect_refused(GOOD_HEAD "\"ready_at_start\":false,\"needed_bits_at_start\":256,"
		       "\"ready_after_s\":0.5,\"credited_bits\":10,\"credited_before_ready_bits\":10,"
		       "\"sources\":{}}", "\"sources\" is not a list");
	expect_refused(GOOD_HEAD "\"ready_at_start\":false,\"needed_bits_at_start\":256,"
		       "\"ready_after_s\":0.5,\"credited_bits\":10,\"credited_before_ready_bits\":10,"
		       "\"sources\":[{\"class\":\"Block!\",\"name\":\"vda\",\"events\":1,"
		       "\"credited_bits\":1}]}", "sources[0].class is not a class name");
	expect_refused(GOOD_HEAD "\"ready_at_start\":false,\"needed_bits_at_start\":256,"
		       "\"ready_after_s\":0.5,\"credited_bits\":10,\"credited_before_ready_bits\":10,"
		       "\"sources\":[{\"class\":\"block\",\"name\":\"vda\",\"events\":-5,"
		       "\"credited_bits\":1}]}", "\"events\" is -5, outside");
}
END_TEST

START_TEST(test_bounds)
{
	struct kboot b = sample(), r;
	char *s, *big, why[256];
	size_t n;

	/* More sources than a record keeps: refused whole, not cut. */
	b.n_sources = KBOOT_MAX_SOURCES;
	for (size_t i = 0; i < b.n_sources; i++)
		b.src[i] = (struct kboot_source){"block", "sdx", 1, 1};
	s = kernel_boot_format(&b);
	ck_assert_int_eq(parse(s, &r, why), 0);
	ck_assert_uint_eq(r.n_sources, KBOOT_MAX_SOURCES);
	n = strlen(s);
	big = xmalloc(n + 64);
	memcpy(big, s, n);
	/* ...,{"class":"block",...}]} -> one more before the closing "]}" */
	snprintf(big + n - 2, 64, ",{\"class\":\"block\",\"name\":\"sdy\",\"events\":1,"
				  "\"credited_bits\":1}]}");
	ck_assert_int_eq(parse(big, &r, why), -1);
	ck_assert_ptr_nonnull(strstr(why, "more than 64 sources"));
	free(big);
	free(s);
	/* Larger than the bound: refused before parsing. */
	big = xmalloc(KBOOT_MAX_BYTES + 2);
	memset(big, ' ', KBOOT_MAX_BYTES + 1);
	big[KBOOT_MAX_BYTES + 1] = '\0';
	ck_assert_int_eq(parse(big, &r, why), -1);
	ck_assert_ptr_nonnull(strstr(why, "larger than 65536 bytes"));
	free(big);
	/* A name with a terminal escape is kept, made printable. */
	b = sample();
	strlcopy(b.src[0].name, "vd\033[2Ja", sizeof(b.src[0].name));
	s = kernel_boot_format(&b);
	ck_assert_int_eq(parse(s, &r, why), 0);
	ck_assert_str_eq(r.src[0].name, "vd\\x1b[2Ja");
	free(s);
	/* Of no known boot: refused. */
	s = kernel_boot_format(&b);
	ck_assert_int_eq(kernel_boot_parse(s, strlen(s), NULL, &r, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "this boot's not known"));
	free(s);
}
END_TEST

START_TEST(test_file)
{
	struct kboot b = sample(), r;
	char path[512], link[512], fifo[512], why[256];
	char *bytes;
	size_t len;
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/sub/boot.json", dir);
	umask(0077);
	fd = kernel_boot_create(path, why, sizeof(why));
	ck_assert_msg(fd >= 0, "%s", why);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0644);
	ck_assert_int_eq(kernel_boot_write(fd, &b), 0);
	/* Rewritten shorter: nothing of the longer one is left behind. */
	b.n_sources = 0;
	ck_assert_int_eq(kernel_boot_write(fd, &b), 0);
	close(fd);
	bytes = kernel_boot_read(path, &len, why, sizeof(why));
	if (geteuid() == 0) {
		ck_assert_msg(bytes != NULL, "%s", why);
		ck_assert_int_eq(kernel_boot_parse(bytes, len, ID, &r, why, sizeof(why)), 0);
		ck_assert_uint_eq(r.n_sources, 0);
		free(bytes);
		/* Writable by the group: anyone in it could tell a story. */
		ck_assert_int_eq(chmod(path, 0664), 0);
		ck_assert_ptr_null(kernel_boot_read(path, &len, why, sizeof(why)));
		ck_assert_ptr_nonnull(strstr(why, "not root's alone"));
		ck_assert_int_eq(chmod(path, 0644), 0);
	} else {
		/* Not root's: refused. */
		ck_assert_ptr_null(bytes);
		ck_assert_ptr_nonnull(strstr(why, "not root's alone"));
	}
	/* Through a symlink: refused. */
	snprintf(link, sizeof(link), "%s/link.json", dir);
	ck_assert_int_eq(symlink(path, link), 0);
	ck_assert_ptr_null(kernel_boot_read(link, &len, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "cannot open it"));
	/* Not a regular file (a FIFO nobody writes: no wait). */
	snprintf(fifo, sizeof(fifo), "%s/fifo.json", dir);
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	ck_assert_ptr_null(kernel_boot_read(fifo, &len, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "not a regular file"));
	/* No record: ENOENT, nothing to say. */
	snprintf(path, sizeof(path), "%s/none.json", dir);
	errno = 0;
	ck_assert_ptr_null(kernel_boot_read(path, &len, why, sizeof(why)));
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

static Suite *kernel_boot_suite(void)
{
	Suite *s = suite_create("kernel_boot");
	TCase *tc = tcase_create("record");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_bounds);
	tcase_add_test(tc, test_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(kernel_boot_suite());
}
