/* fuzz_blktrace: the blktrace record parser on any byte stream, whole and cut into chunks
 * (at lengths the input chooses): both must give the same completions, in the same order,
 * and the same counts. */
#include "autoconf.h"

#include <string.h>

#include "block_blktrace_parse.h"
#include "fuzz.h"

struct seen {
	uint64_t n, hash;
};

static void take(void *ctx, uint32_t device, uint64_t t_ns)
{
	struct seen *s = ctx;
	uint64_t v[2] = {device, t_ns};
	const unsigned char *b = (const unsigned char *)v;

	s->n++;
	for (size_t i = 0; i < sizeof(v); i++)
		s->hash = (s->hash ^ b[i]) * 0x100000001b3ull;
}

static void run(struct blkt_parser *p, struct seen *s, bool completions_only)
{
	blkt_parser_init(p);
	p->completions_only = completions_only;
	memset(s, 0, sizeof(*s));
	s->hash = 0xcbf29ce484222325ull;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct blkt_parser whole, cut;
	struct seen sw, sc;
	uint8_t steps[4];
	size_t n, got = 0;

	/* One byte of flags, four of chunk lengths, then the stream. */
	if (size < 5)
		return 0;
	memcpy(steps, data + 1, sizeof(steps));
	run(&whole, &sw, data[0] & 1);
	run(&cut, &sc, data[0] & 1);
	data += 5;
	size -= 5;

	n = blkt_parse(&whole, data, size, take, &sw);
	FUZZ_ASSERT(n == sw.n && n == whole.completions);
	for (size_t off = 0, i = 0; off < size; i++) {
		size_t len = (size_t)steps[i % 4] + 1;

		if (len > size - off)
			len = size - off;
		got += blkt_parse(&cut, data + off, len, take, &sc);
		off += len;
	}
	FUZZ_ASSERT(got == sc.n);
	FUZZ_ASSERT(sw.n == sc.n && sw.hash == sc.hash);
	FUZZ_ASSERT(whole.records == cut.records && whole.completions == cut.completions &&
		    whole.notify == cut.notify && whole.other == cut.other &&
		    whole.half == cut.half && whole.half_untimed == cut.half_untimed &&
		    whole.bad_version == cut.bad_version && whole.garbage == cut.garbage);
	FUZZ_ASSERT(whole.ncarry == cut.ncarry && whole.skip == cut.skip);
	FUZZ_ASSERT(whole.completions <= whole.records);
	return 0;
}
