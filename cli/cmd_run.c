/*
 * cmd_run.c — `stormctl run` and `stormctl submit`.  Both build the same
 * job specification (docs/protocol.md §5.1) from the same options; run then
 * stays on the connection, copying OUTPUT frames to our stdout and stderr
 * until the one END frame, and exits with the job's exit code.
 *
 * Paths are made absolute here, not by the manager: only this process knows
 * the user's current directory and PATH.  argv[0] is joined, not resolved
 * through symlinks, because some programs look at the name they were run
 * under.
 *
 * Signals during run: SIGINT and SIGTERM stay blocked except inside
 * ppoll(), so they are only ever seen between frames, never in the middle
 * of one.  The first asks the manager to cancel the job (on a second
 * connection) and keeps waiting for the END frame, which then says
 * CANCELLED; the second stops waiting.
 *
 *   state      event              action
 *   waiting    OUTPUT             copy out, stay
 *   waiting    END                flush, exit with the job's code
 *   waiting    1st signal         send cancel, stay (cancelling)
 *   cancelling 2nd signal         exit 1; the job is the manager's now
 *   any        EOF / bad frame    exit 3 / 4 (the job may still run)
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <storm_proto.h>

#include "commands.h"

#define MAX_RANKS 1048576u
#define MAX_TIME_LIMIT_MS 9007199254740991ull /* 2^53-1: exact in JSON */
#define LINE_MAX_BUF (64u << 10)

/* ---- the job specification ---------------------------------------------- */

static json_t *jnew_or_die(json_t *v)
{
	if (!v)
		sc_die(SC_EXIT_FAILED, "out of memory");
	return v;
}

/* A JSON string from user input: jansson takes UTF-8 only, and a name in
 * another encoding deserves a better message than "out of memory". */
static json_t *jtext(const char *cmd, const char *what, const char *text)
{
	json_t *v = json_string(text);

	if (!v)
		sc_die(SC_EXIT_USAGE,
		       "%s: %s is not valid UTF-8, which the protocol cannot "
		       "carry", cmd, what);
	return v;
}

static char *xasprintf_path(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);

	if (!p)
		sc_die(SC_EXIT_FAILED, "out of memory");
	/* "/" + "x" is "/x", not "//x". */
	snprintf(p, n, "%s%s%s", dir,
		 dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", name);
	return p;
}

/* path made absolute against cwd; "./" prefixes dropped.  malloc'd. */
static char *absolute(const char *cwd, const char *path)
{
	if (path[0] == '/')
		return xasprintf_path("", path + 1);
	while (path[0] == '.' && path[1] == '/') {
		path += 2;
		while (*path == '/')
			path++;
	}
	return xasprintf_path(cwd, path[0] ? path : ".");
}

static bool is_exec_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       access(path, X_OK) == 0;
}

/* The program as the manager must see it: absolute.  A bare name is looked
 * up in PATH the way a shell would (an empty entry means "."). */
static char *resolve_program(const char *cmd, const char *cwd,
			     const char *prog)
{
	const char *path = getenv("PATH");
	const char *p;

	if (!prog[0])
		sc_die(SC_EXIT_USAGE, "%s: the program name is empty", cmd);
	if (strchr(prog, '/'))
		return absolute(cwd, prog);
	if (!path || !path[0])
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;;) {
		size_t n = strcspn(p, ":");
		char *dir = strndup(p, n), *cand, *abs;

		if (!dir)
			sc_die(SC_EXIT_FAILED, "out of memory");
		cand = xasprintf_path(dir[0] ? dir : ".", prog);
		free(dir);
		if (is_exec_file(cand)) {
			abs = absolute(cwd, cand);
			free(cand);
			return abs;
		}
		free(cand);
		if (!p[n])
			break;
		p += n + 1;
	}
	sc_die(SC_EXIT_USAGE,
	       "%s: %s: command not found in PATH; give a path to it", cmd,
	       prog);
}

struct job_opts {
	uint32_t ranks;
	bool label;
	bool input;       /* run: stdin forwarded to rank 0 (-i 0) */
	/* the inputs, opened here with the user's own rights: the program,
	 * then each --file (docs/security.md 2) */
	int fds[STC_MAX_INPUTS];
	int nfds;
};

/* Open an input for the manager to read through (never the path: the
 * manager may run as another user, on another host).  Non-blocking, so
 * that a FIFO does not wait for a writer here: the manager refuses
 * what is not a regular file. */
static void open_input(const char *cmd, struct job_opts *jo, const char *what,
		       const char *path)
{
	int fd;

	if (jo->nfds >= STC_MAX_INPUTS)
		sc_die(SC_EXIT_USAGE, "%s: more than %d inputs (the program "
		       "and its --file's): put the files in an archive",
		       cmd, STC_MAX_INPUTS);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		sc_die(SC_EXIT_USAGE, "%s: cannot read %s %s: %s (a job's "
		       "inputs are read with your rights)", cmd, what, path,
		       strerror(errno));
	jo->fds[jo->nfds++] = fd;
}

/* --mem SIZE: MiB, or a number with K, M, G or T (binary units), as
 * Slurm's --mem; at least 1 MiB, at most 1 PiB. */
static uint64_t parse_size_or_die(const char *cmd, const char *v)
{
	static const struct { char suffix; unsigned shift; } units[] = {
		{ 'K', 10 }, { 'M', 20 }, { 'G', 30 }, { 'T', 40 },
	};
	unsigned shift = 20;
	char *end = NULL;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (end && *end) {
		shift = 0;
		for (size_t i = 0; i < sizeof(units) / sizeof(*units); i++)
			if ((*end == units[i].suffix ||
			     *end == units[i].suffix + 32) && !end[1])
				shift = units[i].shift;
	}
	if (errno || end == v || !shift || v[0] == '-' || n == 0 ||
	    n > (1ull << 50) >> shift || (n << shift) < (1ull << 20))
		sc_die(SC_EXIT_USAGE, "%s: option --mem: '%s' is not a size "
		       "of 1M to 1P (a number of MiB, or with a suffix K, M, "
		       "G or T: --mem 4G)", cmd, v);
	return (uint64_t)n << shift;
}

/* --array A-B[:S][%M], or N[%M]: {"first", "step", "count", "max"}. */
static json_t *parse_array_or_die(const char *cmd, const char *v)
{
	unsigned long long a, b, step = 1, max = 0;
	const char *p = v;
	char *end;

	errno = 0;
	a = strtoull(p, &end, 10);
	b = a;
	if (end == p || errno)
		goto bad;
	if (*end == '-') {
		p = end + 1;
		b = strtoull(p, &end, 10);
		if (end == p || errno)
			goto bad;
	}
	if (*end == ':') {
		p = end + 1;
		step = strtoull(p, &end, 10);
		if (end == p || errno || !step)
			goto bad;
	}
	if (*end == '%') {
		p = end + 1;
		max = strtoull(p, &end, 10);
		if (end == p || errno || !max)
			goto bad;
	}
	if (*end || b < a || b > UINT32_MAX)
		goto bad;
	if ((b - a) / step + 1 > 10000)
		sc_die(SC_EXIT_USAGE, "%s: option --array: '%s' makes %llu "
		       "tasks; at most 10000", cmd, v, (b - a) / step + 1);
	json_t *o = jnew_or_die(json_object());

	json_object_set_new(o, "first", json_integer((json_int_t)a));
	json_object_set_new(o, "step", json_integer((json_int_t)step));
	json_object_set_new(o, "count",
			    json_integer((json_int_t)((b - a) / step + 1)));
	json_object_set_new(o, "max", json_integer((json_int_t)max));
	return o;
bad:
	sc_die(SC_EXIT_USAGE, "%s: option --array: '%s' is not A-B, A-B:S or "
	       "N (then optionally %%M), with A <= B: --array 0-99%%10", cmd,
	       v);
}

/* -t/--time in Slurm's syntax: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM,
 * D-HH:MM:SS (a bare number is minutes); "unlimited" is none (0).  In
 * milliseconds. */
static uint64_t parse_slurm_time_or_die(const char *cmd, const char *v)
{
	unsigned long long f[4] = { 0 }, days = 0, s;
	const char *p = v, *dash = strchr(v, '-');
	int n = 0;

	if (!strcasecmp(v, "unlimited") || !strcasecmp(v, "infinite"))
		return 0;
	if (dash) {
		char *end;

		errno = 0;
		days = strtoull(v, &end, 10);
		if (end != dash || errno || dash == v)
			goto bad;
		p = dash + 1;
	}
	for (;;) {
		char *end;

		if (n == 3 || *p < '0' || *p > '9')
			goto bad;
		errno = 0;
		f[n++] = strtoull(p, &end, 10);
		if (errno || f[n - 1] > 1000000000ull)
			goto bad;
		if (!*end)
			break;
		if (*end != ':')
			goto bad;
		p = end + 1;
	}
	if (dash) /* D-HH, D-HH:MM, D-HH:MM:SS */
		s = days * 86400 + f[0] * 3600 + f[1] * 60 + f[2];
	else if (n == 1) /* MM */
		s = f[0] * 60;
	else if (n == 2) /* MM:SS */
		s = f[0] * 60 + f[1];
	else /* HH:MM:SS */
		s = f[0] * 3600 + f[1] * 60 + f[2];
	if (days > 100000 || s == 0 || s > MAX_TIME_LIMIT_MS / 1000)
		goto bad;
	return s * 1000;
bad:
	sc_die(SC_EXIT_USAGE, "%s: option -t (--time): '%s' is not a time "
	       "limit: MM (minutes), MM:SS, HH:MM:SS, D-HH, D-HH:MM or "
	       "D-HH:MM:SS, more than zero (or unlimited); --time-limit "
	       "takes milliseconds", cmd, v);
}

/* Build {"op": op, "job": {...}} from the command line.  Shared by run and
 * submit; only submit accepts -o/-e, and the table ensures run never sees
 * them. */
/* --checkpoint INTERVAL: auto, or a number of seconds with an optional
 * unit s, m or h, from 1 s to a year. */
static json_t *parse_interval_or_die(const char *cmd, const char *v)
{
	unsigned long long n, mult = 1;
	char *end;

	if (!strcmp(v, "auto"))
		return json_string("auto");
	errno = 0;
	n = strtoull(v, &end, 10);
	if (end != v && (!strcmp(end, "m") || !strcmp(end, "h") ||
			 !strcmp(end, "s"))) {
		mult = *end == 'h' ? 3600 : *end == 'm' ? 60 : 1;
		end++;
	}
	if (end == v || *end || errno || v[0] == '-' || n == 0 ||
	    n > 31536000ull / mult)
		sc_die(SC_EXIT_USAGE, "%s: option --checkpoint: '%s' is not an "
		       "interval (1 s to a year: a number of seconds, or with "
		       "s, m or h, or auto)", cmd, v);
	return json_integer((json_int_t)(n * mult));
}

/* ---- the environment (--export) ----------------------------------------- */

extern char **environ;

static bool name_start(const char *p)
{
	if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
	      *p == '_'))
		return false;
	while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
	       (*p >= '0' && *p <= '9') || *p == '_')
		p++;
	return *p == '=' || *p == ',' || !*p;
}

/* Every variable of this process's environment but Storm's own. */
static void export_environ(const char *cmd, json_t *env)
{
	for (char **e = environ; e && *e; e++) {
		json_t *s;

		if (!strchr(*e, '=') || st_env_storm_sets(*e))
			continue;
		/* a variable that is not UTF-8 stays here, said once */
		if (!(s = json_string(*e))) {
			fprintf(stderr, "stormctl: %s: not exported (not "
				"UTF-8): %.*s\n", cmd,
				(int)strcspn(*e, "="), *e);
			continue;
		}
		json_array_append_new(env, s);
	}
}

/* One --export: as srun, ALL, NONE, or NAME[=VALUE] words separated by
 * commas (a comma followed by anything but a name belongs to the value:
 * CUDA_VISIBLE_DEVICES=0,1).  Any --export without ALL exports only what
 * the options name. */
static void export_opt(const char *cmd, const char *v, json_t *env,
		       int *all)
{
	if (*all < 0)
		*all = 0;
	if (!v[0])
		sc_die(SC_EXIT_USAGE, "%s: option --export: empty (want ALL, "
		       "NONE, or NAME[=VALUE] words separated by commas)",
		       cmd);
	for (const char *p = v; *p;) {
		const char *end = p, *eq;
		char *word, *kv = NULL;

		/* the word ends at a comma that starts another name */
		while (*end && !(*end == ',' && name_start(end + 1)))
			end++;
		if (!(word = strndup(p, (size_t)(end - p))))
			sc_die(SC_EXIT_FAILED, "out of memory");
		eq = strchr(word, '=');
		if (!strcmp(word, "ALL")) {
			*all = 1;
		} else if (!strcmp(word, "NONE")) {
			/* nothing more */
		} else if (!name_start(word) || (eq && st_env_storm_sets(word))) {
			sc_die(SC_EXIT_USAGE, "%s: option --export: '%s' is "
			       "not ALL, NONE, NAME or NAME=VALUE%s", cmd,
			       word, eq && st_env_storm_sets(word) ?
			       " that Storm does not set itself" : "");
		} else if (eq) {
			kv = strdup(word);
		} else {
			const char *val = getenv(word);

			if (!val)
				sc_die(SC_EXIT_USAGE, "%s: option --export: %s "
				       "is not set here; give --export "
				       "%s=VALUE", cmd, word, word);
			if (asprintf(&kv, "%s=%s", word, val) < 0)
				kv = NULL;
			if (!kv)
				sc_die(SC_EXIT_FAILED, "out of memory");
		}
		if (kv)
			json_array_append_new(env, jtext(cmd,
							 "option --export",
							 kv));
		free(kv);
		free(word);
		p = *end ? end + 1 : end;
	}
}

/* --mpi's default: what the program's libraries say it is. */
static int mpi_lib(const char *lib, void *ctx)
{
	static const struct { const char *soname, *mpi; } known[] = {
		{ "libmpich.so.12", "pmi1" },  /* MPICH */
		{ "libmpi.so.40", "pmix" },    /* Open MPI 4 */
		{ "libbcsmpi.so.0", "bcs" },   /* bcsmpicc, bcsmpifort */
	};
	const char **mpi = ctx;

	for (size_t i = 0; i < sizeof(known) / sizeof(*known); i++)
		if (!strcmp(lib, known[i].soname)) {
			*mpi = known[i].mpi;
			return 1;
		}
	return 0;
}

static const char *mpi_of(int fd)
{
	const char *mpi = NULL;

	sc_elf_needed(fd, mpi_lib, &mpi);
	return mpi;
}

/* The site's default (mpi_default in the configuration) for a program
 * whose libraries name no MPI; NULL: none set, or no configuration. */
static const char *site_mpi(const char *config_path)
{
	static char kind[8];
	st_config_t cfg;
	char err[256];

	if (!config_path || st_config_load(config_path, &cfg, err,
					   sizeof(err)))
		return NULL;
	snprintf(kind, sizeof(kind), "%s", cfg.mpi_default);
	st_config_free(&cfg);
	return strcmp(kind, "auto") ? kind : NULL;
}

/* Inside a batch allocation (STORM_JOB_ID, as its script and its steps'
 * ranks have it), run starts a step of it: the allocation's id, or 0. */
static uint32_t step_parent(const struct sc_cmd *cmd)
{
	const char *v = getenv("STORM_JOB_ID");
	char *end;
	unsigned long id;

	if (strcmp(cmd->name, "run") || !v || !v[0])
		return 0;
	errno = 0;
	id = strtoul(v, &end, 10);
	if (errno || *end || !id || id > UINT32_MAX)
		sc_die(SC_EXIT_USAGE, "%s: STORM_JOB_ID=%s is not a job id; "
		       "inside a batch allocation it names it (unset it to "
		       "run a job of its own)", cmd->name, v);
	return (uint32_t)id;
}

static json_t *build_request(const struct sc_cmd *cmd,
			     const struct sc_args *a, struct job_opts *jo,
			     const char *config_path, bool alloc)
{
	json_t *job = jnew_or_die(json_object());
	json_t *env = jnew_or_die(json_array());
	json_t *files = jnew_or_die(json_array());
	json_t *argv = jnew_or_die(json_array());
	json_t *req;
	const char *name = NULL;
	char *cwd, *prog;
	uint64_t time_limit = 0, mem = 0;
	char *chdir_to = NULL;
	uint32_t node_count = 0, cpt = 0, tpn = 0;
	bool ranks_given = false;
	int export_all = -1; /* no --export yet: all, as srun does */

	cwd = getcwd(NULL, 0);
	if (!cwd)
		sc_die(SC_EXIT_FAILED,
		       "%s: cannot tell the current directory: %s", cmd->name,
		       strerror(errno));
	jo->ranks = 1;
	jo->label = false;
	jo->input = !strcmp(cmd->name, "run");
	for (int i = 0; i < a->nopts; i++) {
		const char *v = a->opts[i].val;

		switch (a->opts[i].id) {
		case 'n':
			jo->ranks = (uint32_t)sc_number_or_die(
				cmd->name, "option -n (--ranks)", v, 1,
				MAX_RANKS);
			ranks_given = true;
			break;
		case 'N':
			node_count = (uint32_t)sc_number_or_die(
				cmd->name, "option -N (--nodes)", v, 1,
				ST_MAX_NODES);
			break;
		case 'c':
			cpt = (uint32_t)sc_number_or_die(
				cmd->name, "option -c (--cpus-per-task)", v, 1,
				4096);
			break;
		case SC_OPT_TASKS_PER_NODE:
			tpn = (uint32_t)sc_number_or_die(
				cmd->name, "option --ntasks-per-node", v, 1,
				4096);
			break;
		case SC_OPT_CPU_BIND:
			if (strcmp(v, "none") && strcmp(v, "cores") &&
			    strcmp(v, "auto"))
				sc_die(SC_EXIT_USAGE, "%s: option --cpu-bind: "
				       "'%s' is not one of cores, none",
				       cmd->name, v);
			json_object_set_new(job, "cpu_bind", json_string(
				!strcmp(v, "none") ? "none" : "auto"));
			break;
		case 'w': {
			sp_nodeset_t *set = NULL;
			char err[256] = "", canon[4096];

			if (sp_nodeset_create(ST_MAX_NODES, &set) < 0)
				sc_die(SC_EXIT_FAILED, "out of memory");
			if (sp_nodeset_parse(set, v, err, sizeof(err)) < 0)
				sc_die(SC_EXIT_USAGE,
				       "%s: option -w (--nodelist): %s",
				       cmd->name,
				       err[0] ? err : "bad node list");
			if (sp_nodeset_count(set) == 0)
				sc_die(SC_EXIT_USAGE,
				       "%s: option -w (--nodelist): '%s' names "
				       "no "
				       "node", cmd->name, v);
			if (sp_nodeset_format(set, canon, sizeof(canon)) >=
			    (int)sizeof(canon))
				snprintf(canon, sizeof(canon), "%s", v);
			sp_nodeset_destroy(set);
			json_object_set_new(
				job, "nodes",
				jtext(cmd->name, "option -w", canon));
			break;
		}
		case 'l':
			jo->label = true;
			break;
		case 'i':
			if (strcmp(v, "0") && strcmp(v, "none"))
				sc_die(SC_EXIT_USAGE, "%s: option -i (--input): "
				       "'%s' is not one of 0 (rank 0 reads "
				       "this stdin), none", cmd->name, v);
			jo->input = !strcmp(v, "0");
			break;
		case SC_OPT_EXPORT:
			export_opt(cmd->name, v, env, &export_all);
			break;
		case SC_OPT_TIME_LIMIT:
			time_limit = sc_number_or_die(cmd->name,
						      "option --time-limit", v,
						      1, MAX_TIME_LIMIT_MS);
			break;
		case 't':
			time_limit = parse_slurm_time_or_die(cmd->name, v);
			break;
		case 'd': {
			static const char *const types[] = {
				"afterok", "afterany", "afternotok" };
			const char *colon = strchr(v, ':');
			bool known = false;

			for (size_t k = 0; colon && k < 3; k++)
				known |= strlen(types[k]) == (size_t)(colon - v) &&
					 !strncmp(v, types[k], (size_t)(colon - v));
			if (!known)
				sc_die(SC_EXIT_USAGE, "%s: option --dependency: "
				       "'%s' is not TYPE:JOB (afterok, afterany "
				       "or afternotok, then a job id: "
				       "afterok:12)", cmd->name, v);
			json_t *dep = jnew_or_die(json_object());
			char *type = strndup(v, (size_t)(colon - v));

			if (!type)
				sc_die(SC_EXIT_FAILED, "out of memory");
			json_object_set_new(dep, "type", json_string(type));
			free(type);
			json_object_set_new(dep, "job", json_integer(
				(json_int_t)sc_number_or_die(
					cmd->name, "option --dependency's job",
					colon + 1, 1, UINT32_MAX)));
			json_object_set_new(job, "dependency", dep);
			break;
		}
		case SC_OPT_ARRAY:
			json_object_set_new(job, "array",
					    parse_array_or_die(cmd->name, v));
			break;
		case SC_OPT_CHDIR:
			if (!v[0])
				sc_die(SC_EXIT_USAGE, "%s: option --chdir: "
				       "empty directory", cmd->name);
			free(chdir_to);
			chdir_to = absolute(cwd, v);
			break;
		case SC_OPT_MEM:
			mem = parse_size_or_die(cmd->name, v);
			break;
		case SC_OPT_CHECKPOINT:
			json_object_set_new(job, "checkpoint_s",
					    parse_interval_or_die(cmd->name, v));
			break;
		case SC_OPT_REQUEUE:
			json_object_set_new(job, "requeue", json_true());
			break;
		case SC_OPT_MPI:
			if (strcmp(v, "none") && strcmp(v, "bcs") &&
			    strcmp(v, "pmi1") && strcmp(v, "pmix"))
				sc_die(SC_EXIT_USAGE, "%s: option --mpi: '%s' "
				       "is not one of none, pmi1, pmix, bcs",
				       cmd->name, v);
			json_object_set_new(job, "mpi", json_string(v));
			break;
		case SC_OPT_BCS_TRACE:
		case SC_OPT_BCS_REPLAY: {
			const char *var = a->opts[i].id == SC_OPT_BCS_TRACE ?
					  "STORM_BCS_TRACE" :
					  "STORM_BCS_REPLAY";
			char *f, *kv;

			if (!v[0])
				sc_die(SC_EXIT_USAGE, "%s: option --%s: empty "
				       "path", cmd->name,
				       a->opts[i].id == SC_OPT_BCS_TRACE ?
				       "bcs-trace" : "bcs-replay");
			/* the node opens it as you: an absolute path */
			f = absolute(cwd, v);
			if (!f || asprintf(&kv, "%s=%s", var, f) < 0)
				sc_die(SC_EXIT_FAILED, "out of memory");
			json_array_append_new(env, jtext(cmd->name,
							 "the log's path",
							 kv));
			free(kv);
			free(f);
			break;
		}
		case SC_OPT_BCS_ORDER:
			if (strcmp(v, "deterministic") && strcmp(v, "arrival"))
				sc_die(SC_EXIT_USAGE, "%s: option --bcs-order: "
				       "'%s' is not one of deterministic, "
				       "arrival", cmd->name, v);
			json_object_set_new(job, "bcs_order", json_string(v));
			break;
		case SC_OPT_FILE: {
			char *f;

			if (!v[0])
				sc_die(SC_EXIT_USAGE,
				       "%s: option --file: empty path",
				       cmd->name);
			f = absolute(cwd, v);
			json_array_append_new(
				files, jtext(cmd->name, "option --file", f));
			free(f);
			break;
		}
		case SC_OPT_NAME:
			if (!v[0])
				sc_die(SC_EXIT_USAGE,
				       "%s: option --name: empty name",
				       cmd->name);
			name = v;
			break;
		case 'o':
			json_object_set_new(job, "stdout",
					    jtext(cmd->name, "option -o", v));
			break;
		case 'e':
			json_object_set_new(job, "stderr",
					    jtext(cmd->name, "option -e", v));
			break;
		default: /* the table let through an option we forgot */
			abort();
		}
	}

	if (export_all)
		export_environ(cmd->name, env);
	/* a step: by default as many ranks as its allocation has tasks */
	if (step_parent(cmd)) {
		const char *nt = getenv("STORM_NTASKS");

		json_object_set_new(job, "parent",
				    json_integer(step_parent(cmd)));
		if (!ranks_given && !node_count && !tpn && nt && nt[0])
			jo->ranks = (uint32_t)sc_number_or_die(
				cmd->name, "STORM_NTASKS", nt, 1, MAX_RANKS);
	}
	if (alloc)
		json_object_set_new(job, "alloc", json_true());
	/* the shape: without -n, a rank per node (or K of them) */
	if (!ranks_given && (node_count || tpn)) {
		uint64_t r = (uint64_t)(node_count ? node_count : 1) *
			     (tpn ? tpn : 1);

		if (r > MAX_RANKS)
			sc_die(SC_EXIT_USAGE, "%s: -N %u x --ntasks-per-node "
			       "%u is more than %u ranks", cmd->name,
			       node_count, tpn, MAX_RANKS);
		jo->ranks = (uint32_t)r;
	}
	if (node_count && node_count > jo->ranks)
		sc_die(SC_EXIT_USAGE, "%s: option -N %u: more nodes than the "
		       "%u rank(s); every node needs one", cmd->name,
		       node_count, jo->ranks);
	if (node_count && tpn && jo->ranks > (uint64_t)node_count * tpn)
		sc_die(SC_EXIT_USAGE, "%s: %u ranks do not fit -N %u "
		       "--ntasks-per-node %u", cmd->name, jo->ranks,
		       node_count, tpn);
	if (node_count)
		json_object_set_new(job, "node_count",
				    json_integer(node_count));
	if (cpt > 1)
		json_object_set_new(job, "cpus_per_task", json_integer(cpt));
	if (tpn)
		json_object_set_new(job, "tasks_per_node", json_integer(tpn));
	prog = resolve_program(cmd->name, cwd, a->operands[0]);
	json_array_append_new(argv, jtext(cmd->name, "the program path", prog));
	jo->nfds = 0;
	open_input(cmd->name, jo, "the program", prog);
	/* a batch script is no MPI program: its steps are */
	if (!json_object_get(job, "mpi") && !alloc) {
		const char *mpi = mpi_of(jo->fds[0]);

		if (!mpi)
			mpi = site_mpi(config_path);
		if (mpi)
			json_object_set_new(job, "mpi", json_string(mpi));
	}
	for (size_t i = 0; i < json_array_size(files); i++)
		open_input(cmd->name, jo, "--file",
			   json_string_value(json_array_get(files, i)));
	for (int i = 1; i < a->noperands; i++)
		json_array_append_new(argv, jtext(cmd->name, "an argument",
						  a->operands[i]));
	if (!name) {
		name = strrchr(prog, '/');
		name = name ? name + 1 : prog;
	}
	json_object_set_new(job, "name",
			    jtext(cmd->name, "the job name", name));
	json_object_set_new(job, "argv", argv);
	json_object_set_new(job, "ranks", json_integer(jo->ranks));
	json_object_set_new(job, "env", env);
	json_object_set_new(job, "cwd",
			    jtext(cmd->name, chdir_to ? "option --chdir" :
				  "the current directory",
				  chdir_to ? chdir_to : cwd));
	free(chdir_to);
	json_object_set_new(job, "files", files);
	json_object_set_new(job, "time_limit_ms",
			    json_integer((json_int_t)time_limit));
	if (mem)
		json_object_set_new(job, "mem_bytes",
				    json_integer((json_int_t)mem));
	json_object_set_new(job, "label", json_boolean(jo->label));
	free(prog);
	free(cwd);

	req = jnew_or_die(json_object());
	json_object_set_new(req, "op", json_string(
		!strcmp(cmd->name, "run") ? "run" : "submit"));
	json_object_set_new(req, "job", job);
	/* rank 0's stdin is no part of the job: the connection carries it */
	if (!strcmp(cmd->name, "run"))
		json_object_set_new(req, "stdin",
				    json_string(jo->input ? "0" : "none"));
	return req;
}

/* ---- submit ------------------------------------------------------------- */

int sc_cmd_submit(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		  const struct sc_args *args)
{
	return sc_submit_job(ctx, cmd, args, false);
}

int sc_submit_job(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		  const struct sc_args *args, bool alloc)
{
	struct job_opts jo;
	json_t *req = build_request(cmd, args, &jo, ctx->c.config_path,
				    alloc), *reply;
	json_t *arr = json_object_get(json_object_get(req, "job"), "array");
	int64_t count = arr ? sc_jint(arr, "count", 1) : 0;
	int64_t first = arr ? sc_jint(arr, "first", 0) : 0;
	int64_t step = arr ? sc_jint(arr, "step", 1) : 0;
	int64_t id;

	ctx->c.input_fds = jo.fds;
	ctx->c.ninputs = jo.nfds;
	reply = sc_call_or_die(ctx, cmd->name, req);
	id = sc_jint(reply, "job", -1);

	if (id < 0)
		sc_die(SC_EXIT_PROTO, "%s: the manager at %s accepted the job "
		       "but sent no job id", cmd->name, ctx->c.endpoint);
	if (ctx->json)
		sc_print_json(reply);
	else if (count) {
		char by[32] = "";

		if (step > 1)
			snprintf(by, sizeof(by), ":%lld", (long long)step);
		printf("Submitted array job %lld: tasks %lld-%lld%s, jobs "
		       "%lld-%lld\n", (long long)id, (long long)first,
		       (long long)(first + (count - 1) * step), by,
		       (long long)id, (long long)(id + count - 1));
	}
	else
		printf("Submitted %sjob %lld\n", alloc ? "batch " : "",
		       (long long)id);
	json_decref(reply);
	return SC_EXIT_OK;
}

/* ---- run: output -------------------------------------------------------- */

/* A rank's partial line on one stream, held until its newline so that with
 * -l lines of different ranks never interleave mid-line. */
struct linebuf {
	char *buf;
	size_t len, cap;
	bool midline; /* a long line was cut: its prefix is already out */
};

struct run_state {
	sc_ctx_t *ctx;
	int64_t job;
	uint32_t ranks;
	bool label;
	struct linebuf *lines; /* [rank * 2 + stream - 1] */
	size_t nlines;
	bool warned_stray;
};

static FILE *stream_file(int stream)
{
	return stream == 1 ? stdout : stderr;
}

static void put_line(FILE *f, uint32_t rank, bool prefix, const char *p,
		     size_t n)
{
	if (prefix)
		fprintf(f, "%u: ", rank);
	if (n) /* an empty buffer may still be NULL */
		fwrite(p, 1, n, f);
}

static struct linebuf *linebuf_of(struct run_state *rs, uint32_t rank,
				  int stream)
{
	size_t i = (size_t)rank * 2 + (size_t)stream - 1;

	if (i >= rs->nlines) {
		size_t n = rs->nlines ? rs->nlines : 16;
		struct linebuf *l;

		while (n <= i)
			n *= 2;
		l = realloc(rs->lines, n * sizeof(*l));
		if (!l)
			sc_die(SC_EXIT_FAILED, "out of memory");
		memset(l + rs->nlines, 0, (n - rs->nlines) * sizeof(*l));
		rs->lines = l;
		rs->nlines = n;
	}
	return &rs->lines[i];
}

static void linebuf_add(struct linebuf *lb, const char *p, size_t n)
{
	if (lb->len + n > lb->cap) {
		size_t cap = lb->cap ? lb->cap : 256;
		char *b;

		while (cap < lb->len + n)
			cap *= 2;
		b = realloc(lb->buf, cap);
		if (!b)
			sc_die(SC_EXIT_FAILED, "out of memory");
		lb->buf = b;
		lb->cap = cap;
	}
	memcpy(lb->buf + lb->len, p, n);
	lb->len += n;
}

static void emit_labelled(struct run_state *rs, uint32_t rank, int stream,
			  const uint8_t *data, size_t n)
{
	struct linebuf *lb = linebuf_of(rs, rank, stream);
	FILE *f = stream_file(stream);
	const char *p = (const char *)data, *end = p + n;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!nl) {
			linebuf_add(lb, p, (size_t)(end - p));
			break;
		}
		put_line(f, rank, !lb->midline, lb->buf, lb->len);
		fwrite(p, 1, (size_t)(nl - p) + 1, f);
		lb->len = 0;
		lb->midline = false;
		p = nl + 1;
	}
	/* A line without end (a progress bar) must not grow forever. */
	if (lb->len > LINE_MAX_BUF) {
		put_line(f, rank, !lb->midline, lb->buf, lb->len);
		lb->len = 0;
		lb->midline = true;
	}
}

static void flush_partial_lines(struct run_state *rs)
{
	for (size_t i = 0; i < rs->nlines; i++) {
		struct linebuf *lb = &rs->lines[i];
		FILE *f = stream_file((int)(i % 2) + 1);

		if (lb->len) {
			put_line(f, (uint32_t)(i / 2), !lb->midline, lb->buf,
				 lb->len);
			fputc('\n', f);
		}
		free(lb->buf);
	}
	free(rs->lines);
	rs->lines = NULL;
	rs->nlines = 0;
	fflush(stdout);
	fflush(stderr);
}

static void on_output(struct run_state *rs, const uint8_t *p, uint32_t len)
{
	uint32_t job, rank;
	int stream;
	const uint8_t *data;
	size_t n;

	if (st_output_decode(p, len, &job, &rank, &stream, &data, &n) < 0)
		sc_die(SC_EXIT_PROTO,
		       "run: bad output frame from the manager at %s",
		       rs->ctx->c.endpoint);
	if ((int64_t)job != rs->job || rank >= rs->ranks) {
		/* A manager bug, but the job's own result still matters
		 * more than this stray output: drop it, say so once. */
		if (!rs->warned_stray)
			sc_warn("run: dropping output for job %u rank %u "
				"(this is job %lld with %u ranks)", job, rank,
				(long long)rs->job, rs->ranks);
		rs->warned_stray = true;
		return;
	}
	if (rs->label) {
		emit_labelled(rs, rank, stream, data, n);
	} else {
		fwrite(data, 1, n, stream_file(stream));
	}
	/* Streaming: the user watches this as it happens. */
	fflush(stream_file(stream));
}

/* ---- run: the end ------------------------------------------------------- */

static int on_end(struct run_state *rs, const uint8_t *p, uint32_t len)
{
	json_error_t jerr;
	json_t *end = json_loadb((const char *)p, len, 0, &jerr);
	const char *state, *reason;
	int64_t code;
	int rc;

	flush_partial_lines(rs);
	if (!json_is_object(end))
		sc_die(SC_EXIT_PROTO,
		       "run: the manager at %s sent an unreadable end of job "
		       "%lld (%s)", rs->ctx->c.endpoint, (long long)rs->job,
		       end ? "not an object" : jerr.text);
	state = sc_jstr(end, "state", "?");
	reason = sc_jstr(end, "reason", "");
	code = sc_jint(end, "exit_code", 0);

	if (!strcmp(state, "COMPLETED") && code == 0) {
		rc = SC_EXIT_OK;
	} else if (!strcmp(state, "CANCELLED")) {
		sc_warn("job %lld cancelled%s%s", (long long)rs->job,
			reason[0] ? ": " : "", reason);
		rc = SC_EXIT_FAILED;
	} else if (code != 0) {
		/* The job's own exit code goes through; 256 would wrap to
		 * 0, which must not read as success. */
		if (!strcmp(state, "FAILED") && reason[0])
			sc_warn("job %lld failed: %s", (long long)rs->job,
				reason);
		rc = code > 0 && code < 256 ? (int)code : SC_EXIT_FAILED;
	} else {
		/* FAILED with exit code 0: a node died under it. */
		sc_warn("job %lld %s: %s", (long long)rs->job,
			!strcmp(state, "FAILED") ? "failed" : state,
			reason[0] ? reason : "no reason given");
		rc = SC_EXIT_FAILED;
	}
	json_decref(end);
	return rc;
}

/* ---- run: the loop ------------------------------------------------------ */

/* The only process-wide state in stormctl: a signal handler can reach
 * nothing else.  Read only with the signals blocked. */
static volatile sig_atomic_t signals_seen;

static void on_signal(int sig)
{
	(void)sig;
	signals_seen++;
}

static void request_cancel(struct run_state *rs)
{
	json_t *req = json_object(), *reply = NULL;
	char err[2048];
	int code;

	sc_warn("cancelling job %lld", (long long)rs->job);
	if (!req) {
		sc_warn("cancel: out of memory");
		return;
	}
	json_object_set_new(req, "op", json_string("cancel"));
	json_object_set_new(req, "job", json_integer(rs->job));
	code = sc_call_soft(rs->ctx, req, &reply, err, sizeof(err));
	json_decref(req);
	json_decref(reply);
	/* Keep waiting either way: the END frame, not this reply, says how
	 * the job ended. */
	if (code != SC_EXIT_OK)
		sc_warn("cancel: %s", err);
}

/* ---- run: stdin to rank 0 ----------------------------------------------- */

/* Our stdin, one STDIN frame at a time (docs/protocol.md 2.8): the next
 * is read only once the last is on the socket, and the socket takes it
 * only as fast as the manager passes it on, so a slow rank 0 holds us
 * back instead of filling memory anywhere. */
struct stdin_fwd {
	bool on;        /* forwarding (-i 0) and not yet done */
	bool reading;   /* our stdin may be read (no stop from the manager) */
	uint8_t *frame; /* the frame being sent: header and payload */
	size_t len, off;
	bool last;      /* it is the empty one: the end */
	uint64_t sent;  /* bytes of stdin on the socket */
};

static void fwd_queue(struct stdin_fwd *f, size_t n)
{
	st_frame_put_hdr(f->frame, ST_FRAME_STDIN, (uint32_t)n);
	f->len = ST_FRAME_HDR + n;
	f->off = 0;
	f->last = n == 0;
}

static void fwd_read(struct stdin_fwd *f)
{
	ssize_t n = read(0, f->frame + ST_FRAME_HDR, ST_STDIN_FRAME_MAX);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n < 0) { /* no stdin at all (closed: EBADF) is an empty one */
		if (errno != EBADF)
			sc_warn("run: reading stdin: %s; rank 0 reads end "
				"of file here", strerror(errno));
		n = 0;
	}
	fwd_queue(f, (size_t)n);
	f->reading = n > 0;
}

/* Put what the socket takes of the frame; the whole of it is sent before
 * anything else is read (a frame is never cut). */
static void fwd_write(struct stdin_fwd *f, int fd)
{
	while (f->off < f->len) {
		ssize_t n = send(fd, f->frame + f->off, f->len - f->off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) { /* the connection broke: the reader sees it */
			f->len = f->off = 0;
			return;
		}
		f->off += (size_t)n;
	}
	f->sent += f->len - ST_FRAME_HDR;
	if (f->last)
		f->on = f->reading = false;
	f->len = f->off = 0;
}

int sc_cmd_run(sc_ctx_t *ctx, const struct sc_cmd *cmd,
	       const struct sc_args *args)
{
	struct run_state rs = { .ctx = ctx };
	struct stdin_fwd fwd = { 0 };
	struct job_opts jo;
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, waitmask;
	json_t *req, *reply = NULL;
	char err[2048];
	int fd, rc, handled = 0, saved_errno, reattach = 0;

	req = build_request(cmd, args, &jo, ctx->c.config_path, false);
	rs.ranks = jo.ranks;
	rs.label = jo.label;
	if (jo.input) {
		fwd.frame = malloc(ST_FRAME_HDR + ST_STDIN_FRAME_MAX);
		if (!fwd.frame)
			sc_die(SC_EXIT_FAILED, "out of memory");
		fwd.on = fwd.reading = true;
	}
	ctx->c.input_fds = jo.fds; /* kept open: a reattach sends them again */
	ctx->c.ninputs = jo.nfds;

	/* Block first: a ^C while the job is being submitted is kept and
	 * becomes a cancel as soon as we know the job id. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &waitmask);
	sigdelset(&waitmask, SIGINT);
	sigdelset(&waitmask, SIGTERM);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* A closed stdout (| head) ends our copying, not the job's. */
	signal(SIGPIPE, SIG_IGN);

	rc = sc_request(ctx, req, &fd, &reply, err, sizeof(err));
	if (rc != SC_EXIT_OK) {
		json_decref(req);
		sc_die(rc, "run: %s", err);
	}
	rs.job = sc_jint(reply, "job", -1);
	json_decref(reply);
	if (rs.job < 0)
		sc_die(SC_EXIT_PROTO, "run: the manager at %s accepted the job "
		       "but sent no job id", ctx->c.endpoint);

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = fd, .events = POLLIN |
					      (fwd.len ? POLLOUT : 0) },
			{ .fd = fwd.on && fwd.reading && !fwd.len ? 0 : -1,
			  .events = POLLIN },
		};
		uint8_t *payload = NULL;
		uint32_t len;
		int type;

		rc = ppoll(p, 2, NULL, &waitmask);
		saved_errno = errno; /* the cancel below talks to sockets */
		if (signals_seen > handled) {
			int seen = signals_seen;

			if (handled == 0)
				request_cancel(&rs);
			if (seen >= 2) {
				flush_partial_lines(&rs);
				sc_die(SC_EXIT_FAILED,
				       "not waiting for job %lld any more; "
				       "'stormctl show %lld' tells how it ends",
				       (long long)rs.job, (long long)rs.job);
			}
			handled = seen;
		}
		if (rc < 0) {
			if (saved_errno == EINTR)
				continue;
			sc_die(SC_EXIT_UNREACH, "run: poll: %s",
			       strerror(saved_errno));
		}
		if (rc == 0)
			continue;
		if (p[1].revents) {
			fwd_read(&fwd);
			fwd_write(&fwd, fd);
		} else if (p[0].revents & POLLOUT) {
			fwd_write(&fwd, fd);
		}
		if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		/* Something is there: the rest of the frame follows at
		 * once, so a stall inside it is the manager's failure. */
		rc = st_frame_recv(fd, ctx->c.timeout_ms, &type, &payload, &len);
		if (rc < 0 && reattach < 32) {
			/* the replica went away: the same request (same
			 * sequence) to another one answers with the same job
			 * and follows it from there */
			close(fd);
			reattach++;
			rc = sc_request(ctx, req, &fd, &reply, err,
					sizeof(err));
			if (rc == SC_EXIT_OK) {
				json_decref(reply);
				sc_warn("run: the manager went away; following "
					"job %lld on %s", (long long)rs.job,
					ctx->c.endpoint);
				/* what the old one held is lost with it: rank
				 * 0's stdin ends after what reached it */
				if (fwd.on) {
					sc_warn("run: stdin not forwarded past "
						"the failover; rank 0 reads end "
						"of file after at most %llu "
						"bytes", (unsigned long long)
						fwd.sent);
					fwd.reading = false;
					fwd_queue(&fwd, 0);
					fwd_write(&fwd, fd);
				}
				continue;
			}
			rc = -ECONNRESET;
		}
		if (rc < 0) {
			flush_partial_lines(&rs);
			sc_die(sc_frame_error(ctx, rc, err, sizeof(err)),
			       "run: %s; job %lld may still be running "
			       "('stormctl show %lld')", err, (long long)rs.job,
			       (long long)rs.job);
		}
		if (type == ST_FRAME_OUTPUT) {
			on_output(&rs, payload, len);
		} else if (type == ST_FRAME_STDIN && !len) {
			/* rank 0 takes no more: stop reading (what is half
			 * sent goes whole, and is dropped there) */
			fwd.reading = false;
			if (!fwd.len)
				fwd.on = false;
		} else if (type == ST_FRAME_END) {
			rc = on_end(&rs, payload, len);
			free(payload);
			free(fwd.frame);
			close(fd);
			json_decref(req);
			return rc;
		} else {
			free(payload);
			flush_partial_lines(&rs);
			sc_die(SC_EXIT_PROTO,
			       "run: the manager at %s sent a frame of type %d "
			       "while job %lld ran", ctx->c.endpoint, type,
			       (long long)rs.job);
		}
		free(payload);
	}
}
