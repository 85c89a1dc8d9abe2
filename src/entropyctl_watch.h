/* entropyctl_watch: `entropyctl watch`, the live view. */
#ifndef ENTROPYD_ENTROPYCTL_WATCH_H
#define ENTROPYD_ENTROPYCTL_WATCH_H

/* entropyctl watch: frames every `every` seconds until q, a signal, or the daemon goes. */
int cmd_watch(const char *path, double timeout, double every);

#endif
