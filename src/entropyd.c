/* entropyd: command line, configuration check and print, and start of the daemon. */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"
#include "est_assess.h"
#include "kernel_boot.h"
#include "log.h"
#include "priv_drop.h"
#include "priv_notify.h"
#include "priv_trust.h"
#include "source_names.h"
#include "util.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: entropyd [OPTION]...\n"
		"Feed the kernel's random pool with the timing of hardware events, credited by\n"
		"policy after conservative per-source estimation.\n"
		"\n"
		"  -f, --config FILE  read FILE instead of %s\n"
		"  -n, --check        check the configuration, print \"configuration OK\" or every\n"
		"                     error, and exit (status 0 if valid, 1 if not)\n"
		"  -p, --print        print the effective configuration, defaults filled in\n"
		"  -F, --foreground   stay in the foreground and log to stderr\n"
		"  -d, --dry-run      do everything but feed the kernel; log what would be credited\n"
		"      --record DIR   record the symbols each instance's estimator sees, one\n"
		"                     byte each, in DIR/CLASS-NAME.bin (overrides record.dir)\n"
		"      --initramfs    this instance runs in the initramfs: leave what it did at\n"
		"                     this boot in the boot record, for the service's instance\n"
		"      --boot-record FILE\n"
		"                     the boot record, if not %s\n"
		"  -v, --verbose      log more (twice: debug)\n"
		"  -V, --version      print the version and exit\n"
		"  -h, --help         print this help and exit\n"
		"\n"
		"Assessment (runs no daemon, needs no privileges):\n"
		"  entropyd --assess FILE --bits N [--class CLASS [--instance NAME]] [--json]\n"
		"           [-f FILE]\n"
		"                     run NIST's SP 800-90B non-IID assessment over FILE (one\n"
		"                     sample per byte, the low N bits used, N = 1..8): its ten\n"
		"                     estimators over the samples and over their bits, and the\n"
		"                     assessed minimum; then what the policy of CLASS (input,\n"
		"                     block or network; default input) would credit per event.\n"
		"                     With --instance, that instance's override applies too.\n"
		"                     Warns below %d samples (SP 800-90B's minimum).\n"
		"\n"
		"Signals: SIGHUP reloads the configuration (an invalid one is rejected whole),\n"
		"SIGUSR1 logs per-source counters, SIGTERM and SIGINT flush and exit.\n"
		"Exit status: 0 success, 1 invalid configuration (--assess: a file that cannot be\n"
		"read, is empty or holds one sample), 2 usage error, 3 start-up failure, 4 one of\n"
		"its two processes went.\n"
		"See entropyd(8) and entropyd.conf(5).\n",
		CONFIG_DEFAULT_PATH, KBOOT_DEFAULT_PATH, ASSESS_MIN_SAMPLES);
}

/* Close every descriptor but 0-2 that the launcher left open (a shell's, a service
 * manager's, a debugger's): neither process may hold what it was not given on purpose, and
 * the collector would otherwise keep them, as another user, for as long as it runs. The
 * notification socket is an address (NOTIFY_SOCKET), not a descriptor. */
static void close_inherited(void)
{
	DIR *d;
	struct dirent *e;

#ifdef HAVE_CLOSE_RANGE
	if (close_range(3, ~0U, 0) == 0)
		return;
#endif
	/* Before Linux 5.9 (glibc 2.34): one by one. */
	d = opendir("/proc/self/fd");
	if (!d) {
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (fd > 2 && fd != dirfd(d))
			close(fd);
	}
	closedir(d);
}

/* Long-only options. */
enum {
	OPT_RECORD = 256,
	OPT_ASSESS,
	OPT_BITS,
	OPT_CLASS,
	OPT_INSTANCE,
	OPT_JSON,
	OPT_PRINT_KEYS, /* hidden: every key the parser accepts, for the man page test */
	OPT_INITRAMFS,
	OPT_BOOT_RECORD,
};

static const struct option long_opts[] = {
	{"config", required_argument, NULL, 'f'},
	{"check", no_argument, NULL, 'n'},
	{"print", no_argument, NULL, 'p'},
	{"foreground", no_argument, NULL, 'F'},
	{"dry-run", no_argument, NULL, 'd'},
	{"verbose", no_argument, NULL, 'v'},
	{"version", no_argument, NULL, 'V'},
	{"help", no_argument, NULL, 'h'},
	{"record", required_argument, NULL, OPT_RECORD},
	{"assess", required_argument, NULL, OPT_ASSESS},
	{"bits", required_argument, NULL, OPT_BITS},
	{"class", required_argument, NULL, OPT_CLASS},
	{"instance", required_argument, NULL, OPT_INSTANCE},
	{"json", no_argument, NULL, OPT_JSON},
	{"print-keys", no_argument, NULL, OPT_PRINT_KEYS},
	{"initramfs", no_argument, NULL, OPT_INITRAMFS},
	{"boot-record", required_argument, NULL, OPT_BOOT_RECORD},
	{NULL, 0, NULL, 0},
};

/* The default file may be absent (built-in defaults apply); a file named with -f may not.
 * With trust (the daemon, -n, -p), only a file root alone can change (priv_trust.h). When it
 * fails and first is not NULL, *first is the first error (to be freed). */
static struct config *load(const char *path, bool explicit_path, bool trust, char **first)
{
	struct config_errors errs = {0};
	struct config *cfg;
	char why[512];

	if (!explicit_path && access(path, F_OK) < 0 && errno == ENOENT) {
		log_notice("%s does not exist: using built-in defaults", path);
		return config_defaults();
	}
	/* Only root may be able to change what the privileged process trusts. */
	if (trust && !priv_trust_config(path, why, sizeof(why))) {
		fprintf(stderr, "%s\n%s: not trusted: only root may be able to write the "
				"configuration and what it includes\n", why, path);
		if (first)
			*first = xasprintf("%s: not trusted", path);
		return NULL;
	}
	cfg = config_load(path, &errs);
	for (size_t i = 0; i < errs.n_note; i++)
		fprintf(stderr, "%s\n", errs.note[i]);
	for (size_t i = 0; i < errs.n; i++)
		fprintf(stderr, "%s\n", errs.msg[i]);
	if (!cfg)
		fprintf(stderr, "%s: %zu %s\n", path, errs.n, util_plural(errs.n, "error", "errors"));
	if (!cfg && first)
		*first = xstrdup(errs.n ? errs.msg[0] : path);
	config_errors_free(&errs);
	return cfg;
}

/* entropyd -n: the socket's group must exist when the daemon starts, or only root (or the
 * group the service manager gives the socket) can use it. */
static void check_group(const struct config *cfg)
{
	struct group gr, *found = NULL;
	char buf[4096];
	int err = getgrnam_r(cfg->control.group, &gr, buf, sizeof(buf), &found);

	if (found)
		return;
	if (err)
		fprintf(stderr, "warning: control.group \"%s\": cannot look it up on this host: %s\n",
			cfg->control.group, strerror(err));
	else
		fprintf(stderr, "warning: control.group \"%s\" does not exist on this host: the "
				"control socket would keep the group it is made with (root's, or the "
				"unit's Group=), not this one (create it: groupadd --system %s)\n",
			cfg->control.group, cfg->control.group);
}

/* Detach, but let the parent exit only once the daemon has started (or failed), with its
 * status: start-up errors are not lost in the background. */
static int background(struct daemon_opts *opts)
{
	int fds[2];
	pid_t pid;
	unsigned char status = EXIT_STARTUP;

	if (pipe2(fds, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		perror("entropyd: cannot start in the background");
		return -1;
	}
	if (pid > 0) {
		close(fds[1]);
		if (read(fds[0], &status, 1) != 1)
			status = EXIT_STARTUP;
		if (status != EXIT_OK)
			fprintf(stderr, "entropyd: start-up failed (status %d); see the system log\n",
				status);
		_exit(status);
	}
	close(fds[0]);
	if (daemon(0, 0) < 0)
		return -1;
	opts->ready_fd = fds[1];
	return 0;
}

/* A usage error of the assessment or recording options: one line that names the problem. */
static int usage_error(const char *fmt, ...) PRINTF_LIKE(1, 2);
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("entropyd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry \"entropyd --help\".\n", stderr);
	return EXIT_USAGE;
}

/* --bits: an integer from 1 to 8, nothing else. */
static bool parse_bits(const char *s, unsigned *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > 8)
		return false;
	*out = (unsigned)v;
	return true;
}

/* entropyd --assess: everything is checked before the file is read; a bad option is a usage
 * error (2), a file that cannot be read is 1 (est_assess_run), like an invalid config. */
static int assess(const char *file, const char *bits_arg, const char *class_arg,
		  const char *instance, bool json, const char *config_path, bool explicit_path)
{
	struct assess_opts ao = {.file = file, .cls = CLASS_INPUT, .instance = instance,
				 .json = json};
	struct config *cfg;
	int rc, c;

	if (!*file)
		return usage_error("--assess: the file name is empty");
	if (!bits_arg)
		return usage_error("--assess needs --bits N: the bits per sample (1 to 8)");
	if (!parse_bits(bits_arg, &ao.bits))
		return usage_error("--bits: \"%s\" is not allowed; allowed: an integer from 1 to 8",
				   bits_arg);
	if (class_arg) {
		if ((c = source_class_from_name(class_arg)) < 0)
			return usage_error("--class: unknown class \"%s\"; allowed: input, block, "
					   "network", class_arg);
		ao.cls = (enum src_class)c;
	}
	if (instance && !*instance)
		return usage_error("--instance: the instance name is empty");
	if (instance && !class_arg)
		return usage_error("--instance needs --class: an instance name is only unique "
				   "within its class");
	cfg = load(config_path, explicit_path, false, NULL); /* runs nothing: anyone's file */
	if (!cfg)
		return EXIT_CONFIG;
	rc = est_assess_run(&ao, cfg, stdout, stderr);
	config_free(cfg);
	if (fflush(stdout) != 0 && rc == 0) {
		perror("entropyd: --assess: writing the report");
		rc = 1;
	}
	return rc;
}

/* --record DIR made absolute: the daemon leaves the current directory when it detaches. */
static char *absolute_dir(const char *dir)
{
	char *cwd, *abs;

	if (dir[0] == '/')
		return xstrdup(dir);
	cwd = getcwd(NULL, 0);
	if (!cwd)
		return NULL;
	abs = xasprintf("%s/%s", cwd, dir);
	free(cwd);
	return abs;
}

int main(int argc, char **argv)
{
	struct daemon_opts opts = {.config_path = CONFIG_DEFAULT_PATH, .ready_fd = -1,
				   .boot_record = KBOOT_DEFAULT_PATH};
	bool explicit_path = false, check = false, print = false, json = false;
	const char *assess_file = NULL, *bits_arg = NULL, *class_arg = NULL, *record_arg = NULL;
	const char *instance_arg = NULL;
	char *record_dir = NULL, *first_err = NULL;
	char why[512];
	struct config *cfg;
	uid_t uid;
	gid_t gid;
	int c, rc;

	while ((c = getopt_long(argc, argv, "f:npFdvVh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			opts.config_path = optarg;
			explicit_path = true;
			break;
		case 'n':
			check = true;
			break;
		case 'p':
			print = true;
			break;
		case 'F':
			opts.foreground = true;
			break;
		case 'd':
			opts.dry_run = true;
			break;
		case 'v':
			opts.verbosity++;
			break;
		case 'V':
			printf("entropyd %s\n", PACKAGE_VERSION);
			return EXIT_OK;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case OPT_RECORD:
			record_arg = optarg;
			break;
		case OPT_ASSESS:
			assess_file = optarg;
			break;
		case OPT_BITS:
			bits_arg = optarg;
			break;
		case OPT_CLASS:
			class_arg = optarg;
			break;
		case OPT_INSTANCE:
			instance_arg = optarg;
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_PRINT_KEYS:
			config_print_keys(stdout);
			return EXIT_OK;
		case OPT_INITRAMFS:
			opts.initramfs = true;
			break;
		case OPT_BOOT_RECORD:
			if (*optarg != '/')
				return usage_error("--boot-record: give an absolute path");
			opts.boot_record = optarg;
			break;
		default:
			/* getopt said what was wrong; the whole help would bury it. */
			fputs("Try \"entropyd --help\" for more information.\n", stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "entropyd: unexpected argument: %s\n"
				"Try \"entropyd --help\" for more information.\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (assess_file && (check || print || opts.foreground || opts.dry_run || record_arg))
		return usage_error("--assess runs no daemon: it does not go with -n, -p, -F, -d or "
				   "--record");
	if (!assess_file && (bits_arg || class_arg || instance_arg || json))
		return usage_error("--bits, --class, --instance and --json go with --assess FILE");
	if (record_arg && !*record_arg)
		return usage_error("--record: the directory name is empty");

	close_inherited();
	log_open(true, opts.verbosity);
	if (assess_file)
		return assess(assess_file, bits_arg, class_arg, instance_arg, json,
			      opts.config_path, explicit_path);
	if (record_arg) {
		record_dir = absolute_dir(record_arg);
		if (!record_dir) {
			perror("entropyd: --record: cannot find the current directory");
			return EXIT_STARTUP;
		}
		opts.record_dir = record_dir;
	}
	cfg = load(opts.config_path, explicit_path, true, &first_err);
	if (!cfg) {
		/* Under systemd this follows the errors into the journal and so into "systemctl
		 * status", and the first error is its Status: a restart stops the running daemon
		 * before this one reads the file. */
		if (!check && !print) {
			priv_notify_status("not started (any previous daemon was stopped); fix the file "
				      "and start again: %s", first_err);
			fprintf(stderr, "entropyd: not started: %s was refused (above); any previous "
					"daemon was stopped; fix the file and start again (check it with "
					"\"entropyd -n\" before a restart; a reload keeps the running "
					"daemon on an invalid file)\n",
				opts.config_path);
		}
		free(first_err);
		free(record_dir);
		return EXIT_CONFIG;
	}
	if (record_dir) {
		free(cfg->record.dir);
		cfg->record.dir = xstrdup(record_dir);
	}
	/* The collector never runs as root: without its user there is no start, and -n says so. */
	if (!print && !priv_drop_collector_user(cfg->collector.user, &uid, &gid, why, sizeof(why))) {
		if (check) {
			fprintf(stderr, "%s: collector.user: %s\n", opts.config_path, why);
		} else {
			priv_notify_status("not started: collector.user: %s", why);
			fprintf(stderr, "entropyd: not started: collector.user: %s\n", why);
		}
		config_free(cfg);
		free(record_dir);
		return check ? EXIT_CONFIG : EXIT_STARTUP;
	}
	if (check || print) {
		if (print) {
			config_print(cfg, stdout);
		} else {
			/* Valid all the same: a device may appear later, a group be made. */
			source_names_check_host(cfg, stderr);
			check_group(cfg);
			printf("configuration OK\n");
		}
		config_free(cfg);
		free(record_dir);
		return EXIT_OK;
	}
	if (!opts.foreground) {
		if (background(&opts) < 0) {
			config_free(cfg);
			free(record_dir);
			return EXIT_STARTUP;
		}
		log_open(false, opts.verbosity);
	}
	rc = daemon_run(&opts, cfg);
	free(record_dir);
	return rc;
}
