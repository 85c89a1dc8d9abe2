/* dirracer: a local user racing root for a directory root makes on someone's behalf
 * (tests/integration/t_record.sh). As UID, COUNT rounds at most: remove DIR/NAME if it is a
 * directory root just made (possible where DIR is the user's) and put a link to TARGET in its
 * place at once; otherwise, in turn, take the link away (so that root's next mkdir can go
 * through) and put it there before root makes the directory. It stops early once STOPFILE exists (checked every 1,024
 * rounds), and prints what it did: "rounds R, directories taken D, links made L". */
#include "autoconf.h"

#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned long count, rounds, taken = 0, links = 0;
	char path[4096];
	uid_t uid;

	if (argc != 7) {
		fprintf(stderr, "usage: dirracer UID DIR NAME TARGET COUNT STOPFILE\n");
		return 2;
	}
	uid = (uid_t)strtoul(argv[1], NULL, 10);
	count = strtoul(argv[5], NULL, 10);
	if (snprintf(path, sizeof(path), "%s/%s", argv[2], argv[3]) >= (int)sizeof(path)) {
		fprintf(stderr, "dirracer: %s/%s: too long\n", argv[2], argv[3]);
		return 2;
	}
	if (setgroups(0, NULL) < 0 || setgid(uid) < 0 || setuid(uid) < 0 || getuid() != uid) {
		perror("dirracer: cannot become the user");
		return 2;
	}
	for (rounds = 0; rounds < count; rounds++) {
		if ((rounds & 1023) == 0 && access(argv[6], F_OK) == 0)
			break;
		if (rmdir(path) == 0) {
			taken++;
			links += symlink(argv[4], path) == 0;
		} else if (rounds % 4 == 0) {
			(void)unlink(path);
		} else if (rounds % 4 == 2) {
			links += symlink(argv[4], path) == 0;
		}
	}
	printf("rounds %lu, directories taken %lu, links made %lu\n", rounds, taken, links);
	return 0;
}
