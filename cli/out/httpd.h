/* A one-page HTTP/1.1 server for wss's live metrics (cli/out/metrics.c): a
 * listening socket on an address a user gives, and one answer per
 * connection, GET or HEAD of one path (and "/"), the connection closed
 * after it.  Blocking, one client at a time: a scraper's load. */
#ifndef WSS_CLI_HTTPD_H
#define WSS_CLI_HTTPD_H

#include <stddef.h>

/* Listens on addr: "PORT", ":PORT", "HOST:PORT" or "[V6]:PORT", HOST
 * 127.0.0.1 unless given (binding elsewhere must be asked for), PORT 0 a
 * free one.  Returns the non-blocking socket with its "http://HOST:PORT"
 * in url, or -1 with one line "wss: FLAG: ADDR: why" on stderr. */
int wss_httpd_listen(const char *addr, const char *flag, char *url, size_t n);

/* Answers one connection waiting on listen_fd: GET or HEAD of served (or
 * "/") gets body's malloc'd bytes, of the content type it sets, given the
 * request's Accept header (NULL: none); another path 404, another method
 * 405. */
void wss_httpd_answer(int listen_fd, const char *served,
		      char *(*body)(void *arg, const char *accept, const char **type, size_t *len), void *arg);

#endif
