/*
 * fuzz_config.c - libFuzzer target for ldsd's configuration loader
 * (ldsd/config.c and the other ldsd/cfg*.c, and libconfig under them).
 *
 * Every input is written to a file and loaded, as `ldsd --check` would.
 * Besides "no crash, no undefined behaviour" (every number is range-checked
 * before it is converted: UBSan aborts otherwise), it checks that a refused
 * file gets one non-empty line of error, and that an accepted one prints
 * back (config_print) to text that loads again and prints the same.  The
 * files live in one mkdtemp directory beside a valid key file "k.key", so
 * that inputs naming key_file = "k.key" get past the key checks; they are
 * removed when the fuzzer exits normally.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "ldsd/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);
const char *__lsan_default_options(void);

/* libconfig 1.5 leaks its scanner's string buffer when a string is cut
 * off by a syntax error (debian libconfig9 1.5-0.4); not ours to fix. */
const char *__lsan_default_suppressions(void)
{
	return "leak:libconfig.so\n";
}

/* ...and make fuzz-smoke shows the last line of the log, not the list of
 * suppressions used. */
const char *__lsan_default_options(void)
{
	return "print_suppressions=0";
}

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

static char dir[64], conf[96], again[96];
static struct config cfg, cfg2;

static void write_file(const char *path, const void *p, size_t n, mode_t mode)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	CHECK(fwrite(p, 1, n, f) == n);
	CHECK(fclose(f) == 0);
	CHECK(chmod(path, mode) == 0);
}

static void cleanup(void)
{
	char key[96];

	snprintf(key, sizeof(key), "%s/k.key", dir);
	unlink(key);
	unlink(conf);
	unlink(again);
	rmdir(dir);
}

static void setup(void)
{
	char key[96];

	snprintf(dir, sizeof(dir), "/tmp/lds-fuzz-config-XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(conf, sizeof(conf), "%s/t.conf", dir);
	snprintf(again, sizeof(again), "%s/again.conf", dir);
	snprintf(key, sizeof(key), "%s/k.key", dir);
	write_file(key, "0123456789abcdef0123456789abcdef\n", 33, 0600);
	atexit(cleanup);
}

/* config_print of c, as a malloc'd string. */
static char *printed(const struct config *c)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK(f != NULL);
	config_print(c, f);
	CHECK(fclose(f) == 0);
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	char *first, *second;

	if (dir[0] == '\0')
		setup();
	write_file(conf, data, size, 0644);
	if (config_load(conf, &cfg, err, sizeof(err)) < 0) {
		CHECK(err[0] != '\0' && strchr(err, '\n') == NULL);
		return 0;
	}
	first = printed(&cfg);
	/* The header names the file it came from: make both name the same. */
	write_file(again, first, strlen(first), 0644);
	CHECK(config_load(again, &cfg2, err, sizeof(err)) == 0);
	snprintf(cfg2.file, sizeof(cfg2.file), "%s", cfg.file);
	second = printed(&cfg2);
	CHECK(strcmp(first, second) == 0);
	free(first);
	free(second);
	return 0;
}
