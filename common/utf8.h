/* UTF-8, written once for every layer: the JSON writer (common/fmt.c)
 * replaces what is not well-formed, the TOML parser (config/toml.c) and the
 * CLI's JSON reader (cli/model/json.c) refuse it and encode \u escapes with it.
 * Well-formed is RFC 3629's: no overlong forms, no UTF-16 surrogates,
 * nothing above U+10FFFF.  Pure: AS-safe. */
#ifndef WSS_COMMON_UTF8_H
#define WSS_COMMON_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The length (1 to 4) of the well-formed sequence at s, which has n >= 1
 * bytes, or 0 when it is not well-formed or runs past n.  AS-safe. */
size_t wss_utf8_len(const unsigned char *s, size_t n);

/* Encodes cp (at most U+10FFFF) into out[0..3]; returns the byte count.
 * AS-safe. */
size_t wss_utf8_put(char *out, uint32_t cp);

#endif
