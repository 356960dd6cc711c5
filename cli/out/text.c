/* Number formatting and output errors (text.h). */
#include "config.h"
#include "cli/out/text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *wss_text_grouped(char *buf, size_t n, uint64_t v)
{
	char d[24];
	int len = snprintf(d, sizeof d, "%" PRIu64, v), o = 0;
	for (int k = 0; k < len && (size_t)o + 2 < n; k++) {
		if (k && (len - k) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = d[k];
	}
	buf[o] = '\0';
	return buf;
}

const char *wss_text_shortest(char *buf, size_t n, double v)
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, n, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return buf;
}

void wss_text_output_error(const char *path, int err)
{
	if (err == ENOENT || err == ENOTDIR) {
		const char *slash = strrchr(path, '/');
		int dl = slash ? (int)(slash - path) : 1;
		fprintf(stderr, "wss: %s: cannot write it: the directory %.*s does not exist\n", path, dl ? dl : 1,
			slash ? path : ".");
	} else {
		fprintf(stderr, "wss: %s: cannot write it: %s\n", path, strerror(err));
	}
}
