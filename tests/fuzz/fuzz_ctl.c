/* fuzz_ctl: the control protocol as the daemon meets a client's bytes and the client a
 * daemon's: the stream cut into messages (ctl_proto_frame, as ctl.c does, under the real limit
 * and under a small one), each message parsed as a call, the reply or error it gets encoded
 * and read back as the client would, and each message also read as a reply. */
#include "autoconf.h"

#include <string.h>

#include "ctl_proto.h"
#include "fuzz.h"

/* A reply as the client reads it: the encoder's output must parse, as what was sent. */
static void round_trip(json_t *msg, bool is_error)
{
	struct ctl_reply r;
	size_t len;
	char *buf = ctl_proto_encode(msg, &len);

	FUZZ_ASSERT(buf != NULL);
	FUZZ_ASSERT(len > 0 && buf[len - 1] == '\0' && strlen(buf) == len - 1);
	FUZZ_ASSERT(ctl_proto_parse_reply(buf, len - 1, &r) == 0);
	FUZZ_ASSERT((r.error != NULL) == is_error);
	FUZZ_ASSERT(json_equal(r.msg, msg));
	ctl_proto_reply_free(&r);
	free(buf);
	json_decref(msg);
}

static void one_message(const char *msg, size_t len)
{
	struct ctl_call call;
	struct ctl_reply r;
	json_t *err = NULL;

	if (ctl_proto_parse_call(msg, len, &call, &err) < 0) {
		FUZZ_ASSERT(err != NULL);
		round_trip(err, true);
	} else {
		const char *iface;

		FUZZ_ASSERT(call.method < CTL_METHOD_COUNT && json_is_object(call.params));
		/* What the daemon looks up from a client's parameter. */
		iface = json_string_value(json_object_get(call.params, "interface"));
		if (call.method == CTL_GET_INTERFACE_DESCRIPTION && !ctl_proto_interface_description(iface))
			round_trip(ctl_proto_error_str(CTL_E_INTERFACE_NOT_FOUND, "interface", iface), true);
		/* The request's own parameters as a reply: any JSON the client sent encodes. */
		round_trip(ctl_proto_reply_new(json_deep_copy(call.params)), false);
		ctl_proto_call_free(&call);
	}
	if (ctl_proto_parse_reply(msg, len, &r) == 0) {
		FUZZ_ASSERT(json_is_object(r.params));
		ctl_proto_reply_free(&r);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	size_t msg_len, small;

	if (size == 0)
		return 0;
	/* The first byte sets a small limit, so that the limit's edges are reached too. */
	small = data[0];
	for (size_t off = 1; off < size;) {
		enum ctl_proto_frame f = ctl_proto_frame(buf + off, size - off, small, &msg_len);

		FUZZ_ASSERT(f != CTL_FRAME_COMPLETE || (msg_len <= small && buf[off + msg_len] == '\0' &&
							memchr(buf + off, '\0', msg_len) == NULL));
		if (f == CTL_FRAME_TOO_LARGE)
			FUZZ_ASSERT(size - off > small && memchr(buf + off, '\0', small + 1) == NULL);
		if (f != CTL_FRAME_COMPLETE)
			break;
		off += msg_len + 1;
	}
	for (size_t off = 1; off < size;) {
		enum ctl_proto_frame f = ctl_proto_frame(buf + off, size - off, CTL_MAX_REQUEST, &msg_len);

		if (f == CTL_FRAME_INCOMPLETE) {
			FUZZ_ASSERT(memchr(buf + off, '\0', size - off) == NULL);
			break;
		}
		if (f == CTL_FRAME_TOO_LARGE)
			break;
		one_message(buf + off, msg_len);
		off += msg_len + 1;
	}
	return 0;
}
