/* uinput_dev: a virtual keyboard made through /dev/uinput, driven from a shell in the guest.
 *
 *   uinput_dev NAME < COMMANDS
 *   uinput_dev -R NODE        (see the end of this comment)
 *
 * Creates the device (letter keys, so entropyd classifies it as a keyboard), prints
 * "node eventN" once its event node exists, then reads commands from stdin, one a line:
 *   emit N    N reports (one key event and a SYN_REPORT each, keys down and up in turn,
 *             about 2 ms apart); prints "emitted N" when done
 *   destroy   (or end of input) destroys the device and exits 0
 * Any failure prints "error: ..." and exits 1.
 *
 * "uinput_dev -R /dev/input/eventN" pushes that device's autorepeat out to ten minutes
 * (EVIOCSREP), so a key held down longer than the usual 250 ms -- a host too busy to send
 * the release in time -- cannot add repeat reports to a count a test asserts exactly.
 *
 * Built statically for the guest initramfs. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/uinput.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static int fd = -1;

static void die(const char *what)
{
	printf("error: %s: %s\n", what, strerror(errno));
	fflush(stdout);
	exit(1);
}

static void put(unsigned type, unsigned code, int value)
{
	struct input_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = (unsigned short)type;
	ev.code = (unsigned short)code;
	ev.value = value;
	if (write(fd, &ev, sizeof(ev)) != (ssize_t)sizeof(ev))
		die("write");
}

/* The event node under /sys/devices/virtual/input/<sysname>/, which can take a moment. */
static void print_node(void)
{
	char sysname[64], dir[160];

	if (ioctl(fd, UI_GET_SYSNAME(sizeof(sysname)), sysname) < 0)
		die("UI_GET_SYSNAME");
	snprintf(dir, sizeof(dir), "/sys/devices/virtual/input/%s", sysname);
	for (int i = 0; i < 500; i++) {
		DIR *d = opendir(dir);
		struct dirent *de;

		while (d && (de = readdir(d)))
			if (strncmp(de->d_name, "event", 5) == 0) {
				char node[300];

				snprintf(node, sizeof(node), "/dev/input/%s", de->d_name);
				/* devtmpfs makes the node shortly after sysfs shows it. */
				if (access(node, F_OK) == 0) {
					printf("node %s\n", de->d_name);
					fflush(stdout);
					closedir(d);
					return;
				}
			}
		if (d)
			closedir(d);
		usleep(10000);
	}
	errno = ETIMEDOUT;
	die("no event node appeared");
}

int main(int argc, char **argv)
{
	struct uinput_setup us;
	char line[64];
	static const unsigned short keys[] = {KEY_A, KEY_S, KEY_D, KEY_F, KEY_J, KEY_K, KEY_L};

	if (argc == 3 && strcmp(argv[1], "-R") == 0) {
		unsigned int rep[2] = {600000, 600000}; /* delay, period (ms) */

		fd = open(argv[2], O_RDWR | O_CLOEXEC);
		if (fd < 0)
			die("open");
		if (ioctl(fd, EVIOCSREP, rep) < 0)
			die("EVIOCSREP");
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: uinput_dev NAME < COMMANDS | uinput_dev -R NODE\n");
		return 2;
	}
	fd = open("/dev/uinput", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		die("open /dev/uinput");
	if (ioctl(fd, UI_SET_EVBIT, EV_KEY) < 0 || ioctl(fd, UI_SET_EVBIT, EV_SYN) < 0)
		die("UI_SET_EVBIT");
	for (unsigned k = KEY_Q; k <= KEY_M; k++)
		if (ioctl(fd, UI_SET_KEYBIT, k) < 0)
			die("UI_SET_KEYBIT");
	memset(&us, 0, sizeof(us));
	us.id.bustype = BUS_USB; /* not BUS_VIRTUAL: the daemon must see through it by sysfs */
	us.id.vendor = 0x1d6b;
	us.id.product = 0x0104;
	snprintf(us.name, sizeof(us.name), "%s", argv[1]);
	if (ioctl(fd, UI_DEV_SETUP, &us) < 0)
		die("UI_DEV_SETUP");
	if (ioctl(fd, UI_DEV_CREATE) < 0)
		die("UI_DEV_CREATE");
	print_node();
	while (fgets(line, sizeof(line), stdin)) {
		unsigned long n;

		if (sscanf(line, "emit %lu", &n) == 1) {
			for (unsigned long i = 0; i < n; i++) {
				put(EV_KEY, keys[(i / 2) % (sizeof(keys) / sizeof(keys[0]))],
				    i % 2 == 0);
				put(EV_SYN, SYN_REPORT, 0);
				usleep(2000);
			}
			printf("emitted %lu\n", n);
			fflush(stdout);
		} else if (strncmp(line, "destroy", 7) == 0) {
			break;
		} else {
			printf("error: unknown command\n");
			fflush(stdout);
			return 1;
		}
	}
	if (ioctl(fd, UI_DEV_DESTROY) < 0)
		die("UI_DEV_DESTROY");
	close(fd);
	printf("destroyed\n");
	fflush(stdout);
	return 0;
}
