/* entropyd: command line, configuration check and print, and start of the daemon. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"
#include "log.h"

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
		"  -v, --verbose      log more (twice: debug)\n"
		"  -V, --version      print the version and exit\n"
		"  -h, --help         print this help and exit\n"
		"\n"
		"Signals: SIGHUP reloads the configuration (an invalid one is rejected whole),\n"
		"SIGUSR1 logs per-source counters, SIGTERM and SIGINT flush and exit.\n"
		"Exit status: 0 success, 1 invalid configuration, 2 usage error, 3 start-up failure.\n"
		"See entropyd(8) and entropyd.conf(5).\n",
		CONFIG_DEFAULT_PATH);
}

static const struct option long_opts[] = {
	{"config", required_argument, NULL, 'f'},
	{"check", no_argument, NULL, 'n'},
	{"print", no_argument, NULL, 'p'},
	{"foreground", no_argument, NULL, 'F'},
	{"dry-run", no_argument, NULL, 'd'},
	{"verbose", no_argument, NULL, 'v'},
	{"version", no_argument, NULL, 'V'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

/* The default file may be absent (built-in defaults apply); a file named with -f may not. */
static struct config *load(const char *path, bool explicit_path)
{
	struct config_errors errs = {0};
	struct config *cfg;

	if (!explicit_path && access(path, F_OK) < 0 && errno == ENOENT) {
		log_notice("%s does not exist: using built-in defaults", path);
		return config_defaults();
	}
	cfg = config_load(path, &errs);
	for (size_t i = 0; i < errs.n; i++)
		fprintf(stderr, "%s\n", errs.msg[i]);
	if (!cfg)
		fprintf(stderr, "%s: %zu error%s\n", path, errs.n, errs.n == 1 ? "" : "s");
	config_errors_free(&errs);
	return cfg;
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

int main(int argc, char **argv)
{
	struct daemon_opts opts = {.config_path = CONFIG_DEFAULT_PATH, .ready_fd = -1};
	bool explicit_path = false, check = false, print = false;
	struct config *cfg;
	int c;

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
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "entropyd: unexpected argument: %s\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}

	log_open(true, opts.verbosity);
	cfg = load(opts.config_path, explicit_path);
	if (!cfg)
		return EXIT_CONFIG;
	if (check || print) {
		if (print)
			config_print(cfg, stdout);
		else
			printf("configuration OK\n");
		config_free(cfg);
		return EXIT_OK;
	}
	if (!opts.foreground) {
		if (background(&opts) < 0) {
			config_free(cfg);
			return EXIT_STARTUP;
		}
		log_open(false, opts.verbosity);
	}
	return daemon_run(&opts, cfg);
}
