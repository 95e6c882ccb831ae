/* execspec.c - the rank file of an exec-service job; see execspec.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "execspec.h"

#define SPEC_MAGIC "ldsd-exec 1"

/* Appends "tag value\n"; with out NULL only counts. */
static void put(char *out, size_t *n, const char *tag, const char *value)
{
	size_t t = strlen(tag), v = value ? strlen(value) : 0;

	if (out != NULL) {
		memcpy(out + *n, tag, t);
		if (value != NULL) {
			out[*n + t] = ' ';
			memcpy(out + *n + t + 1, value, v);
		}
		out[*n + t + (value ? 1 + v : 0)] = '\n';
	}
	*n += t + (value ? 1 + v : 0) + 1;
}

/* One pass writes (or, with out NULL, measures) the whole file. */
static size_t spec_write(char *out, const struct exec_start *s, const char *const *progs, const char *socket_env)
{
	size_t n = 0;

	put(out, &n, SPEC_MAGIC, NULL);
	for (unsigned i = 0; i < s->nranks; i++) {
		const struct exec_rank *r = &s->ranks[i];
		bool has_socket = false;

		put(out, &n, "rank", NULL);
		put(out, &n, "prog", progs[i]);
		for (unsigned k = 0; k < r->nargs; k++)
			put(out, &n, "arg", r->args[k]);
		for (unsigned k = 0; k < r->nenv; k++) {
			has_socket |= strncmp(r->env[k], "LDS_SOCKET=", 11) == 0;
			put(out, &n, "env", r->env[k]);
		}
		if (!has_socket)
			put(out, &n, "env", socket_env);
	}
	return n;
}

char *execspec_build(const struct exec_start *s, const char *const *progs, const char *socket_env, size_t *len)
{
	size_t n = spec_write(NULL, s, progs, socket_env);
	char *buf = malloc(n);

	if (buf == NULL)
		return NULL;
	*len = spec_write(buf, s, progs, socket_env);
	return buf;
}

/* The next line of [*p, end) as a string, or NULL at the end or if the
 * last line has no newline. */
static char *next_line(char **p, char *end)
{
	char *line = *p, *nl;

	if (line >= end || (nl = memchr(line, '\n', (size_t)(end - line))) == NULL)
		return NULL;
	*nl = '\0';
	*p = nl + 1;
	return line;
}

int execspec_rank(char *buf, size_t len, unsigned rank, struct execspec_rank *out)
{
	char *p = buf, *end = buf + len, *line;
	long cur = -1;

	memset(out, 0, sizeof(*out));
	line = next_line(&p, end);
	if (line == NULL || strcmp(line, SPEC_MAGIC) != 0)
		return -EBADMSG;
	while ((line = next_line(&p, end)) != NULL) {
		if (strcmp(line, "rank") == 0) {
			if (cur == (long)rank)
				break;
			cur++;
			continue;
		}
		if (cur != (long)rank)
			continue;
		if (strncmp(line, "prog ", 5) == 0 && out->prog == NULL && line[5] == '/')
			out->prog = line + 5;
		else if (strncmp(line, "arg ", 4) == 0 && out->prog && out->nargs < EXEC_MAX_ARGS)
			out->args[out->nargs++] = line + 4;
		else if (strncmp(line, "env ", 4) == 0 && out->prog && out->nenv < EXEC_MAX_ENV + 1 &&
			 strchr(line + 4, '=') > line + 4)
			out->env[out->nenv++] = line + 4;
		else
			return -EBADMSG;
	}
	if (cur < (long)rank)
		return -ENOENT;
	return out->prog != NULL ? 0 : -EBADMSG;
}

int execspec_digest(const void *buf, size_t len, char hex[EXECSPEC_DIGEST_LEN + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned n = 0;

	if (EVP_Digest(buf, len, md, &n, EVP_sha256(), NULL) != 1 || n * 2 != EXECSPEC_DIGEST_LEN)
		return -EIO;
	for (unsigned i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return 0;
}
