/* ctl_proto: the control protocol, shared by entropyd and entropyctl — Varlink over a unix
 * stream socket: the io.entropyd interface, its methods and errors, NUL framing, messages. */
#ifndef ENTROPYD_CTL_PROTO_H
#define ENTROPYD_CTL_PROTO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The version of the io.entropyd interface, given in GetStatus (daemon.protocol) and in the
 * interface description. Raise it with any change to the description, and say here what
 * changed; a client can then tell what the daemon it talks to offers.
 *   1  GetStatus, GetSources, Reload; errors ConfigInvalid, InvalidRequest, RequestTooLarge,
 *      TooManyClients.
 *   2  Source.merged; Health.requalified and Health.retry_in_s; Source.credit (why credit
 *      does not grow, and the weight in force); Source.policy.scale null outside mode
 *      reduced; Source.estimate_bits null before the first estimate; Daemon.config, the
 *      configuration file in force; Source.backend the one in use.
 *   3  GetSources also lists, after the instances, each instance and each whole class
 *      (Source.name "*") that policy disables, with state "disabled by policy" and health
 *      "-"; Health.state "failed-permanent" named as such; Source.sampling (a network
 *      interface's sampling in the kernel: state, the share of packets kept, the estimated
 *      arrival rate); credit reason "sampled".
 *   4  Kernel.semantics, Kernel.semantics_evidence, Kernel.semantics_reason: how the kernel
 *      treats credit, read from the kernel rather than its version.
 *      Source.state an enum (open, sampled, not-open, waiting, refused, disabled, ended)
 *      with the human Source.detail beside it; Source.up, Source.retry_in_s and
 *      Source.retry (when one not open is tried again), also in Health.retry_in_s while it
 *      is retried; Health.state "-" while the instance is not open; Credit.reasons, every
 *      reason that holds (Credit.reason and detail are its first; new reasons not-open,
 *      waiting, refused, ended). Kernel.seed: how this boot's CRNG got seeded (CPU RNG
 *      and its trust, hardware RNG, bootloader) and what entropyd added, with a verdict.
 *   5  Reload returns notices: what was said about the file that loaded (keys that do not
 *      apply to their mode, ignored).
 *   6  GetStatus returns collector: the walls around the collector (its user, namespaces,
 *      read-only view, Landlock ABI, system call filter) and those missing, with why.
 *   7  Seed.initramfs: what entropyd in the initramfs did at this boot (its boot record);
 *      the verdict is that instance's where the CRNG was ready when this one started.
 *   8  GetSources also lists each name of the configuration that chooses what is read
 *      and matches nothing, state not-open; Reload's notices also hold what applying the
 *      file said (warnings, changes that wait for a restart); Totals.unsampled_completions
 *      (the block tracepoint's completions perf never wrote to a ring). */
#define CTL_PROTO_VERSION 8

#define CTL_DEFAULT_SOCKET "/run/entropyd/io.entropyd"

#define CTL_INTERFACE "io.entropyd"
#define CTL_SERVICE "org.varlink.service"

/* Limits: one request, one reply (a reply lists every instance, so it may be larger). */
#define CTL_MAX_REQUEST (64 * 1024)
#define CTL_MAX_REPLY (16 * 1024 * 1024)

/* Errors of io.entropyd, declared in its description. */
#define CTL_E_CONFIG_INVALID CTL_INTERFACE ".ConfigInvalid"
#define CTL_E_INVALID_REQUEST CTL_INTERFACE ".InvalidRequest"
#define CTL_E_REQUEST_TOO_LARGE CTL_INTERFACE ".RequestTooLarge"
#define CTL_E_TOO_MANY_CLIENTS CTL_INTERFACE ".TooManyClients"
/* Errors of org.varlink.service, which every Varlink service speaks. */
#define CTL_E_INTERFACE_NOT_FOUND CTL_SERVICE ".InterfaceNotFound"
#define CTL_E_METHOD_NOT_FOUND CTL_SERVICE ".MethodNotFound"
#define CTL_E_INVALID_PARAMETER CTL_SERVICE ".InvalidParameter"
#define CTL_E_PERMISSION_DENIED CTL_SERVICE ".PermissionDenied"

enum ctl_method {
	CTL_GET_INFO,
	CTL_GET_INTERFACE_DESCRIPTION,
	CTL_GET_STATUS,
	CTL_GET_SOURCES,
	CTL_RELOAD,
	CTL_METHOD_COUNT
};

/* One input parameter of a method. */
struct ctl_param {
	const char *name;    /* NULL ends a list */
	json_type type;      /* JSON_TRUE stands for either boolean */
	bool required;
};

struct ctl_method_desc {
	const char *name;               /* fully qualified: "io.entropyd.GetStatus" */
	const struct ctl_param *params; /* NULL: none */
	bool root_only;                 /* changes state: the peer must be uid 0 */
};

/* Indexed by enum ctl_method. */
extern const struct ctl_method_desc ctl_proto_methods[CTL_METHOD_COUNT];

/* The Varlink interface description of `interface` ("io.entropyd" or
 * "org.varlink.service"), or NULL if this service does not implement it. */
const char *ctl_proto_interface_description(const char *interface);
/* Every interface this service implements, NULL-terminated. */
extern const char *const ctl_proto_interfaces[];

/* Framing: a message is a JSON object followed by one NUL byte. */
enum ctl_proto_frame {
	CTL_FRAME_INCOMPLETE, /* no NUL yet, and fewer than limit bytes: read more */
	CTL_FRAME_COMPLETE,   /* *msg_len bytes, then the NUL */
	CTL_FRAME_TOO_LARGE,  /* no NUL within limit + 1 bytes: the stream cannot be trusted */
};
enum ctl_proto_frame ctl_proto_frame(const void *buf, size_t len, size_t limit, size_t *msg_len);

/* A call, parsed and checked in a fixed order: JSON, the shape of the object, the method,
 * the types of its parameters. Access is the server's to check. */
struct ctl_call {
	json_t *msg;       /* owned */
	enum ctl_method method;
	json_t *params;    /* borrowed from msg; an empty object if none were given */
	bool oneway, more;
};

/* Parse one message (without its NUL). 0 and *call filled, or -1 and *err set to the error
 * reply to send (the caller owns it; call->oneway says whether to send it at all). */
int ctl_proto_parse_call(const char *msg, size_t len, struct ctl_call *call, json_t **err);
void ctl_proto_call_free(struct ctl_call *call);

/* Messages. Each steals its params (NULL: none). */
json_t *ctl_proto_reply_new(json_t *params);
json_t *ctl_proto_error_new(const char *error, json_t *params);
json_t *ctl_proto_call_new(const char *method, json_t *params);
/* An error with one string parameter, e.g. InvalidParameter {"parameter": "interface"}. */
json_t *ctl_proto_error_str(const char *error, const char *key, const char *value);

/* msg as compact JSON and its NUL, malloc'd; *len counts the NUL. NULL if jansson fails. */
char *ctl_proto_encode(const json_t *msg, size_t *len);

/* A reply, as the client sees it. */
struct ctl_reply {
	json_t *msg;       /* owned */
	const char *error; /* the error name, or NULL on success */
	json_t *params;    /* borrowed; an empty object if none were given */
	bool continues;
};
/* 0 and *r filled, or -1 if the message is not a well-formed Varlink reply. */
int ctl_proto_parse_reply(const char *msg, size_t len, struct ctl_reply *r);
void ctl_proto_reply_free(struct ctl_reply *r);

/* A JSON number or null for a double jansson cannot hold (NaN, infinities). */
json_t *ctl_proto_real(double v);

/* jansson seeds its objects' hash from /dev/urandom when it makes its first object. Before
 * the kernel's CRNG is ready, reading /dev/urandom (or a getrandom() that may wait) starts
 * the kernel's own jitter entropy loop, which changes when the CRNG becomes ready: the
 * moment entropyd is there to bring forward and entropyctl reports on. So both programs
 * seed jansson themselves, before anything else uses it, and read no randomness for it.
 *
 * entropyctl: it parses only the replies of the daemon it asked, which runs as root and
 * builds them itself: nobody who could choose colliding keys (a hash flood) writes what it
 * parses. The clock and the pid are seed enough. */
void ctl_proto_json_seed_client(void);
/* entropyd: it parses requests from members of the control group, who could send keys that
 * all fall into one bucket if they knew the seed. The seed is SipHash-2-4 of the pid and the
 * clocks, keyed with the 16 bytes the kernel gives every program at exec (AT_RANDOM): drawn
 * from its CRNG without waiting and without starting the jitter loop, and readable by no
 * other process without ptrace rights over this one (/proc/PID/auxv). Through the PRF the
 * seed tells nothing about those bytes (glibc's stack canary and pointer guard come from
 * them too). Before the CRNG is ready they are only as unpredictable as the kernel's pool is
 * then; whatever the seed, a request is at most CTL_MAX_REQUEST bytes. */
void ctl_proto_json_seed_daemon(void);

#endif
