/* privlinked: what the privileged process runs after the fork (priv_start.c's parent: what it
 * does not keep dropped, then its loop), linked alone, so that the link map ld writes beside
 * it lists every file of src/ the privileged process can reach (check-layers.sh --linked:
 * make check-layers and t_layers.sh). Built, never run: it would serve a socket it has not. */
#include "autoconf.h"

#include <stdio.h>

#include "config.h"
#include "priv_drop.h"
#include "priv_serve.h"

int main(int argc, char **argv)
{
	(void)argv;
	if (argc >= 0) { /* always: the calls below are there for the linker */
		fprintf(stderr, "privlinked: for its link map only, never run\n");
		return 2;
	}
	priv_drop();
	return priv_serve(-1, config_defaults(), "/etc/entropyd.conf", -1, 0);
}
