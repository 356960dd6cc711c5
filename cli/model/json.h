/* A small, strict JSON (RFC 8259) reader for the CLI: one document in, a
 * tree out, or an error with the byte column where the text stops being
 * JSON.  Strict means no comments, no trailing commas, no leading zeros or
 * NaN, no unescaped control characters, only valid UTF-8, no lone
 * surrogates, no duplicate keys.  Profile lines are small; every document
 * lives in one arena that wss_json_free releases at once. */
#ifndef WSS_CLI_JSON_H
#define WSS_CLI_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum wss_json_type {
	WSS_JSON_NULL,
	WSS_JSON_BOOL,
	WSS_JSON_NUMBER,
	WSS_JSON_STRING,
	WSS_JSON_ARRAY,
	WSS_JSON_OBJECT,
} wss_json_type_t;

typedef struct wss_json wss_json_t;
typedef struct wss_json_member {
	const char *key; /* NUL-terminated; keylen bytes (a \u0000 may hide inside) */
	size_t keylen;
	wss_json_t *value;
} wss_json_member_t;

struct wss_json {
	wss_json_type_t type;
	bool b;	     /* BOOL */
	bool is_int; /* NUMBER written as an integer that fits int64_t: i is exact */
	int64_t i;
	double d;      /* NUMBER, always set (rounded for large integers) */
	const char *s; /* STRING, NUL-terminated, len bytes of UTF-8 */
	size_t len;
	size_t n; /* ARRAY, OBJECT: number of items or members */
	wss_json_t **items;
	wss_json_member_t *members;
};

typedef struct wss_json_doc {
	wss_json_t *root;
	void *arena; /* the blocks everything above lives in */
} wss_json_doc_t;

typedef struct wss_json_error {
	size_t column; /* 1-based byte offset of the error in the text */
	char msg[96];
} wss_json_error_t;

/* Nesting deeper than this is refused (the parser recurses). */
#define WSS_JSON_MAX_DEPTH 256

/* Parses exactly one value (surrounded by optional whitespace) from the len
 * bytes at text.  Returns 0 and fills doc, EINVAL with err filled in for
 * text that is not JSON, or ENOMEM; doc needs no freeing on error. */
int wss_json_parse(const char *text, size_t len, wss_json_doc_t *doc, wss_json_error_t *err);
void wss_json_free(wss_json_doc_t *doc);

/* The member key of object o, or NULL (also when o is not an object). */
const wss_json_t *wss_json_get(const wss_json_t *o, const char *key);
/* o.key as an exact integer: false when missing or not an integer. */
bool wss_json_get_int(const wss_json_t *o, const char *key, int64_t *out);
/* o.key as a number: false when missing or not a number. */
bool wss_json_get_num(const wss_json_t *o, const char *key, double *out);
/* o.key as a string, or NULL when missing or not a string. */
const char *wss_json_get_str(const wss_json_t *o, const char *key);

#endif
