/* The profile's path pattern (session.output). */
#ifndef WSS_COMMON_PATTERN_H
#define WSS_COMMON_PATTERN_H

#include <stddef.h>
#include <stdint.h>

/* The longest pattern, and the longest expansion the engine prepares for. */
#define WSS_OUTPUT_MAX 1024

/* Expand the output pattern: %p pid, %t start time as UTC YYYYMMDD-HHMMSS
 * (from start_unix_s), %n program name (basename), %% a percent sign.
 * Returns 0, ENAMETOOLONG, or EINVAL for an unknown %x.  AS-safe. */
int wss_output_expand(const char *pattern, int pid, uint64_t start_unix_s, const char *prog, char *out,
		      size_t outlen);

/* The session directory of the profile at path (docs/config.md,
 * session.output): path without a final ".jsonl", plus ".d"
 * (wss.4242.jsonl: wss.4242.d).  Returns 0 or ENAMETOOLONG.  AS-safe. */
int wss_output_session_dir(const char *path, char *out, size_t outlen);

#endif
