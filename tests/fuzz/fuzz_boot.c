/* fuzz_boot: the boot record (kernel_boot.c) as the service's instance reads it, a file the
 * initramfs left under /run: any bytes are refused with a reason and leave the result
 * untouched, or are a record of this boot within its bounds, which formats and parses back
 * to the same text. */
#include "autoconf.h"

#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "kernel_boot.h"

/* The boot the harness is in; the corpus's records name it. */
#define FUZZ_BOOT_ID "6a1f3c52-8d2e-4b7f-9c41-0e5d2a7b8c90"

static bool terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

static void within_bounds(const struct kboot *b)
{
	FUZZ_ASSERT(strcmp(b->boot_id, FUZZ_BOOT_ID) == 0);
	FUZZ_ASSERT(b->n_sources <= KBOOT_MAX_SOURCES);
	FUZZ_ASSERT(isfinite(b->credited_bits) && b->credited_bits >= 0);
	FUZZ_ASSERT(b->credited_before_ready >= 0 && b->credited_before_ready <= b->credited_bits);
	FUZZ_ASSERT(b->needed_at_start >= -1 && b->needed_at_start <= 4096);
	FUZZ_ASSERT(!(b->ready_at_start && b->ready_after_s >= 0));
	for (size_t i = 0; i < b->n_sources; i++) {
		FUZZ_ASSERT(terminated(b->src[i].cls, sizeof(b->src[i].cls)));
		FUZZ_ASSERT(terminated(b->src[i].name, sizeof(b->src[i].name)));
		for (const char *p = b->src[i].name; *p; p++)
			FUZZ_ASSERT(*p >= 0x20 && *p < 0x7f);
		FUZZ_ASSERT(isfinite(b->src[i].credited_bits) && b->src[i].credited_bits >= 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct kboot b, again, untouched;
	char why[256] = "", why2[256] = "";
	char *text, *text2;

	memset(&b, 0xa5, sizeof(b));
	untouched = b;
	if (kernel_boot_parse((const char *)data, size, FUZZ_BOOT_ID, &b, why, sizeof(why)) != 0) {
		FUZZ_ASSERT(why[0] != '\0' && terminated(why, sizeof(why)));
		FUZZ_ASSERT(memcmp(&b, &untouched, sizeof(b)) == 0);
		return 0;
	}
	within_bounds(&b);
	text = kernel_boot_format(&b);
	FUZZ_ASSERT(kernel_boot_parse(text, strlen(text), FUZZ_BOOT_ID, &again, why2,
				      sizeof(why2)) == 0);
	text2 = kernel_boot_format(&again);
	FUZZ_ASSERT(strcmp(text, text2) == 0);
	free(text);
	free(text2);
	return 0;
}
