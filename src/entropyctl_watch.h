/* entropyctl_watch: `entropyctl watch`, the live view. */
#ifndef ENTROPYD_ENTROPYCTL_WATCH_H
#define ENTROPYD_ENTROPYCTL_WATCH_H

/* entropyctl watch: frames every `every` seconds until q or a signal; while the daemon is
 * not running, a frame that says so. Ends early only where waiting cannot help (no
 * permission, a path that is not a socket). */
int entropyctl_watch_cmd(const char *path, double timeout, double every);

#endif
