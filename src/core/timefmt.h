/* timefmt.h - the time formats of the JSON contract and of messages. */
#ifndef PCTL_CORE_TIMEFMT_H
#define PCTL_CORE_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>

#define PCTL_TIME_BUF 64

/* RFC 3339 UTC with milliseconds: "2026-11-21T14:03:05.123Z".  Can't
 * fail (buf holds at least PCTL_TIME_BUF bytes). */
void pctl_time_rfc3339(char *buf, int64_t ms);

/* Parses RFC 3339 ("2026-11-21T14:03:05Z", optional fraction, "Z" or
 * "+hh:mm") into milliseconds since the epoch.  Returns 0 or
 * PLANCTL_EINVAL. */
int pctl_time_parse(int64_t *out, const char *s);

/*
 * Reads a time as planctl prints it or a person writes it, into
 * milliseconds since the epoch:
 *   2026-11-21T14:03:05.123Z, 2026-11-21T15:03:05+01:00  (RFC 3339)
 *   2026-11-21 14:03:05, 2026-11-21 14:03, 2026-11-21   (text output)
 *   2026-11-21 14:03:05 UTC, ... +0100, ... CET          (with a zone)
 * A time without a zone, or with the local zone's abbreviation, is local
 * (TZ), as text output shows times.  With now_ms also: "now", a time of
 * today "14:03:05" (as messages print it), and a time before now as a
 * duration ("2h", "1d12h") or with " ago" ("2h ago").  Returns 0 or
 * PLANCTL_EINVAL.
 */
int pctl_time_read(int64_t *out, const char *s, const int64_t *now_ms);

/* Local wall-clock time for messages: "14:03:05" when ms falls on the same
 * local day as now_ms, else "2026-11-20 14:03:05".  Can't fail. */
void pctl_time_local_short(char *buf, int64_t ms, int64_t now_ms);

#endif
