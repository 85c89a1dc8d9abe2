/* fuzz_evdev: the evdev frame parser on any byte stream, whole and cut into chunks (at
 * lengths the input chooses, a partial record carried as the reader carries it): both must
 * sample the same reports at the same times and count the same drops and bad times. */
#include "autoconf.h"

#include <string.h>

#include "fuzz.h"
#include "input.h"

#define REC sizeof(struct input_event)

struct seen {
	uint64_t n, hash, last;
};

static void take(void *ctx, uint64_t t_ns)
{
	struct seen *s = ctx;

	s->n++;
	s->hash = (s->hash ^ t_ns) * 0x100000001b3ull;
	s->last = t_ns;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evdev_parser whole = {0}, cut = {0};
	struct seen sw = {0}, sc = {0};
	unsigned char carry[2 * REC + 256];
	size_t ncarry = 0, used;
	uint8_t steps[4];

	if (size < 4)
		return 0;
	memcpy(steps, data, sizeof(steps));
	data += 4;
	size -= 4;

	used = input_parse(&whole, data, size, take, &sw);
	FUZZ_ASSERT(used == size / REC * REC);
	/* As the reader does: what is left of a record waits in its buffer for the rest. */
	for (size_t off = 0, i = 0; off < size; i++) {
		size_t len = (size_t)steps[i % 4] + 1;

		if (len > size - off)
			len = size - off;
		memcpy(carry + ncarry, data + off, len);
		ncarry += len;
		off += len;
		used = input_parse(&cut, carry, ncarry, take, &sc);
		FUZZ_ASSERT(used % REC == 0 && used <= ncarry && ncarry - used < REC);
		memmove(carry, carry + used, ncarry - used);
		ncarry -= used;
	}
	FUZZ_ASSERT(ncarry == size % REC);
	FUZZ_ASSERT(sw.n == sc.n && sw.hash == sc.hash);
	FUZZ_ASSERT(whole.dropped == cut.dropped && whole.bad_time == cut.bad_time &&
		    whole.dropping == cut.dropping);
	return 0;
}
