/* unix_listen PATH: a unix stream socket listening at PATH, mode 0600 (root's alone), until
 * killed: the root-only socket a compromised collector tries to connect to in the guest,
 * which has no other program to make one. Prints "listening" once it does. Exit status 2
 * on any error. Built statically for the guest initramfs. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (argc != 2 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fputs("usage: unix_listen PATH\n", stderr);
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(argv[1], 0600) < 0 ||
	    listen(fd, 1) < 0) {
		printf("error: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	printf("listening\n");
	fflush(stdout);
	for (;;)
		pause();
}
