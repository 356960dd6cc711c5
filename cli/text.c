/* Number formatting (text.h). */
#include "config.h"
#include "cli/text.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

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
