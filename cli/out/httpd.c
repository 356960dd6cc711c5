/* The one-page HTTP server (httpd.h). */
#include "config.h"
#include "cli/out/httpd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* "PORT", ":PORT", "HOST:PORT", "[V6]:PORT" into host (127.0.0.1 when
 * none is given) and port.  Returns false when malformed. */
static bool split_addr(const char *addr, char *host, size_t hn, char *port, size_t pn)
{
	const char *colon = strrchr(addr, ':');
	const char *p = colon ? colon + 1 : addr;
	if (!*p || strspn(p, "0123456789") != strlen(p) || strlen(p) > 5 || atoi(p) > 65535)
		return false;
	snprintf(port, pn, "%s", p);
	size_t hl = colon ? (size_t)(colon - addr) : 0;
	if (hl >= 2 && addr[0] == '[' && addr[hl - 1] == ']') {
		addr++;
		hl -= 2;
	}
	if (hl >= hn)
		return false;
	if (!hl)
		snprintf(host, hn, "127.0.0.1");
	else {
		memcpy(host, addr, hl);
		host[hl] = '\0';
	}
	return true;
}

int wss_httpd_listen(const char *addr, const char *flag, char *url, size_t n)
{
	char host[256], port[8];
	if (!split_addr(addr, host, sizeof host, port, sizeof port)) {
		fprintf(stderr, "wss: %s: %s: not an address (PORT, HOST:PORT or [V6]:PORT, e.g. 9464 or 127.0.0.1:9464)\n",
			flag, addr);
		return -1;
	}
	struct addrinfo hints = {.ai_flags = AI_PASSIVE | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM}, *ai;
	int r = getaddrinfo(host, port, &hints, &ai);
	if (r) {
		fprintf(stderr, "wss: %s: %s: %s\n", flag, addr, gai_strerror(r));
		return -1;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 16)) {
		fprintf(stderr, "wss: %s: %s: %s\n", flag, addr, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		return -1;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char h[INET6_ADDRSTRLEN] = "?", p[8] = "?";
	if (!getsockname(fd, (struct sockaddr *)&ss, &sl))
		getnameinfo((struct sockaddr *)&ss, sl, h, sizeof h, p, sizeof p, NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(url, n, "http://%s%s%s:%s", strchr(h, ':') ? "[" : "", h, strchr(h, ':') ? "]" : "", p);
	return fd;
}

static void reply(int c, const char *status, const char *type, const char *body, size_t len, bool head)
{
	char hdr[256];
	int n = snprintf(hdr, sizeof hdr,
			 "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", status,
			 type, len);
	if (write(c, hdr, (size_t)n) == n && !head)
		for (size_t o = 0; o < len;) {
			ssize_t w = write(c, body + o, len - o);
			if (w <= 0)
				break;
			o += (size_t)w;
		}
}

/* The value of the request's header name (lower case, with its colon),
 * cut at its line's end in req; NULL when absent. */
static const char *header(char *req, const char *name)
{
	size_t n = strlen(name);
	for (char *l = strstr(req, "\r\n"); l; l = strstr(l + 2, "\r\n"))
		if (!strncasecmp(l + 2, name, n)) {
			char *v = l + 2 + n;
			v += strspn(v, " \t");
			v[strcspn(v, "\r\n")] = '\0';
			return v;
		}
	return NULL;
}

void wss_httpd_answer(int listen_fd, const char *served,
		      char *(*body)(void *arg, const char *accept, const char **type, size_t *len), void *arg)
{
	int c = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return;
	/* A client that sends nothing holds the caller for a second at most:
	 * it waits for the program's exit in the same loop. */
	struct timeval tv = {1, 0};
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	char req[4096];
	size_t got = 0;
	while (got < sizeof req - 1 && !memmem(req, got, "\r\n\r\n", 4)) {
		ssize_t r = read(c, req + got, sizeof req - 1 - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	req[got] = '\0';
	bool get = !strncmp(req, "GET ", 4), head = !strncmp(req, "HEAD ", 5);
	const char *path = req + (get ? 4 : 5);
	size_t pl = strcspn(path, " ?\r\n");
	char hint[128];
	int hl = snprintf(hint, sizeof hint, "GET %s\n", served);
	if (!get && !head)
		reply(c, "405 Method Not Allowed", "text/plain", hint, (size_t)hl, false);
	else if (!(pl == strlen(served) && !strncmp(path, served, pl)) && !(pl == 1 && path[0] == '/'))
		reply(c, "404 Not Found", "text/plain", hint, (size_t)hl, head);
	else {
		size_t len;
		const char *type = "text/plain";
		char *text = body(arg, header(req, "accept:"), &type, &len);
		if (text)
			reply(c, "200 OK", type, text, len, head);
		else
			reply(c, "500 Internal Server Error", "text/plain", "out of memory\n", 14, head);
		free(text);
	}
	close(c);
}

