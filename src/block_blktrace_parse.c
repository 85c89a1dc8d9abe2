/* block_blktrace_parse: the blktrace relay record parser (magic and version checked, payload
 * skipped, only completions kept, a partial record carried over, resync after garbage). */
#include "autoconf.h"

#include "block_blktrace_parse.h"

#include <string.h>

#include <linux/blktrace_api.h>
#include <stddef.h>

/* Our copy of the layout must be the kernel's. */
_Static_assert(sizeof(struct blk_io_trace) == BLKT_REC_SIZE, "blk_io_trace size");
_Static_assert(offsetof(struct blk_io_trace, time) == 8, "blk_io_trace.time");
_Static_assert(offsetof(struct blk_io_trace, action) == 28, "blk_io_trace.action");
_Static_assert(offsetof(struct blk_io_trace, device) == 36, "blk_io_trace.device");
_Static_assert(offsetof(struct blk_io_trace, pdu_len) == 46, "blk_io_trace.pdu_len");
_Static_assert(BLK_IO_TRACE_MAGIC == BLKT_MAGIC, "magic");
_Static_assert(BLK_IO_TRACE_VERSION == BLKT_VERSION, "version");
_Static_assert(BLK_TA_COMPLETE == BLKT_TA_COMPLETE_FULL, "BLK_TA_COMPLETE");
_Static_assert(BLK_TC_NOTIFY == BLKT_TC_NOTIFY, "BLK_TC_NOTIFY");
_Static_assert(__BLK_TA_CGROUP == BLKT_TA_CGROUP, "__BLK_TA_CGROUP");

/* Field offsets in the 48-byte header. */
enum {
	OFF_MAGIC = 0,
	OFF_SEQUENCE = 4,
	OFF_TIME = 8,
	OFF_SECTOR = 16,
	OFF_BYTES = 24,
	OFF_ACTION = 28,
	OFF_PID = 32,
	OFF_DEVICE = 36,
	OFF_CPU = 40,
	OFF_ERROR = 44,
	OFF_PDU_LEN = 46,
};

static uint16_t get16(const unsigned char *b)
{
	uint16_t v;

	memcpy(&v, b, sizeof(v));
	return v;
}

static uint32_t get32(const unsigned char *b)
{
	uint32_t v;

	memcpy(&v, b, sizeof(v));
	return v;
}

static uint64_t get64(const unsigned char *b)
{
	uint64_t v;

	memcpy(&v, b, sizeof(v));
	return v;
}

bool blkt_decode(const unsigned char *b, struct blkt_rec *r)
{
	r->magic = get32(b + OFF_MAGIC);
	r->sequence = get32(b + OFF_SEQUENCE);
	r->time = get64(b + OFF_TIME);
	r->sector = get64(b + OFF_SECTOR);
	r->bytes = get32(b + OFF_BYTES);
	r->action = get32(b + OFF_ACTION);
	r->pid = get32(b + OFF_PID);
	r->device = get32(b + OFF_DEVICE);
	r->cpu = get32(b + OFF_CPU);
	r->error = get16(b + OFF_ERROR);
	r->pdu_len = get16(b + OFF_PDU_LEN);
	return r->magic == (BLKT_MAGIC | BLKT_VERSION) && r->pdu_len <= BLKT_PDU_MAX;
}

void blkt_encode(const struct blkt_rec *r, unsigned char *b)
{
	memcpy(b + OFF_MAGIC, &r->magic, 4);
	memcpy(b + OFF_SEQUENCE, &r->sequence, 4);
	memcpy(b + OFF_TIME, &r->time, 8);
	memcpy(b + OFF_SECTOR, &r->sector, 8);
	memcpy(b + OFF_BYTES, &r->bytes, 4);
	memcpy(b + OFF_ACTION, &r->action, 4);
	memcpy(b + OFF_PID, &r->pid, 4);
	memcpy(b + OFF_DEVICE, &r->device, 4);
	memcpy(b + OFF_CPU, &r->cpu, 4);
	memcpy(b + OFF_ERROR, &r->error, 2);
	memcpy(b + OFF_PDU_LEN, &r->pdu_len, 2);
}

void blkt_parser_init(struct blkt_parser *p)
{
	memset(p, 0, sizeof(*p));
}

static bool is_completion(uint32_t action)
{
	uint32_t act = action & 0xffffu & ~BLKT_TA_CGROUP;

	return act == BLKT_TA_COMPLETE && (action & (BLKT_TC_COMPLETE << BLKT_TC_SHIFT));
}

/* One header at b: true if valid (and then handled), false if it is garbage. */
static bool take_header(struct blkt_parser *p, const unsigned char *b, blkt_sample_fn *fn,
			void *ctx, size_t *n)
{
	struct blkt_rec r;

	if (!blkt_decode(b, &r)) {
		if ((r.magic & BLKT_MAGIC_MASK) == BLKT_MAGIC &&
		    (r.magic & ~BLKT_MAGIC_MASK) != BLKT_VERSION)
			p->bad_version++;
		return false;
	}
	p->records++;
	p->skip = r.pdu_len;
	if (r.action == 0) {
		/* Half-written (no real action is 0: the category bits are set). */
		p->half++;
		if (!p->completions_only)
			return true;
		/* Counted, never timed: its time may be there, but a notify record being
		 * written looks the same (magic, time and device come first), and a note's time
		 * must not be taken for a completion's. */
		p->half_untimed++;
		p->completions++;
		(*n)++;
		fn(ctx, BLKT_NO_TIME, BLKT_NO_TIME);
		return true;
	} else if (r.action & (BLKT_TC_NOTIFY << BLKT_TC_SHIFT)) {
		p->notify++;
		return true;
	} else if (!is_completion(r.action)) {
		p->other++;
		return true;
	}
	p->completions++;
	(*n)++;
	fn(ctx, r.device, r.time);
	return true;
}

size_t blkt_parse(struct blkt_parser *p, const void *buf, size_t len, blkt_sample_fn *fn,
		  void *ctx)
{
	const unsigned char *b = buf;
	size_t i = 0, n = 0;

	while (i < len) {
		if (p->skip) {
			size_t k = len - i < p->skip ? len - i : p->skip;

			i += k;
			p->skip -= k;
			continue;
		}
		if (p->ncarry) {
			/* Complete the carried header first. */
			size_t k = BLKT_REC_SIZE - p->ncarry;

			if (k > len - i)
				k = len - i;
			memcpy(p->carry + p->ncarry, b + i, k);
			p->ncarry += k;
			i += k;
			if (p->ncarry < BLKT_REC_SIZE)
				break;
			if (take_header(p, p->carry, fn, ctx, &n)) {
				p->ncarry = 0;
			} else {
				/* Not a header: drop one byte, look again from the next. */
				p->garbage++;
				p->ncarry--;
				memmove(p->carry, p->carry + 1, p->ncarry);
			}
			continue;
		}
		if (len - i < BLKT_REC_SIZE) {
			p->ncarry = len - i;
			memcpy(p->carry, b + i, p->ncarry);
			i = len;
			break;
		}
		if (take_header(p, b + i, fn, ctx, &n)) {
			i += BLKT_REC_SIZE;
		} else {
			p->garbage++;
			i++;
		}
	}
	return n;
}
