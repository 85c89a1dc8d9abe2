/* check_block_tp_format: the tracefs format parser, on the format files of real kernels
 * (tests/data/block_tp_format: Debian 11, 12 and 13's, and a 6.18 host's), every truncation
 * of them, and broken copies; and block_tp_format_read on this machine's tracefs, where it
 * can be read. */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "block_tp_format.h"
#include "testutil.h"
#include "util.h"

#define DATA SRCDIR "/tests/data/block_tp_format/"

static const char format_text[] =
	"name: block_rq_complete\n"
	"ID: 2107\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;\n"
	"\tfield:int error;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:unsigned short ioprio;\toffset:32;\tsize:2;\tsigned:0;\n"
	"\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;\n"
	"\tfield:__data_loc char[] cmd;\toffset:44;\tsize:4;\tsigned:0;\n"
	"\n"
	"print fmt: \"%d,%d %s (%s) %llu + %u\", ((unsigned int) ((REC->dev) >> 20))\n";

START_TEST(test_format_field)
{
	unsigned off = 0, size = 0;

	ck_assert(block_tp_format_field(format_text, "dev", &off, &size));
	ck_assert_uint_eq(off, 8);
	ck_assert_uint_eq(size, 4);
	ck_assert(block_tp_format_field(format_text, "rwbs", &off, &size));
	ck_assert_uint_eq(off, 34);
	ck_assert_uint_eq(size, 10);
	ck_assert(block_tp_format_field(format_text, "cmd", &off, &size));
	ck_assert_uint_eq(off, 44);
	ck_assert(block_tp_format_field(format_text, "sector", &off, &size));
	ck_assert_uint_eq(size, 8);
	/* Not a prefix or suffix match. */
	ck_assert(!block_tp_format_field(format_text, "de", &off, &size));
	ck_assert(!block_tp_format_field(format_text, "ev", &off, &size));
	ck_assert(!block_tp_format_field(format_text, "nosuch", &off, &size));
	ck_assert(!block_tp_format_field("", "dev", &off, &size));
	ck_assert(!block_tp_format_field("\tfield:dev_t dev;\toffset:x;\n", "dev", &off, &size));
}
END_TEST


/* What each kernel's file says: the fields the block source and a reader of raw entries use. */
static const struct {
	const char *file;
	unsigned rwbs_off, rwbs_size, cmd_off;
} kernels[] = {
	{"bullseye-5.10.format", 32, 8, 40},
	{"bookworm-6.1.format", 32, 8, 40},
	{"trixie-6.12.format", 34, 8, 44},
	{"host-6.18.format", 34, 10, 44},
};

static char *read_data(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), DATA "%s", name);
	return tu_read_file(path, NULL);
}

START_TEST(test_real_kernels)
{
	char *text = read_data(kernels[_i].file), err[160] = "";
	struct block_tp_format f = {0};
	unsigned off = 0, size = 0;

	ck_assert_msg(block_tp_format_dev(text, &f, err, sizeof(err)), "%s: %s",
		      kernels[_i].file, err);
	ck_assert_uint_eq(f.dev_off, 8);
	ck_assert_uint_eq(f.dev_size, 4);
	ck_assert(block_tp_format_field(text, "rwbs", &off, &size));
	ck_assert_uint_eq(off, kernels[_i].rwbs_off);
	ck_assert_uint_eq(size, kernels[_i].rwbs_size);
	ck_assert(block_tp_format_field(text, "cmd", &off, &size));
	ck_assert_uint_eq(off, kernels[_i].cmd_off);
	ck_assert_uint_eq(size, 4);
	ck_assert(block_tp_format_field(text, "common_pid", &off, &size));
	ck_assert_uint_eq(off, 4);
	/* "error" is in the print format too (REC->error): only the field counts. */
	ck_assert(block_tp_format_field(text, "error", &off, &size));
	ck_assert_uint_eq(off, 28);
	ck_assert(!block_tp_format_field(text, "REC", &off, &size));
	free(text);
}
END_TEST

/* Cut anywhere: parsed only once the dev line is whole up to its size's ';', and then
 * right; never a wrong answer from half a line. */
START_TEST(test_truncated)
{
	char *text = read_data(kernels[_i].file), err[160];
	const char *line = strstr(text, "\tfield:dev_t dev;");
	size_t len = strlen(text), whole;

	ck_assert_ptr_nonnull(line);
	whole = (size_t)(strstr(line, "size:4;") - text) + strlen("size:4;");
	for (size_t n = 0; n <= len; n++) {
		char *cut = strndup(text, n);
		struct block_tp_format f = {0};
		bool ok = block_tp_format_dev(cut, &f, err, sizeof(err));

		ck_assert_msg(ok == (n >= whole), "%s cut at %zu of %zu: %s", kernels[_i].file, n,
			      len, ok ? "parsed" : err);
		if (ok) {
			ck_assert_uint_eq(f.dev_off, 8);
			ck_assert_uint_eq(f.dev_size, 4);
		} else {
			ck_assert_str_eq(err, "no \"dev\" field with an offset and a size");
		}
		free(cut);
	}
	free(text);
}
END_TEST

/* The dev line of a real file replaced by each of these: what the parser must make of it. */
static const struct {
	const char *line;
	bool ok;
	unsigned off, size;
	const char *err;
} broken[] = {
	{"\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;", true, 8, 4, NULL},
	/* A wider dev_t, should a kernel have one. */
	{"\tfield:u64 dev;\toffset:16;\tsize:8;\tsigned:0;", true, 16, 8, NULL},
	/* The name, not the type, is what is matched; an array suffix is not part of it. */
	{"\tfield:char dev[4];\toffset:12;\tsize:4;\tsigned:0;", true, 12, 4, NULL},
	{"\tfield:dev_t device;\toffset:8;\tsize:4;\tsigned:0;", false, 0, 0,
	 "no \"dev\" field with an offset and a size"},
	{"\tfield:dev_t rdev;\toffset:8;\tsize:4;\tsigned:0;", false, 0, 0,
	 "no \"dev\" field with an offset and a size"},
	{"\tfield:dev_t dev;\toffset:8;\tsize:2;\tsigned:0;", false, 0, 0,
	 "the \"dev\" field is 2 bytes, not 4 or 8"},
	{"\tfield:dev_t dev;\toffset:8;\tsize:16;\tsigned:0;", false, 0, 0,
	 "the \"dev\" field is 16 bytes, not 4 or 8"},
	{"\tfield:dev_t dev;\toffset:-8;\tsize:4;\tsigned:0;", false, 0, 0,
	 "no \"dev\" field with an offset and a size"},
	{"\tfield:dev_t dev;\toffset:4294967304;\tsize:4;\tsigned:0;", false, 0, 0,
	 "no \"dev\" field with an offset and a size"},
	{"\tfield:dev_t dev;\toffset:65536;\tsize:4;\tsigned:0;", false, 0, 0,
	 "no \"dev\" field with an offset and a size"},
	{"\tfield:dev_t dev;\toffset:0x8;\tsize:4;\tsigned:0;", false, 0, 0,
	 "no \"dev\" field with an offset and a size"},
	{"\tfield:dev_t dev;\toffset:8\tsize:4;\tsigned:0;", false, 0, 0,
	 "no \"dev\" field with an offset and a size"},
	{"\tfield:dev_t dev;\tsize:4;\tsigned:0;", false, 0, 0,
	 "no \"dev\" field with an offset and a size"},
	{"\tfield:dev_t dev;\toffset:8;\tsigned:0;", false, 0, 0,
	 "no \"dev\" field with an offset and a size"},
	{"\tfield:dev_t dev\toffset:8;\tsize:4;\tsigned:0;", false, 0, 0,
	 "no \"dev\" field with an offset and a size"},
	{"", false, 0, 0, "no \"dev\" field with an offset and a size"},
};

START_TEST(test_broken)
{
	char *text = read_data("bookworm-6.1.format"), err[160] = "";
	const char *line = strstr(text, "\tfield:dev_t dev;");
	const char *eol = strchr(line, '\n');
	struct block_tp_format f = {0};
	char *copy;
	bool ok;

	ck_assert_ptr_nonnull(line);
	ck_assert_ptr_nonnull(eol);
	copy = xasprintf("%.*s%s%s", (int)(line - text), text, broken[_i].line, eol);
	ok = block_tp_format_dev(copy, &f, err, sizeof(err));
	ck_assert_msg(ok == broken[_i].ok, "\"%s\": %s", broken[_i].line, ok ? "parsed" : err);
	if (ok) {
		ck_assert_uint_eq(f.dev_off, broken[_i].off);
		ck_assert_uint_eq(f.dev_size, broken[_i].size);
	} else {
		ck_assert_str_eq(err, broken[_i].err);
	}
	free(copy);
	free(text);
}
END_TEST

START_TEST(test_id)
{
	unsigned id = 0;

	ck_assert(block_tp_format_id("2107\n", &id));
	ck_assert_uint_eq(id, 2107);
	ck_assert(block_tp_format_id("1", &id));
	ck_assert_uint_eq(id, 1);
	ck_assert(block_tp_format_id("4294967295\n", &id));
	ck_assert_uint_eq(id, 4294967295u);
	id = 7;
	ck_assert(!block_tp_format_id("", &id));
	ck_assert(!block_tp_format_id("0\n", &id));
	ck_assert(!block_tp_format_id("4294967296\n", &id));
	ck_assert(!block_tp_format_id("-1\n", &id));
	ck_assert(!block_tp_format_id(" 12\n", &id));
	ck_assert(!block_tp_format_id("12 13\n", &id));
	ck_assert(!block_tp_format_id("12x\n", &id));
	ck_assert(!block_tp_format_id("99999999999999999999999\n", &id));
	ck_assert_uint_eq(id, 7); /* untouched by what it refused */
}
END_TEST

/* This machine's own tracefs, where it can be read (root's alone, mode 0700): what the
 * daemon reads at start, id and all. */
START_TEST(test_read_here)
{
	struct block_tp_format f = {0};
	char err[512] = "", path[256], text[64];
	unsigned id = 0;
	FILE *idf;
	const char *dir = NULL;

	if (access("/sys/kernel/tracing/" BLOCK_TP_FORMAT_EVENT_DIR "/id", R_OK) == 0)
		dir = "/sys/kernel/tracing/";
	else if (access("/sys/kernel/debug/tracing/" BLOCK_TP_FORMAT_EVENT_DIR "/id", R_OK) == 0)
		dir = "/sys/kernel/debug/tracing/";
	if (!dir) {
		/* Not mounting it from a unit test: t_block.sh runs the daemon that may. */
		fprintf(stderr, "check_block_tp_format: skipped reading tracefs: no readable "
				"%s (not root, or tracefs not mounted)\n",
			BLOCK_TP_FORMAT_EVENT_DIR);
		return;
	}
	ck_assert_msg(block_tp_format_read(false, &f, err, sizeof(err)), "%s", err);
	/* tracefs files have no size: read as a stream. */
	snprintf(path, sizeof(path), "%s" BLOCK_TP_FORMAT_EVENT_DIR "/id", dir);
	idf = fopen(path, "r");
	ck_assert_ptr_nonnull(idf);
	ck_assert_ptr_nonnull(fgets(text, sizeof(text), idf));
	fclose(idf);
	ck_assert(block_tp_format_id(text, &id));
	ck_assert_uint_eq(f.id, id);
	ck_assert_uint_eq(f.dev_size == 4 || f.dev_size == 8, 1);
}
END_TEST

static Suite *block_tp_format_suite(void)
{
	Suite *s = suite_create("block_tp_format");
	TCase *tc = tcase_create("parse");
	TCase *here = tcase_create("tracefs");

	tcase_add_test(tc, test_format_field);
	tcase_add_loop_test(tc, test_real_kernels, 0, (int)ARRAY_SIZE(kernels));
	tcase_add_loop_test(tc, test_truncated, 0, (int)ARRAY_SIZE(kernels));
	tcase_add_loop_test(tc, test_broken, 0, (int)ARRAY_SIZE(broken));
	tcase_add_test(tc, test_id);
	suite_add_tcase(s, tc);
	tcase_add_test(here, test_read_here);
	suite_add_tcase(s, here);
	return s;
}

int main(void)
{
	return tu_run_suite(block_tp_format_suite());
}
