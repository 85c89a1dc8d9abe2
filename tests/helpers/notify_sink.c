/* notify_sink: a stand-in service manager socket. Binds a unix datagram socket at PATH and
 * prints every message it receives (newlines as " | ") until TIMEOUT seconds pass quietly. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char buf[4096];
	int fd, timeout_ms;

	if (argc != 3 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: notify_sink PATH TIMEOUT_SECONDS\n");
		return 2;
	}
	timeout_ms = atoi(argv[2]) * 1000;
	strcpy(sa.sun_path, argv[1]);
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("notify_sink");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&p, 1, timeout_ms) <= 0)
			break;
		n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n < 0)
			break;
		buf[n] = '\0';
		for (char *s = buf; *s; s++)
			if (*s == '\n')
				*s = '|';
		printf("%s\n", buf);
	}
	unlink(argv[1]);
	return 0;
}
