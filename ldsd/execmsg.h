/*
 * execmsg.h - messages of the exec service: a peer cluster asks this
 * gateway to start an MPI job (START), may ask it to stop it (STOP); the
 * gateway answers STARTED or REFUSED, streams the job's output (OUTPUT)
 * and ends with its exit status (EXIT).
 *
 * They travel as ordinary LDS messages inside the authenticated link,
 * between the requester's endpoint and the reserved endpoint
 * "CLUSTER/ldsd.exec" of the gateway that runs the job (ldsd/jobexec.c).
 * docs/protocol.md ("Exec service") is normative; keep the two in step.
 *
 * Pure codecs over byte buffers, like wire.c: no I/O.  The decoder treats
 * its input as hostile: every count and length is checked against the
 * bytes present and the limits below before anything is read or
 * allocated, and strings holding a NUL or a control character are
 * refused.  All integers are big-endian.
 */
#ifndef LDS_EXECMSG_H
#define LDS_EXECMSG_H

#include <stddef.h>
#include <stdint.h>

#define EXEC_ENDPOINT      "ldsd.exec"   /* name part of the service's endpoint */
#define EXEC_RESERVED      "ldsd."       /* endpoint names no client may open */
#define EXEC_VERSION       3u            /* 2: START names its requester; 3: and its lease */
#define EXEC_MAX_MSG       (1u << 20)    /* largest message of any type */
#define EXEC_MAX_RANKS     4096u
#define EXEC_MAX_ARGS      64u           /* per rank */
#define EXEC_MAX_ENV       32u           /* per rank */
#define EXEC_MAX_STR       4096u         /* program, argument, NAME=VALUE, hosts, hostfile */
#define EXEC_MAX_FILES     4u
#define EXEC_MAX_FILE      (64u << 10)   /* bytes of one file sent with START */
#define EXEC_FILE_NAME_MAX 64u
#define EXEC_MAX_CHUNK     (16u << 10)   /* bytes of output in one OUTPUT */
#define EXEC_TEXT_MAX      255u
#define EXEC_USER_MAX      32u           /* bytes of a requester's user name */

enum exec_type {
	EXEC_START = 1,     /* requester -> gateway: run this job */
	EXEC_STOP,          /* requester -> gateway: stop it (SIGTERM, then SIGKILL) */
	EXEC_STARTED,       /* gateway -> requester: it runs */
	EXEC_OUTPUT,        /* gateway -> requester: bytes of its output */
	EXEC_EXIT,          /* gateway -> requester: it ended; last message of a job */
	EXEC_REFUSED,       /* gateway -> requester: not started, and why */
	EXEC_END,           /* requester -> gateway: the job whose endpoints end in "-TEXT" ended:
			     * drop what waits for them (ldsd/jobend.h); also from a local client */
	EXEC_TYPE_MAX
};
extern const char *const exec_type_names[EXEC_TYPE_MAX];

enum exec_stream {
	EXEC_STDOUT = 1,
	EXEC_STDERR,
	EXEC_COLLECTED,     /* the file START asked to have sent back */
	EXEC_STREAM_MAX
};

/* A file START asks the gateway to write into the job's directory. */
struct exec_file {
	const char *name;           /* 1..EXEC_FILE_NAME_MAX bytes */
	const uint8_t *data;
	uint32_t len;               /* 0..EXEC_MAX_FILE */
};

/* One app context of the mpirun command: one rank. */
struct exec_rank {
	const char *program;        /* absolute path; must be on the gateway's allow-list */
	const char **args;
	unsigned nargs;             /* 0..EXEC_MAX_ARGS */
	const char **env;           /* "NAME=VALUE" */
	unsigned nenv;              /* 0..EXEC_MAX_ENV */
};

struct exec_start {
	uint32_t uid;               /* the requester's uid on its own cluster, for logs */
	const char *user;           /* ...and its user name there (exec_user_name_valid); both
				     * vouched for by the requesting gateway (execpolicy_vouch) */
	uint32_t timeout;           /* s; 0 = the gateway's limit */
	uint32_t lease;             /* s; the gateway stops the job when the requester's link has been
				     * down this long; 0 = never (the time limit only) */
	const char *hosts;          /* mpirun -H list, or "" */
	const char *hostfile;       /* mpirun --hostfile on the gateway, or "" */
	const char *collect;        /* file of the job's directory to send back at the end, or "" */
	struct exec_file files[EXEC_MAX_FILES];
	unsigned nfiles;
	struct exec_rank *ranks;
	unsigned nranks;            /* 1..EXEC_MAX_RANKS */
};

struct exec_msg {
	uint8_t type;               /* enum exec_type */
	uint32_t job;               /* the requester's number for the job */
	struct exec_start start;    /* START */
	uint8_t stream;             /* OUTPUT: enum exec_stream */
	const uint8_t *data;        /* OUTPUT: 1..EXEC_MAX_CHUNK bytes */
	uint32_t len;
	int32_t status;             /* EXIT: >= 0 exit code, < 0 killed by signal -status */
	int32_t err;                /* REFUSED: a positive errno value */
	char text[EXEC_TEXT_MAX + 1]; /* STOP, STARTED, EXIT, REFUSED: for people and logs; END: the tag */
	void *arena;                /* decoder's allocation for START; exec_msg_free() */
};

/*
 * Writes m into buf and returns its length, or 0 if a field is out of
 * range or the message does not fit in cap.  With buf NULL nothing is
 * written and the length is returned: the size to allocate.
 */
size_t exec_encode(const struct exec_msg *m, uint8_t *buf, size_t cap);

/*
 * Decodes one message.  Returns 0, -EPROTONOSUPPORT (another version),
 * -EBADMSG (truncated, trailing bytes, a count or length above the limits,
 * an unknown type or stream, a string with a NUL or control character,
 * an empty program or file name), or -ENOMEM.  START's strings and
 * arrays are copied into one allocation (m->arena) that the caller frees
 * with exec_msg_free(); OUTPUT's data points into buf.
 */
int exec_decode(const uint8_t *buf, size_t len, struct exec_msg *m);
void exec_msg_free(struct exec_msg *m);

/* True if endpoint ("cluster/name") names a service of the gateway: its
 * name part starts with EXEC_RESERVED.  No client may open such a name. */
int exec_reserved_name(const char *endpoint);

/* True if name is a user name START may carry: 1..EXEC_USER_MAX of
 * [A-Za-z0-9._-], not starting with '-'. */
int exec_user_name_valid(const char *name);

/*
 * The requester START names, read without decoding the rest: returns 1
 * with *uid and user (EXEC_USER_MAX + 1 bytes) filled for a START, 0 for
 * another message, -EPROTONOSUPPORT or -EBADMSG if its head is malformed.
 */
int exec_peek_requester(const uint8_t *buf, size_t len, uint32_t *uid, char *user);

/* True if name is a file name START may carry: 1..EXEC_FILE_NAME_MAX of
 * [A-Za-z0-9._-], not starting with '.'. */
int exec_file_name_valid(const char *name);

#endif
