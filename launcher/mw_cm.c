/*
 * mw_cm.c - the communication manager (thesis 000, section 2.4): the
 * bridge between its cluster's MPI (the port) and the WAN (mw_wan, liblds).
 *
 * Main side: to the master it is one worker with a deep queue (HELLO
 * with depth MWL_PREFETCH), so the master keeps it supplied with up to
 * that many tasks; it packs them MWL_GRAIN at a time into coarse tasks
 * and hands them to ldsd as fast as ldsd takes them (lds_send_nb), so the
 * WAN always has work in flight; coarse results come back and are
 * unpacked into the master's fine results.
 * Remote side: it passes coarse tasks to the sub-master and coarse
 * results back over the WAN.
 *
 * Both sides bound the handshake (MWL_LINK_TIMEOUT) and the goodbye
 * (MWL_DEADLINE), so that a link that never comes up, or a remote cluster
 * that died, ends in a message, never in a hang.  While the run goes on,
 * the remote side says PING every second it has said nothing else; a
 * remote cluster silent for MWL_DEADLINE is away: the main side tells the
 * master (AWAY), which runs the tasks it held elsewhere, and drops the
 * results of those tasks when they arrive late; the first message after
 * the silence brings it back (BACK).
 *
 * With the application's task_blocks and MWL_CACHE > 0, the main side
 * sends each task as a data cache recipe (mw_cache.h): shared blocks
 * cross once, and the sub-master rebuilds the task.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/mw_cache.h"
#include "launcher/mw_role.h"
#include "launcher/mw_run.h"
#include "launcher/mw_wan.h"

#define NAP 0.002               /* s: longest wait on the gateway per loop */
#define PACK_WAIT 0.05          /* s: longest a partial coarse task waits for more */
#define PING_EVERY 1.0          /* s: either side's heartbeat behind an empty queue */
#define STATS_EVERY 0.1         /* s: the main side's reports to the master (an interval
                                 * of the WAN series is off by at most this) */
#define MAX_BLOCKS 256          /* shared ranges of one task */

struct cm {
	struct mw_run *r;
	struct mw_port *port;      /* peer 0: master or sub-master */
	struct mw_wan *wan;
	struct mw_cm_env env;
	const char *side;          /* for messages: "main" or "remote" */
	double t_start;
	bool linked;               /* the peer CM said HELLO */
	struct mw_buf coarse;      /* main: the coarse task being packed */
	unsigned nitems;
	double packed_since;       /* when its first item came */
	uint64_t held;             /* main: tasks from the master not yet answered */
	uint64_t next_coarse;
	/* main side: the remote cluster's presence */
	double last_heard;         /* its last message */
	bool away;                 /* silent past the deadline: the master knows */
	bool dead;                 /* mwlaunch said the remote cluster ended: nothing more comes from it */
	uint64_t late_below;       /* coarse results below this id are late */
	struct mw_cm_stats st;     /* the link's counters */
	struct mw_cm_stats told;   /* ... as the master last heard them */
	double stats_at;
	/* main side: the data cache's mirror, when the application names blocks */
	bool caching;
	struct mw_cache_tx cache;
	struct mw_block *blocks;
	struct mw_buf recipe;
	/* remote side: when it last sent anything */
	double sent_at;
};

static int fail(struct cm *c, const char *fmt, const char *detail)
{
	fprintf(stderr, "mw: cm (%s side, cluster %s): ", c->side, c->r->cluster);
	fprintf(stderr, fmt, detail);
	fputc('\n', stderr);
	return 1;
}

static int wan_send(struct cm *c, const struct mw_hdr *h, const void *data)
{
	c->sent_at = mw_now();
	return mw_wan_send(c->wan, h, data) < 0 ? fail(c, "%s", mw_wan_error(c->wan)) : 0;
}

static int port_send(struct cm *c, const struct mw_hdr *h, const void *data)
{
	int rc = mw_port_send(c->port, 0, h, data);

	return rc < 0 ? fail(c, "sending over MPI: %s", strerror(-rc)) : 0;
}

/* Main side: the coarse task packed so far goes to the WAN. */
static int ship(struct cm *c)
{
	struct mw_hdr h = { .type = MW_MSG_TASK, .id = c->next_coarse++, .aux = c->nitems };

	if (c->nitems == 0)
		return 0;
	if (c->coarse.len > UINT32_MAX)
		return fail(c, "%s", "a coarse task is larger than 4 GiB: use a smaller grain");
	h.len = (uint32_t)c->coarse.len;
	c->coarse.len = 0;
	c->nitems = 0;
	return wan_send(c, &h, c->coarse.data);
}

/* Main side: a coarse result becomes the master's fine results, unless
 * its tasks were forfeited while the remote cluster was away: the master
 * gave them to others, and a late result is dropped and counted. */
static int unpack_results(struct cm *c, const struct mw_msg *m)
{
	bool late = m->h.id < c->late_below;
	struct mw_item it;
	size_t off = 0;
	int rc;

	while ((rc = mw_item_next(m->data, m->h.len, &off, &it)) > 0) {
		struct mw_hdr h = { .type = MW_MSG_RESULT, .id = it.id, .aux = it.aux, .len = it.len };

		if (late) {
			c->st.late++;
			continue;
		}
		if (port_send(c, &h, it.data) != 0)
			return 1;
		c->held -= c->held > 0;
	}
	return rc < 0 ? fail(c, "malformed coarse result from %s", mw_wan_peer(c->wan)) : 0;
}

static int forward_fail(struct cm *c, const struct mw_msg *m)
{
	fprintf(stderr, "mw: cm: %s failed: %.*s\n", mw_wan_peer(c->wan), (int)m->h.len, (const char *)m->data);
	port_send(c, &m->h, m->data);
	mw_port_flush(c->port);
	return 1;
}

/* Main side, one message from the WAN.  1 when the remote said BYE. */
static int launcher_says_gone(struct cm *c, const struct mw_msg *m, const char *src);

static int main_from_wan(struct cm *c, const struct mw_msg *m, const char *src)
{
	if (m->h.type == MW_MSG_GONE)
		return launcher_says_gone(c, m, src);
	/* What a dead cluster sent before it died: its tasks went elsewhere. */
	if (c->dead)
		return 0;
	if (strcmp(src, mw_wan_peer(c->wan)) != 0) {
		fprintf(stderr, "mw: cm: ignored a %s from %s, which is not %s\n", mw_msg_names[m->h.type], src,
			mw_wan_peer(c->wan));
		return 0;
	}
	c->last_heard = mw_now();
	if (c->away) {
		c->away = false;
		fprintf(stderr, "mw: cm (cluster %s): %s answers again\n", c->r->cluster, src);
		if (port_send(c, &(struct mw_hdr){ .type = MW_MSG_BACK }, NULL) != 0)
			return -1;
	}
	switch (m->h.type) {
	case MW_MSG_HELLO:
		c->linked = true;
		if (!c->r->quiet)
			printf("mw: cm: linked to %s after %.2f s\n", src, mw_now() - c->t_start);
		/* A calibration run waits for this before it hands out tasks. */
		return port_send(c, &(struct mw_hdr){ .type = MW_MSG_JOINED }, NULL) != 0 ? -1 : 0;
	case MW_MSG_PING:
		return 0;
	case MW_MSG_RESULT:
		return unpack_results(c, m) != 0 ? -1 : 0;
	case MW_MSG_BYE:
		return 1;
	case MW_MSG_FAIL:
		forward_fail(c, m);
		return -1;
	default:
		fail(c, "unexpected message from %s", src);
		return -1;
	}
}

/* Main side: a task from the master into the coarse task being packed,
 * as a recipe when the data cache is on.  0 or -1 (said why). */
static int put_task(struct cm *c, const struct mw_msg *m)
{
	const struct mw_app *a = c->r->app;
	unsigned long long id = m->h.id;
	long n;
	int rc;

	if (!c->caching)
		return mw_item_put(&c->coarse, id, 0, m->data, m->h.len) < 0 ? -fail(c, "%s", "out of memory") : 0;
	n = a->task_blocks(a->ctx, id, m->data, m->h.len, c->blocks, MAX_BLOCKS);
	if (n < 0 || n > MAX_BLOCKS) {
		fprintf(stderr, "mw: cm: %s: task_blocks() failed for task %llu\n", a->name, id);
		return -1;
	}
	c->recipe.len = 0;
	rc = mw_cache_encode(&c->cache, m->data, m->h.len, c->blocks, (size_t)n, &c->recipe);
	if (rc == -EINVAL) {
		fprintf(stderr, "mw: cm: %s: task_blocks() named ranges outside task %llu (%u bytes) or out of "
			"order\n", a->name, id, m->h.len);
		return -1;
	}
	if (rc < 0 || c->recipe.len > UINT32_MAX ||
	    mw_item_put(&c->coarse, id, MW_ITEM_RECIPE, c->recipe.data, (uint32_t)c->recipe.len) < 0)
		return -fail(c, "%s", "out of memory");
	c->st.cache_saved = c->cache.saved;
	return 0;
}

/* Main side, one message from the master.  1 on STOP. */
static int main_from_master(struct cm *c, const struct mw_msg *m)
{
	if (m->h.type == MW_MSG_STOP)
		return 1;
	/* Sent before the master heard AWAY: forfeited already. */
	if (m->h.type == MW_MSG_TASK && c->away)
		return 0;
	if (m->h.type != MW_MSG_TASK) {
		fail(c, "unexpected %s from the master", mw_msg_names[m->h.type]);
		return -1;
	}
	if (put_task(c, m) < 0)
		return -1;
	if (c->nitems == 0)
		c->packed_since = mw_now();
	c->held++;
	if (++c->nitems == c->env.grain && ship(c) != 0)
		return -1;
	return 0;
}

/* Main side: the link's counters to the master when they changed, at
 * most every STATS_EVERY (force: now, the last before BYE). */
static int report(struct cm *c, bool force)
{
	unsigned char p[MW_STATS_LEN];
	struct mw_cm_stats now = c->st;
	struct mw_hdr h = { .type = MW_MSG_STATS, .len = MW_STATS_LEN };

	if (!force && mw_now() - c->stats_at < STATS_EVERY)
		return 0;
	c->stats_at = mw_now();
	now.wan_out = mw_wan_bytes_out(c->wan);
	now.wan_in = mw_wan_bytes_in(c->wan);
	mw_wan_link_bytes(c->wan, &now.link_out, &now.link_in);
	if (!force && memcmp(&now, &c->told, sizeof(now)) == 0)
		return 0;
	c->told = now;
	h.id = now.wan_out;
	h.aux = now.wan_in;
	mw_stats_msg_encode(p, &now);
	return port_send(c, &h, p);
}

static int bye_to_master(struct cm *c)
{
	struct mw_hdr h = { .type = MW_MSG_BYE, .aux = (uint64_t)((mw_now() - c->r->t0) * 1e9),
			    .id = (uint64_t)(mw_cpu() * 1e9) };

	return report(c, true) != 0 || port_send(c, &h, NULL) != 0 || mw_port_flush(c->port) < 0 ? 1 : 0;
}

/* Main side: the remote cluster is silent or gone.  What the master gave
 * this CM is forfeited, and the master runs it elsewhere; whatever was
 * shipped comes back late, the partial coarse task too (it leaves now: the
 * data cache's mirror already counts its blocks as sent).  Nothing more
 * comes here until the remote answers again. */
static int forfeit(struct cm *c)
{
	if (ship(c) != 0)
		return 1;
	c->away = true;
	c->held = 0;
	c->late_below = c->next_coarse;
	return port_send(c, &(struct mw_hdr){ .type = MW_MSG_AWAY }, NULL);
}

/* Main side: the remote cluster said nothing for its deadline. */
static int gone_away(struct cm *c)
{
	fprintf(stderr, "mw: cm (cluster %s): nothing from %s for %.0f s (deadline): its %llu outstanding tasks "
		"go to other workers; late results will be dropped\n", c->r->cluster, mw_wan_peer(c->wan),
		c->env.deadline, (unsigned long long)c->held);
	return forfeit(c);
}

/* Main side: messages to the remote cluster were reported lost: its
 * gateway restarted without its state, and the cluster's job, which that
 * gateway started, is most likely gone with it.  What it held goes to
 * other workers at once; mwlaunch's GONE (or, with on_remote_failure =
 * "abort", the end of the job) follows, and a cluster that lived on is
 * back with its next message.  Before, the job ended here, or not,
 * depending on whether the restart caught a message unacknowledged. */
static int lost_remote(struct cm *c)
{
	fprintf(stderr, "mw: cm (cluster %s): %s: its %llu outstanding tasks go to other workers\n", c->r->cluster,
		mw_wan_error(c->wan), (unsigned long long)c->held);
	return c->away || forfeit(c) == 0 ? 0 : -1;
}

/* Main side: mwlaunch saw the remote cluster end (its mpirun exited, or
 * its gateway lost the job) and says so at once, through the gateway,
 * from this job's own endpoint: the tasks it held go elsewhere now, not
 * after the deadline, and its goodbye is not waited for.  0, or -1 (said
 * why). */
static int launcher_says_gone(struct cm *c, const struct mw_msg *m, const char *src)
{
	char launcher[LDS_NAME_MAX];

	snprintf(launcher, sizeof(launcher), "%s/mwlaunch-%s", c->r->cluster, c->env.job ? c->env.job : "");
	if (c->env.job == NULL || strcmp(src, launcher) != 0) {
		fprintf(stderr, "mw: cm: ignored a GONE from %s, which is not this job's mwlaunch\n", src);
		return 0;
	}
	if (c->dead)
		return 0;
	c->dead = true;
	fprintf(stderr, "mw: cm (cluster %s): mwlaunch says %s ended (%.*s): its %llu outstanding tasks go to "
		"other workers now\n", c->r->cluster, c->env.remote, (int)(m->h.len < 200 ? m->h.len : 200),
		m->data ? (const char *)m->data : "", (unsigned long long)c->held);
	return c->away || forfeit(c) == 0 ? 0 : -1;
}

/* Main side, at STOP: the master needs nothing more, so the coarse task
 * being packed and those queued here (not yet taken by ldsd) never leave;
 * STOP follows at most prefetch_bytes of tasks already on the WAN. */
static void drop_queued_tasks(struct cm *c)
{
	uint64_t bytes;
	size_t n = mw_wan_drop_queued(c->wan, MW_MSG_TASK, &bytes);

	c->nitems = 0;
	c->coarse.len = 0;
	if (!c->r->quiet)
		printf("mw: cm (cluster %s): stop: dropped %zu queued coarse tasks (%.1f MiB) that had not left; "
		       "%.1f MiB still on the WAN ahead of the stop\n", c->r->cluster, n, bytes / 1048576.0,
		       mw_wan_inflight(c->wan) / 1048576.0);
}

/* Why the peer CM may not answer, as the gateway sees its link to
 * cluster (NULL: not known yet). */
static const char *link_advice(struct cm *c, const char *cluster, char *buf, size_t len)
{
	if (cluster != NULL && *cluster != '\0')
		return mw_wan_describe_peer(c->wan, cluster, buf, len);
	snprintf(buf, len, "is the gateway link up (ldsctl status)?");
	return buf;
}

static int run_main_side(struct cm *c)
{
	char hello[LDS_NAME_MAX + 8], src[LDS_NAME_MAX];
	struct mw_hdr h = { .type = MW_MSG_HELLO, .id = MW_HELLO_CM, .aux = c->env.prefetch };
	double stop_at = 0;
	bool stopping = false;
	struct mw_msg m;
	int rc;

	if (c->env.remote == NULL || *c->env.remote == '\0')
		return fail(c, "%s", "MWL_REMOTE (the remote cluster this CM serves) is not set");
	if (c->env.job)
		snprintf(src, sizeof(src), "%s/cm-%s", c->env.remote, c->env.job);
	else
		snprintf(src, sizeof(src), "%s/cm", c->env.remote);
	mw_wan_set_peer(c->wan, src);
	/* The link's counters start here, before the master sends a task. */
	mw_wan_link_bytes(c->wan, &c->st.link_out, &c->st.link_in);
	h.len = (uint32_t)snprintf(hello, sizeof(hello), "cm:%s", c->env.remote);
	if (port_send(c, &h, hello) != 0)
		return 1;
	h = (struct mw_hdr){ .type = MW_MSG_HELLO, .id = MW_HELLO_CM, .aux = c->env.grain };
	if (wan_send(c, &h, NULL) != 0)
		return 1;
	for (;;) {
		bool busy = false;

		/* From the master: tasks, packed grain at a time.  A partial
		 * coarse task leaves when the master cannot send more (the CM
		 * holds its whole depth) or has had nothing more for a while
		 * (the end of the run). */
		while ((rc = mw_port_poll(c->port, &m)) > 0) {
			busy = true;
			if ((rc = main_from_master(c, &m)) < 0)
				return 1;
			/* Left out of a calibration run before its cluster
			 * answered: nothing of ours is there to wait for.  The
			 * STOP queued behind our HELLO ends the cluster if it
			 * comes up later. */
			if (rc == 1 && m.h.aux == MW_STOP_EXCUSED && !c->linked) {
				if (wan_send(c, &(struct mw_hdr){ .type = MW_MSG_STOP }, NULL) != 0 ||
				    mw_wan_flush(c->wan, (int)(c->env.link_timeout * 1000)) < 0)
					return fail(c, "telling the absent cluster to stop: %s", mw_wan_error(c->wan));
				return bye_to_master(c);
			}
			if (rc == 1 && !stopping) {
				stopping = true;
				stop_at = mw_now();
				drop_queued_tasks(c);
				h = (struct mw_hdr){ .type = MW_MSG_STOP };
				if (wan_send(c, &h, NULL) != 0)
					return 1;
			}
		}
		if (rc < 0)
			return fail(c, "receiving from the master: %s", strerror(-rc));
		if ((c->held >= c->env.prefetch || mw_now() - c->packed_since > PACK_WAIT) && ship(c) != 0)
			return 1;
		if (mw_wan_pump(c->wan) < 0)
			return fail(c, "%s", mw_wan_error(c->wan));
		while ((rc = mw_wan_poll(c->wan, &m, src)) > 0) {
			busy = true;
			if ((rc = main_from_wan(c, &m, src)) < 0)
				return 1;
			if (rc == 1)
				return bye_to_master(c);
		}
		if (rc == -ECONNRESET)
			rc = lost_remote(c);
		if (rc < 0)
			return fail(c, "%s", mw_wan_error(c->wan));
		if (stopping && c->dead)
			return bye_to_master(c);
		if (!c->linked && !c->dead && mw_now() - c->t_start > c->env.link_timeout) {
			char link[400];

			fprintf(stderr, "mw: cm (cluster %s): no answer from %s through the gateway within %.0f s "
				"(link_timeout): %s\n", c->r->cluster, mw_wan_peer(c->wan), c->env.link_timeout,
				link_advice(c, c->env.remote, link, sizeof(link)));
			return 1;
		}
		if (c->linked && !c->away && !stopping && mw_now() - c->last_heard > c->env.deadline &&
		    gone_away(c) != 0)
			return 1;
		if (report(c, false) != 0)
			return 1;
		/* The remote side's lease runs on what it hears from here. */
		if (c->linked && !c->dead && mw_now() - c->sent_at >= PING_EVERY && mw_wan_queued(c->wan) == 0 &&
		    wan_send(c, &(struct mw_hdr){ .type = MW_MSG_PING }, NULL) != 0)
			return 1;
		if (stopping && mw_now() - stop_at > c->env.deadline) {
			fprintf(stderr, "mw: cm (cluster %s): %s did not say goodbye within %.0f s (deadline); "
				"its late results are dropped\n", c->r->cluster, mw_wan_peer(c->wan), c->env.deadline);
			return bye_to_master(c);
		}
		if (!busy && mw_wan_wait(c->wan, NAP) < 0)
			return fail(c, "%s", mw_wan_error(c->wan));
	}
}

/* Remote side, one message from the WAN. */
static int remote_from_wan(struct cm *c, const struct mw_msg *m, const char *src)
{
	if (!c->linked) {
		if (m->h.type != MW_MSG_HELLO)
			return fail(c, "expected HELLO first from %s", src);
		c->linked = true;
		c->last_heard = mw_now();
		mw_wan_set_peer(c->wan, src);
		if (!c->r->quiet)
			printf("mw: cm: linked to %s after %.2f s\n", src, mw_now() - c->t_start);
		return wan_send(c, &(struct mw_hdr){ .type = MW_MSG_HELLO, .id = MW_HELLO_CM }, NULL);
	}
	if (strcmp(src, mw_wan_peer(c->wan)) != 0) {
		fprintf(stderr, "mw: cm: ignored a %s from %s, which is not %s\n", mw_msg_names[m->h.type], src,
			mw_wan_peer(c->wan));
		return 0;
	}
	c->last_heard = mw_now();
	if (m->h.type == MW_MSG_PING)
		return 0;
	if (m->h.type != MW_MSG_TASK && m->h.type != MW_MSG_STOP)
		return fail(c, "unexpected message from %s", src);
	return port_send(c, &m->h, m->data);
}

static int run_remote_side(struct cm *c)
{
	char src[LDS_NAME_MAX];
	struct mw_msg m;
	int rc;

	for (;;) {
		bool busy = false;

		while ((rc = mw_wan_poll(c->wan, &m, src)) > 0) {
			busy = true;
			if (remote_from_wan(c, &m, src) != 0)
				return 1;
		}
		if (rc < 0)
			return fail(c, "%s", mw_wan_error(c->wan));
		while ((rc = mw_port_poll(c->port, &m)) > 0) {
			busy = true;
			if (m.h.type == MW_MSG_HELLO)
				continue;
			if (!c->linked)
				return fail(c, "%s", "the sub-master answered before the main cluster asked");
			if (wan_send(c, &m.h, m.data) != 0)
				return 1;
			if (m.h.type == MW_MSG_BYE || m.h.type == MW_MSG_FAIL) {
				if (mw_wan_flush(c->wan, (int)(c->env.deadline * 1000)) < 0)
					return fail(c, "saying goodbye: %s", mw_wan_error(c->wan));
				return m.h.type == MW_MSG_BYE ? 0 : 1;
			}
		}
		if (rc < 0)
			return fail(c, "receiving from the sub-master: %s", strerror(-rc));
		/* A heartbeat only behind an empty queue: queued messages say
		 * the same when they arrive. */
		if (c->linked && mw_now() - c->sent_at >= PING_EVERY && mw_wan_queued(c->wan) == 0 &&
		    wan_send(c, &(struct mw_hdr){ .type = MW_MSG_PING }, NULL) != 0)
			return 1;
		if (mw_wan_pump(c->wan) < 0)
			return fail(c, "%s", mw_wan_error(c->wan));
		/* The lease: a main side silent this long (it pings every second)
		 * is gone for good, or cut off past what the job may wait: the
		 * cluster ends rather than compute for a job that no longer is. */
		if (c->linked && mw_now() - c->last_heard > c->env.lease) {
			fprintf(stderr, "mw: cm (cluster %s): nothing from %s for %.0f s (lease): the job's main side is "
				"gone or cut off; ending this cluster's part of it\n", c->r->cluster, mw_wan_peer(c->wan),
				c->env.lease);
			return 1;
		}
		if (!c->linked && mw_now() - c->t_start > c->env.link_timeout) {
			char link[400];

			fprintf(stderr, "mw: cm (cluster %s): the main cluster's communication manager did not "
				"call within %.0f s (link_timeout): %s\n", c->r->cluster, c->env.link_timeout,
				link_advice(c, c->env.main, link, sizeof(link)));
			return 1;
		}
		if (!busy && mw_wan_wait(c->wan, NAP) < 0)
			return fail(c, "%s", mw_wan_error(c->wan));
	}
}

int mw_cm_run(struct mw_run *r, struct mw_port *port, bool main_side)
{
	struct cm c = { .r = r, .port = port, .side = main_side ? "main" : "remote", .t_start = mw_now() };
	char err[512], name[LDS_NAME_MAX];
	int status;

	if (mw_cm_env_read(&c.env, mw_getenv, err, sizeof(err)) < 0)
		return fail(&c, "%s", err);
	/* Named after the job too: what an earlier job left queued for its
	 * CMs waits under that job's names, never delivered to this one. */
	snprintf(name, sizeof(name), "cm%s%s%s%s", main_side ? "-" : "", main_side && c.env.remote ? c.env.remote : "",
		 c.env.job ? "-" : "", c.env.job ? c.env.job : "");
	c.wan = mw_wan_open(NULL, name, (int)(c.env.link_timeout * 1000), err, sizeof(err));
	if (c.wan == NULL)
		return fail(&c, "%s", err);
	if (main_side)
		mw_wan_set_inflight_max(c.wan, (size_t)c.env.prefetch_bytes);
	/* The data cache is the main side's choice: the sub-master follows
	 * the recipes it gets. */
	c.caching = main_side && MW_HAS(r->app, task_blocks) && c.env.cache > 0;
	mw_cache_tx_init(&c.cache, (size_t)c.env.cache);
	if (c.caching && (c.blocks = calloc(MAX_BLOCKS, sizeof(*c.blocks))) == NULL)
		status = fail(&c, "%s", "out of memory");
	else if (strcmp(mw_wan_cluster(c.wan), r->cluster) != 0)
		status = fail(&c, "the gateway at $LDS_SOCKET serves cluster %s, not this one: check the job "
			      "file's socket", mw_wan_cluster(c.wan));
	else
		status = main_side ? run_main_side(&c) : run_remote_side(&c);
	mw_wan_close(c.wan);
	mw_cache_tx_free(&c.cache);
	free(c.blocks);
	free(c.recipe.data);
	free(c.coarse.data);
	return status;
}
