/* net_class: what the network class checks of its configuration, for its description
 * and its driver alike. */
#ifndef ENTROPYD_NET_CLASS_H
#define ENTROPYD_NET_CLASS_H

#include <stdbool.h>
#include <stddef.h>

/* Does a BPF filter ("" or NULL: none) compile for Ethernet at this snaplen? If not, false
 * with libpcap's reason in err. So that a bad filter is a configuration error with its file
 * and line, and not only when a capture opens. */
bool net_class_filter_compiles(const char *filter, int snaplen, char *err, size_t size);

#endif
