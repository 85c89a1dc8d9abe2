/* block_tp_format: the block:block_rq_complete tracepoint as tracefs describes it — its id and
 * where its "dev" field lies in a raw entry, parsed from the text of its format file. */
#ifndef ENTROPYD_BLOCK_TP_FORMAT_H
#define ENTROPYD_BLOCK_TP_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

/* Where the tracepoint is, below a tracefs mount. */
#define BLOCK_TP_FORMAT_EVENT_DIR "events/block/block_rq_complete"
/* The largest offset or size a field may give: a raw entry fits in a page. */
#define BLOCK_TP_FORMAT_FIELD_MAX 65535u

struct block_tp_format {
	unsigned id;                /* the tracepoint's id */
	unsigned dev_off, dev_size; /* the raw entry's "dev" field */
};

/* From the text of a tracefs "format" file, the offset and size of the field NAME (the
 * declaration's last identifier, an array suffix stripped). False if there is no such field
 * or its offset or size is not a number up to BLOCK_TP_FORMAT_FIELD_MAX. */
bool block_tp_format_field(const char *text, const char *name, unsigned *offset,
			   unsigned *size);

/* The "dev" field of a block_rq_complete format file's text into out->dev_off and
 * out->dev_size: a 4- or 8-byte field (dev_t). False with the reason in err. */
bool block_tp_format_dev(const char *text, struct block_tp_format *out, char *err,
			 size_t errlen);

/* The text of an "id" file: a tracepoint id, 1 to UINT32_MAX, then at most white space.
 * False if it is not one. */
bool block_tp_format_id(const char *text, unsigned *id);

/* Find tracefs (at /sys/kernel/tracing, or under debugfs; mounting it at the former first if
 * no tracefs is and may_mount: that takes CAP_SYS_ADMIN), and read the tracepoint's id and
 * format. False with the reason in err, which names the file or says what to do. */
bool block_tp_format_read(bool may_mount, struct block_tp_format *out, char *err,
			  size_t errlen);

#endif
