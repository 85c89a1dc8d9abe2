/* config_include: the files libconfig opens for a configuration's @include lines. */
#ifndef ENTROPYD_CONFIG_INCLUDE_H
#define ENTROPYD_CONFIG_INCLUDE_H

#include <stdbool.h>

/* The directory libconfig resolves path's @include names in, for included files too: the
 * one path is in ("/" for "/x", "." for a bare name). To be freed. */
char *config_include_dir(const char *path);

/* Call each(file, arg) for every file libconfig opens for an @include while it reads path,
 * nested ones too, in its order and before it opens it, as libconfig names it (beside
 * config_include_dir(path); a name with glob characters is that name), whatever the length of
 * its line. With libconfig 1.7 or later these are the names its include hook is given; before
 * it (Debian 12's 1.5, which has no hook) they are found by libconfig's own scanner rules
 * (comments, strings across lines, escapes, a line start), so a file after a syntax error may
 * be named though libconfig stops before it: never fewer. A file that cannot be opened is named
 * and ends the walk, as it ends libconfig's reading. False as soon as each returns false; true
 * otherwise, a file that cannot be read or parsed too (config_load says why). */
bool config_include_each(const char *path, bool (*each)(const char *file, void *arg), void *arg);

#endif
