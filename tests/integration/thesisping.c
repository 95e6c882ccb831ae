/*
 * thesisping - a thesis-API ping-pong (examples/lds_pingpong.c) that runs
 * long enough for a test to restart a gateway under it.
 *
 *   thesisping CONFIG.ini ROUNDS SIZE PAUSE_MS
 *
 * The client (Server = 0) sends ROUNDS messages of SIZE bytes, each filled
 * from its round number, and checks every echo byte for byte; the server
 * echoes.  The client pauses PAUSE_MS between rounds.  Exits 0 only if
 * every round was verified and LDS_Finalize saw nothing lost; prints
 * "client: N rounds verified" or "server: N rounds echoed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libclient/lds.h"

static void fill(unsigned char *buf, size_t n, int round)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (unsigned char)((i * 7 + (size_t)round * 131) % 251);
}

static void pause_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	unsigned char *out, *in;
	int rounds, size, rank, rc, done = 0;
	long pause;

	if (argc != 5 || (rounds = atoi(argv[2])) <= 0 || (size = atoi(argv[3])) <= 0 ||
	    (pause = atol(argv[4])) < 0) {
		fprintf(stderr, "usage: thesisping CONFIG.ini ROUNDS SIZE PAUSE_MS\n");
		return 2;
	}
	out = malloc((size_t)size);
	in = malloc((size_t)size);
	if (out == NULL || in == NULL) {
		fprintf(stderr, "thesisping: out of memory\n");
		return 1;
	}
	rc = LDSM_SetConfigFile(argv[1]);
	if (rc == 0)
		rc = LDS_Init(1);
	if (rc != 0) {
		fprintf(stderr, "thesisping: init: error %d\n", rc);
		return 1;
	}
	rank = LDS_Rank();
	for (; done < rounds && rc == 0; done++) {
		if (rank == 0) {
			fill(out, (size_t)size, done);
			rc = LDS_Send(out, size);
			if (rc == 0)
				rc = LDS_Recv(in, size);
			if (rc == 0 && memcmp(in, out, (size_t)size) != 0) {
				fprintf(stderr, "thesisping: round %d: the echo differs\n", done);
				rc = -1;
			}
			pause_ms(pause);
		} else {
			rc = LDS_Recv(in, size);
			if (rc == 0)
				rc = LDS_Send(in, size);
		}
		if (rc != 0) {
			fprintf(stderr, "thesisping: %s: round %d: error %d\n", rank == 0 ? "client" : "server", done,
				rc);
			break;
		}
	}
	if (LDS_Finalize() != 0 && rc == 0) {
		fprintf(stderr, "thesisping: LDS_Finalize: some messages were lost\n");
		rc = 1;
	}
	free(out);
	free(in);
	if (rc != 0)
		return 1;
	printf("%s: %d rounds %s\n", rank == 0 ? "client" : "server", done, rank == 0 ? "verified" : "echoed");
	return 0;
}
