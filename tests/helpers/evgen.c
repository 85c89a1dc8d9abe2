/* evgen: writes frames of struct input_event (a key event and a SYN_REPORT each) to stdout,
 * with timestamps in a chosen pattern, for replay tests of the input source. */
#include <linux/input.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(void)
{
	fprintf(stderr, "usage: evgen [-n FRAMES] [-p alt|periodic|random] [-g US] [-s START_SEC] "
			"[-k CODE] [-x VALUE] [-r SEED] [-d]\n"
			"  alt: intervals of 1000 and 1100 us in turn; periodic: exactly 1000 us\n"
			"  (-g: US instead);\n"
			"  random: 500..5499 us from SEED; loop: 256 random intervals, repeated;\n"
			"  -d adds a SYN_DROPPED before each frame. The span in us goes to stderr.\n");
	exit(2);
}

static int put(FILE *out, unsigned long long t_us, unsigned type, unsigned code, int value)
{
	struct input_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.input_event_sec = (long)(t_us / 1000000);
	ev.input_event_usec = (long)(t_us % 1000000);
	ev.type = (unsigned short)type;
	ev.code = (unsigned short)code;
	ev.value = value;
	return fwrite(&ev, sizeof(ev), 1, out) == 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
	unsigned long n = 100, seed = 1;
	unsigned long long t_us = 1000000, start_us, loop[256], period_us = 1000;
	const char *pattern = "alt";
	unsigned code = KEY_A;
	int value = 1, c, dropped = 0;

	while ((c = getopt(argc, argv, "n:p:g:s:k:x:r:d")) != -1) {
		switch (c) {
		case 'n': n = strtoul(optarg, NULL, 0); break;
		case 'g': period_us = strtoull(optarg, NULL, 0); break;
		case 'p': pattern = optarg; break;
		case 's': t_us = strtoull(optarg, NULL, 0) * 1000000ULL; break;
		case 'k': code = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'x': value = (int)strtol(optarg, NULL, 0); break;
		case 'r': seed = strtoul(optarg, NULL, 0); break;
		case 'd': dropped = 1; break;
		default: usage();
		}
	}
	if (strcmp(pattern, "alt") && strcmp(pattern, "periodic") && strcmp(pattern, "random") &&
	    strcmp(pattern, "loop"))
		usage();
	srandom((unsigned)seed);
	for (int i = 0; i < 256; i++)
		loop[i] = 500 + (unsigned long long)(random() % 5000);
	start_us = t_us;
	for (unsigned long i = 0; i < n; i++) {
		if (!strcmp(pattern, "alt"))
			t_us += (i % 2) ? 1100 : 1000;
		else if (!strcmp(pattern, "periodic"))
			t_us += period_us;
		else if (!strcmp(pattern, "loop"))
			t_us += loop[i % 256];
		else
			t_us += 500 + (unsigned long long)(random() % 5000);
		if ((dropped && put(stdout, t_us, EV_SYN, SYN_DROPPED, 0) < 0) ||
		    put(stdout, t_us, EV_KEY, code, value) < 0 ||
		    put(stdout, t_us, EV_SYN, SYN_REPORT, 0) < 0) {
			perror("evgen: write");
			return 1;
		}
	}
	fprintf(stderr, "span_us=%llu\n", t_us - start_us);
	return fflush(stdout) == 0 ? 0 : 1;
}
