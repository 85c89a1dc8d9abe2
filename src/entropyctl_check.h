/* entropyctl_check: `entropyctl check`, one line and the exit status of the monitoring-plugin
 * convention: is entropyd doing what matters on this machine? */
#ifndef ENTROPYD_ENTROPYCTL_CHECK_H
#define ENTROPYD_ENTROPYCTL_CHECK_H

#include <jansson.h>
#include <stddef.h>

/* The exit statuses of monitoring plugins (Nagios, Icinga, Zabbix's, Sensu's). */
enum check_state {
	CHECK_OK = 0,
	CHECK_WARNING = 1,
	CHECK_CRITICAL = 2,
	CHECK_UNKNOWN = 3,
};

/* While credit counts and the CRNG is not ready: a warning from this many seconds after
 * entropyd started, critical from that many. */
struct check_limits {
	double warning_s, critical_s;
};
#define CHECK_WARNING_S 30.0
#define CHECK_CRITICAL_S 120.0

/* "OK", "WARNING", "CRITICAL", "UNKNOWN". */
const char *entropyctl_check_state_name(enum check_state s);

/* The verdict on a daemon's GetStatus and GetSources replies, and in line (at most size
 * bytes) what decided it, the worst first, then the counts and the CRNG's state, then the
 * performance data after " | ". */
enum check_state entropyctl_check_judge(const json_t *status, const json_t *sources,
			     const struct check_limits *lim, char *line, size_t size);

/* entropyctl check: the line on stdout ("ENTROPYD OK: ..."), the state as the exit status. */
int entropyctl_check_cmd(const char *path, double timeout, const struct check_limits *lim);

#endif
