/* Number formatting shared by the command's reports (report.c) and
 * analyses (analyses*.c): thousands grouped for people, and doubles in
 * their shortest exact form for JSON. */
#ifndef WSS_CLI_TEXT_H
#define WSS_CLI_TEXT_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

/* v with thousands separated by commas ("12,340") into buf; returns buf. */
const char *wss_text_grouped(char *buf, size_t n, uint64_t v);

/* The shortest decimal (%.Ng, N = 1..17) that reads back as v, into buf;
 * returns buf. */
const char *wss_text_shortest(char *buf, size_t n, double v);

/* "wss: PATH: cannot write it: REASON" on stderr, for an output that
 * cannot be created: a missing directory is named as such (a bare "No
 * such file or directory" reads like a missing input). */
void wss_text_output_error(const char *path, int err);

#endif
