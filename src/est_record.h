/* est_record: per-instance files of the exact symbols an estimator sees, for offline assessment. */
#ifndef ENTROPYD_EST_RECORD_H
#define ENTROPYD_EST_RECORD_H

#include <stdbool.h>
#include <stdint.h>

/*
 * One file per instance, DIR/CLASS-NAME.bin, one byte per symbol: the input format of NIST's
 * ea_non_iid. NAME is sanitised (every byte but [A-Za-z0-9._-] becomes '_'). Only symbols
 * (timing-derived bytes) are ever written, never input contents.
 *
 * The file is created 0600 and truncated when the daemon first opens it; an instance that
 * comes back later in the same run (a device plugged in again) appends to it. The file as a
 * whole is bounded by max_bytes: at the bound, recording of that instance stops, with one
 * log line. A write error also stops it, logged (rate-limited); nothing here is fatal.
 */

#define RECORD_MIN_BYTES 4096ULL
#define RECORD_MAX_BYTES 1073741824ULL

struct recorder;

/*
 * Start recording instance NAME of class CLS into DIR, which must be absolute; the last
 * component is created (0700) if missing. Returns NULL if dir is NULL or empty (recording
 * is off) or if the file cannot be used (logged): a symbolic link, not a regular file, a
 * file with other links or another owner, one another open recorder already writes, or one
 * that reached its bound earlier in this run.
 */
struct recorder *est_record_open(const char *dir, const char *cls, const char *name,
			     uint64_t max_bytes);

struct event_base;

/* Flush on a timer of base's: what is buffered reaches its file within 2 s, however slowly
 * symbols come. Without it (NULL, the default) a file is written in 4 KiB steps and at
 * close. */
void est_record_flush_on(struct event_base *base);

/* Append one symbol (buffered). NULL, or a recorder that has stopped, ignores it. */
void est_record_symbol(struct recorder *r, uint8_t sym);

/* Flush and close; NULL is ignored. */
void est_record_close(struct recorder *r);

/* Still recording (not stopped by the bound or an error)? False for NULL. */
bool est_record_active(const struct recorder *r);

/* Bytes in the file so far, buffered ones included. 0 for NULL. */
uint64_t est_record_bytes(const struct recorder *r);

/* "CLS-NAME.bin" with both sanitised, as est_record_open names the file. Free with free(). */
char *est_record_file_name(const char *cls, const char *name);

/* Forget which files this run has opened (the next open truncates again) and free that
 * memory, and the timer of est_record_flush_on. Recorders still open are unaffected. */
void est_record_fini(void);

#endif
