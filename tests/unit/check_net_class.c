/* check_net_class: the network class as the configuration and the status see it
 * (net_class.c): its policy and defaults, what each key of sources.network and of its
 * instances says of a wrong value, a BPF filter that does not compile for Ethernet refused
 * with its line, and which instance's capture settings an interface gets. */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "est.h"
#include "net_class.h"
#include "source_class.h"
#include "testutil.h"
#include "util.h"

/* An observer on the path sees and can set packet timing: reduced, and capped low. */
START_TEST(test_policy_and_defaults)
{
	struct config *cfg = config_defaults();

	ck_assert_ptr_eq(source_class_all[CLASS_NETWORK], &net_class);
	ck_assert_str_eq(net_class.name, "network");
	ck_assert_str_eq(net_class.instance_noun, "interface");
	ck_assert_int_eq(net_class.policy.mode, MODE_REDUCED);
	ck_assert(net_class.policy.cap_bits_per_event == 0.5);
	ck_assert(net_class.policy.cap_bits_per_second == 32);
	ck_assert_int_eq(cfg->policy[CLASS_NETWORK].rule.mode, MODE_REDUCED);
	ck_assert(cfg->policy[CLASS_NETWORK].rule.scale > 0 &&
		  cfg->policy[CLASS_NETWORK].rule.scale < 1);
	/* a poll stamps one packet every 2 to 3 us: one timing event */
	ck_assert_uint_eq(net_class.batch_ns, 4000);
	ck_assert_str_eq(source_class_backend(cfg, CLASS_NETWORK), "pcap");
	ck_assert_int_eq(cfg->network.max_events_per_second, 10000);
	ck_assert(source_class_estimate_interval(cfg, CLASS_NETWORK) == 60);
	config_free(cfg);
}
END_TEST

/* Each wrong value named, with what is allowed. */
static const struct {
	const char *network, *said;
} bad[] = {
	{"snaplen = 70000;", "sources.network.snaplen: 70000 is out of range; allowed: an integer "
			     "from 16 to 65535 bytes"},
	{"snaplen = 15;", "sources.network.snaplen: 15 is out of range; allowed: an integer from "
			  "16 to 65535 bytes"},
	{"direction = \"sideways\";", "sources.network.direction: unknown value \"sideways\"; "
				      "allowed: \"in\", \"out\", \"both\""},
	{"interfaces = [];", "sources.network.interfaces: the list is empty; allowed: [ \"auto\" ], "
			     "or a non-empty list of names or globs, e.g. [ \"eth0\", \"wlan*\" ]"},
	{"interfaces = [ \"auto\", \"eth0\" ];",
	 "sources.network.interfaces: \"auto\" mixed with names; allowed: [ \"auto\" ], or a "
	 "non-empty list of names or globs, e.g. [ \"eth0\", \"wlan*\" ]"},
	{"max_events_per_second = 0;", "sources.network.max_events_per_second: 0 is out of range; "
				       "allowed: an integer from 1 to 100000000 packets/s"},
	{"file = 3;", "sources.network.file: wrong type (an integer); allowed: a string"},
	{"quantum_ns = 0;", "sources.network.quantum_ns: 0 is out of range; allowed: an integer "
			    "from 1 to 1000000000 ns"},
	{"estimate_interval = 4000;", "sources.network.estimate_interval: 4000 is out of range; "
				      "allowed: a number from 1 to 3600 seconds"},
	{"colour = 1;", "sources.network.colour: unknown key; allowed: interfaces, direction, "
			"filter, snaplen, file, quantum_ns, estimate_interval, health_retry, "
			"max_events_per_second, instances"},
	{"instances = ( { name = \"eth0\"; direction = \"out\"; }, { name = \"eth0\"; } );",
	 "sources.network.instances[1].name: duplicate instance \"eth0\" (first at line 1); "
	 "allowed: each name once in a list"},
	{"instances = ( { name = \"eth0\"; snaplen = 8; } );",
	 "sources.network.instances[0].snaplen: 8 is out of range; allowed: an integer from 16 to "
	 "65535 bytes"},
};

START_TEST(test_bad)
{
	char *text = xasprintf("sources = { network = { %s }; };\n", bad[_i].network);

	tu_assert_config_says(text, bad[_i].said);
	free(text);
}
END_TEST

/* A filter is compiled as the file is read, for the class and for each instance: one that
 * does not compile for Ethernet is an error at its key, with libpcap's reason (whose words
 * are libpcap's: only its presence is asserted). */
static const struct {
	const char *network, *key, *filter;
} bad_filter[] = {
	{"filter = \"udp port\";", "sources.network.filter", "udp port"},
	{"filter = \"tcp[0:4] = 1 and\";", "sources.network.filter", "tcp[0:4] = 1 and"},
	{"filter = \"wlan type data\";", "sources.network.filter", "wlan type data"},
	{"instances = ( { name = \"eth0\"; }, { name = \"eth*\"; filter = \"nope nope\"; } );",
	 "sources.network.instances[1].filter", "nope nope"},
};

START_TEST(test_bad_filter)
{
	char *text = xasprintf("sources = { network = {\n %s }; };\n", bad_filter[_i].network);
	char *said = tu_config_errors(text);
	char *head = xasprintf("%s: \"%s\" does not compile: ", bad_filter[_i].key,
			       bad_filter[_i].filter);
	const char *tail = "; allowed: an expression in the syntax of pcap-filter(7), or \"\"";
	size_t n;

	ck_assert_msg(said != NULL, "accepted: %s", text);
	ck_assert_msg(!strchr(said, '\n'), "more than one error: %s", said);
	n = strlen(said);
	ck_assert_msg(strncmp(said, head, strlen(head)) == 0, "said: %s", said);
	/* libpcap's reason, then what is allowed */
	ck_assert_msg(n > strlen(head) + strlen(tail) &&
			      strcmp(said + n - strlen(tail), tail) == 0,
		      "said: %s", said);
	free(head);
	free(said);
	free(text);
}
END_TEST

/* What compiles, at the snaplen given, and what does not, with libpcap's reason; the
 * reason's buffer is left alone when there is none. */
START_TEST(test_filter_compiles)
{
	static const struct {
		const char *filter;
		int snaplen;
		bool ok;
	} t[] = {
		{NULL, 64, true},
		{"", 64, true},
		{"udp", 64, true},
		{"vlan and udp", 16, true},
		{"ip6 and tcp port 22", 65535, true},
		{"not (src net 10.0.0.0/8) and inbound", 0, true},
		{"udp port", 64, false},
		{"udp port 70000", 64, false},
		{"wlan type data", 64, false}, /* 802.11 only: not for Ethernet */
		{"host", 64, false},
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		char err[256] = "untouched";
		bool ok = net_class_filter_compiles(t[i].filter, t[i].snaplen, err, sizeof(err));

		ck_assert_msg(ok == t[i].ok, "\"%s\": %s", t[i].filter ? t[i].filter : "(null)",
			      ok ? "compiles" : err);
		if (ok)
			ck_assert_str_eq(err, "untouched");
		else
			ck_assert_msg(err[0] && strcmp(err, "untouched") != 0, "\"%s\": no reason",
				      t[i].filter);
	}
}
END_TEST

/* An interface gets the first instance whose glob it matches, in the file's order, with
 * what that instance does not give inherited from the class; else the class's own. */
START_TEST(test_capture_config)
{
	struct config_errors errs = {0};
	struct config *cfg;
	static const struct {
		const char *ifname;
		int which; /* the instance, -1: the class */
		enum net_direction direction;
		const char *filter;
		int snaplen;
	} t[] = {
		{"eth0", 0, DIR_BOTH, "tcp", 128},
		{"eth1", 1, DIR_OUT, "udp", 128},
		{"eth", 1, DIR_OUT, "udp", 128},
		{"wlan0", -1, DIR_BOTH, "udp", 128},
		{"veth0", -1, DIR_BOTH, "udp", 128},
		{"", -1, DIR_BOTH, "udp", 128},
	};

	cfg = tu_config_text(
		"sources = { network = { direction = \"both\"; filter = \"udp\"; snaplen = 128;\n"
		"  instances = ( { name = \"eth0\"; filter = \"tcp\"; },\n"
		"                { name = \"eth*\"; direction = \"out\"; } ); }; };\n",
		&errs, NULL);
	ck_assert_msg(cfg != NULL, "%s", errs.n ? errs.msg[0] : "?");
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		const struct net_capture *c = net_class_capture_config(cfg, t[i].ifname);
		const struct net_capture *want = t[i].which < 0
							 ? &cfg->network.capture
							 : &cfg->network.instances[t[i].which].cap;

		ck_assert_msg(c == want, "\"%s\": not the capture settings of %d", t[i].ifname,
			      t[i].which);
		ck_assert_int_eq(c->direction, t[i].direction);
		ck_assert_str_eq(c->filter, t[i].filter);
		ck_assert_int_eq(c->snaplen, t[i].snaplen);
	}
	config_free(cfg);
	config_errors_free(&errs);
}
END_TEST

static Suite *net_class_suite(void)
{
	Suite *s = suite_create("net_class");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_policy_and_defaults);
	tcase_add_loop_test(tc, test_bad, 0, ARRAY_SIZE(bad));
	tcase_add_loop_test(tc, test_bad_filter, 0, ARRAY_SIZE(bad_filter));
	tcase_add_test(tc, test_filter_compiles);
	tcase_add_test(tc, test_capture_config);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(net_class_suite());
}
