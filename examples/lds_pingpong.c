/*
 * lds_pingpong.c - a program written for the thesis API of Appendix A, as
 * it was: the client sends 100 kB messages, the server sends each one back
 * and the client checks it.  Nothing in it knows about ldsd.
 *
 *   cc lds_pingpong.c $(pkg-config --cflags --libs lds) -o lds_pingpong
 *   ./lds_pingpong server.ini          (in the server's cluster)
 *   ./lds_pingpong client.ini          (in the client's cluster)
 *
 * Without an argument it reads LDN_Service.ini in the current directory.
 * docs/thesis-api.md shows the two configuration files.
 */
#include <stdio.h>
#include <string.h>

#include <lds.h>

#define MSG_SIZE 100000
#define ROUNDS   10

static char out[MSG_SIZE], in[MSG_SIZE];

static void fill(char *buf, int round)
{
	for (int i = 0; i < MSG_SIZE; i++)
		buf[i] = (char)('a' + (i + round) % 26);
}

/* Rank 0 (client): send, receive the echo, compare. */
static int client_round(int round)
{
	int rc;

	fill(out, round);
	rc = LDS_Send(out, MSG_SIZE);
	if (rc == 0)
		rc = LDS_Recv(in, MSG_SIZE);
	if (rc == 0 && memcmp(in, out, MSG_SIZE) != 0) {
		fprintf(stderr, "round %d: the echo differs\n", round);
		return -1;
	}
	return rc;
}

/* Rank 1 (server): receive, send back. */
static int server_round(void)
{
	int rc = LDS_Recv(in, MSG_SIZE);

	return rc == 0 ? LDS_Send(in, MSG_SIZE) : rc;
}

int main(int argc, char **argv)
{
	int rc = 0, rank;

	if (argc > 1 && (rc = LDSM_SetConfigFile(argv[1])) != 0) {
		fprintf(stderr, "LDSM_SetConfigFile(%s): error %d\n", argv[1], rc);
		return 1;
	}
	rc = LDS_Init(4);
	if (rc != 0) {
		fprintf(stderr, "LDS_Init: error %d\n", rc);
		return 1;
	}
	rank = LDS_Rank();
	for (int round = 0; round < ROUNDS && rc == 0; round++)
		rc = rank == 0 ? client_round(round) : server_round();
	if (rc != 0)
		fprintf(stderr, "%s: error %d\n", rank == 0 ? "client" : "server", rc);
	if (LDS_Finalize() != 0 && rc == 0) {
		fprintf(stderr, "LDS_Finalize: some messages were lost\n");
		rc = 1;
	}
	if (rc == 0)
		printf("%s: %d messages of %d bytes %s\n", rank == 0 ? "client" : "server", ROUNDS, MSG_SIZE,
		       rank == 0 ? "sent and echoed back" : "echoed");
	return rc == 0 ? 0 : 1;
}
