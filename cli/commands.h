/*
 * commands.h — stormctl's commands as data (private to cli/).  One record
 * per command holds its name, summary, operands, description, options and
 * handler; the same records drive option parsing and operand checking
 * (stormctl.c), `stormctl help` and `stormctl CMD --help` (cmd_help.c) and
 * the man page (cli/stormctl.1 is `stormctl help --man`, checked in).  To
 * add a command: write cli/cmd_NAME.c with its handler, add a record here.
 *
 * The table itself is defined once, in stormctl.c, which includes this
 * header with SC_COMMANDS_DEFINE set; everyone else sees the externs.
 */
#ifndef STORMCTL_COMMANDS_H
#define STORMCTL_COMMANDS_H

#include <stdio.h>

#include "client.h"

/* Option ids: a short option's letter, or one of these for long-only
 * options (above any character, so they never clash with a letter). */
enum {
	SC_OPT_EXPORT = 256,
	SC_OPT_TIME_LIMIT,
	SC_OPT_FILE,
	SC_OPT_NAME,
	SC_OPT_CONFIG,
	SC_OPT_SOCKET,
	SC_OPT_MANAGER,
	SC_OPT_MANAGERS,
	SC_OPT_JSON,
	SC_OPT_TIMEOUT,
	SC_OPT_VERSION,
	SC_OPT_MAN,
	SC_OPT_LIMIT,
	SC_OPT_MEM,
	SC_OPT_MPI,
	SC_OPT_BCS_ORDER,
	SC_OPT_BCS_TRACE,
	SC_OPT_BCS_REPLAY,
	SC_OPT_NO_WAIT,
	SC_OPT_EPOCH,
	SC_OPT_CHECKPOINT,
	SC_OPT_REQUEUE,
	SC_OPT_CHDIR,
	SC_OPT_TASKS_PER_NODE,
	SC_OPT_CPU_BIND,
	SC_OPT_REASON,
	SC_OPT_DEPENDENCY,
	SC_OPT_ARRAY,
};

/** One option.  The list ends with an all-zero record. */
struct sc_opt {
	int id;           /* short letter, or SC_OPT_* for long-only */
	const char *name; /* long name without "--" */
	const char *arg;  /* value placeholder, or NULL for a flag */
	const char *help; /* one sentence or two */
};

/** A parsed option in command-line order (repeatable ones repeat). */
struct sc_optval {
	int id;
	const char *val; /* NULL for a flag */
};

/** A command line after the table checked it. */
struct sc_args {
	struct sc_optval *opts;
	int nopts;
	char **operands;
	int noperands;
};

struct sc_cmd;
/** A command's handler: returns the exit code (or leaves through
 * sc_exit()/sc_die() itself). */
typedef int (*sc_handler_fn)(sc_ctx_t *ctx, const struct sc_cmd *cmd,
			     const struct sc_args *args);

struct sc_cmd {
	const char *name;
	const char *summary;     /* one line, for the list of commands */
	const char *operands;    /* usage after the options, or "" */
	const char *description; /* a paragraph */
	const struct sc_opt *opts;
	int min_operands;
	int max_operands;        /* -1: no limit */
	/* Options end at the first operand: what follows is a program's
	 * command line, not ours (run, submit). */
	bool options_first;
	sc_handler_fn handler;
};

/** One documented exit status. */
struct sc_exit_doc {
	const char *code; /* "0", "1", ..., "other" */
	const char *text;
};

/* The shared libraries the ELF program on fd asks for, each to fn (a
 * nonzero return stops): their count, or -1 if fd is not a 64-bit ELF
 * file (elfdeps.c). */
int sc_elf_needed(int fd, int (*fn)(const char *lib, void *ctx), void *ctx);

int sc_cmd_drain(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		 const struct sc_args *args);
int sc_cmd_resume(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		  const struct sc_args *args);
int sc_cmd_run(sc_ctx_t *ctx, const struct sc_cmd *cmd,
	       const struct sc_args *args);
int sc_cmd_submit(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		  const struct sc_args *args);
/* submit's work: the job, a batch allocation if alloc (cmd_run.c). */
int sc_submit_job(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		  const struct sc_args *args, bool alloc);
int sc_cmd_batch(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		 const struct sc_args *args);
/* Parse argv[1..] against opts as the driver does (stormctl.c): the
 * index of the first operand; the options in out (malloc'd).  A bad one
 * is a usage error (exit 2). */
int sc_parse_opts(const struct sc_cmd *cmd, const struct sc_opt *opts,
		  bool stop_at_operand, int argc, char **argv,
		  struct sc_args *out);
int sc_cmd_queue(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		 const struct sc_args *args);
int sc_cmd_show(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		const struct sc_args *args);
int sc_cmd_history(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		   const struct sc_args *args);
int sc_cmd_checkpoint(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		      const struct sc_args *args);
int sc_cmd_restart(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		   const struct sc_args *args);
int sc_cmd_cancel(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		  const struct sc_args *args);
int sc_cmd_nodes(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		 const struct sc_args *args);
int sc_cmd_managers(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		    const struct sc_args *args);
int sc_cmd_matrix(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		  const struct sc_args *args);
int sc_cmd_status(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		  const struct sc_args *args);
int sc_cmd_help(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		const struct sc_args *args);

extern const struct sc_cmd sc_commands[];
extern const size_t sc_ncommands;
extern const struct sc_opt sc_global_opts[];
extern const struct sc_exit_doc sc_exit_docs[];

/** The command called name, or NULL. */
const struct sc_cmd *sc_command_find(const char *name);
/** Print cmd's usage line(s) to f ("Usage: stormctl [OPTIONS] run ..."). */
void sc_print_usage(const struct sc_cmd *cmd, FILE *f);
/** Print the full help of cmd (usage, description, options) to stdout. */
void sc_print_cmd_help(const struct sc_cmd *cmd);
/** Print the general help (global options, commands, exit status). */
void sc_print_help(void);
/** Die with SC_EXIT_USAGE: "stormctl: CMD: what" and a hint to --help. */
_Noreturn void sc_usage_die(const struct sc_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#ifdef SC_COMMANDS_DEFINE

/* Shared by run and submit: the job specification. */
#define SC_JOB_OPTS                                                          \
	{ 'n', "ranks", "RANKS",                                             \
	  "Number of processes to start (1-1048576; default 1, or NODES x " \
	  "the tasks per node)." },                                          \
	{ 'N', "nodes", "N",                                                 \
	  "Run on exactly N nodes, the ranks spread evenly (the first "      \
	  "ranks % N nodes one more), as Slurm's -N." },                     \
	{ 'c', "cpus-per-task", "C",                                         \
	  "Each rank holds C cpus of its node (bound to them)." },           \
	{ SC_OPT_TASKS_PER_NODE, "ntasks-per-node", "K",                     \
	  "At most K ranks on a node." },                                    \
	{ SC_OPT_CPU_BIND, "cpu-bind", "BIND",                               \
	  "cores (the default: each rank bound to its cpus where the "       \
	  "node's configuration describes the machine) or none." },          \
	{ 'd', "dependency", "TYPE:JOB",                                     \
	  "Start only once job JOB ended: afterok (it COMPLETED), afterany " \
	  "(whatever its end) or afternotok (it FAILED or was cancelled); "  \
	  "one that can no longer be met cancels this job, saying why."  },  \
	{ 'w', "nodelist", "NODES",                                          \
	  "Run only on these node ids, a range list such as 1-3,7." },       \
	{ 'l', "label", NULL,                                                \
	  "Prefix every output line with its rank, as \"RANK: \"." },       \
	{ SC_OPT_EXPORT, "export", "VARS",                                   \
	  "The job's environment, as srun's: without the option, all of "   \
	  "yours (but what Storm sets per rank: STORM_RANK, PMI_FD...); "  \
	  "ALL, NONE, or NAME=VALUE and "                                    \
	  "NAME (your value) words separated by commas.  Repeatable; "       \
	  "without ALL only the variables named go." },                      \
	{ 't', "time", "TIME",                                               \
	  "End the job as FAILED once it has run this long, in Slurm's "     \
	  "syntax: MM (a bare number is minutes), MM:SS, HH:MM:SS, "         \
	  "D-HH, D-HH:MM or D-HH:MM:SS (without it or --time-limit: no "    \
	  "limit)." },                                                       \
	{ SC_OPT_TIME_LIMIT, "time-limit", "MS",                             \
	  "The same limit in milliseconds (1 or more)." },                   \
	{ SC_OPT_CHDIR, "chdir", "DIR",                                      \
	  "Run the ranks in DIR (made absolute here; default: the current " \
	  "directory).  Each node enters it as you." },                      \
	{ SC_OPT_MEM, "mem", "SIZE",                                         \
	  "Limit the memory of the job's processes on each node to SIZE "    \
	  "(a number of MiB, or with a suffix K, M, G or T); a job over it " \
	  "is ended by the kernel and FAILED with that reason." },           \
	{ SC_OPT_CHECKPOINT, "checkpoint", "INTERVAL",                       \
	  "Checkpoint the job every INTERVAL (seconds, or with a suffix s, " \
	  "m or h; at most a year), or auto: an interval from what its "    \
	  "checkpoints cost and the nodes' MTBF (ckpt_mtbf_h).  A job "      \
	  "whose node dies runs on from its last one (its images have a "   \
	  "copy on another node, and in ckpt_shared_dir if set; "           \
	  "docs/checkpoint.md)." },                                          \
	{ SC_OPT_REQUEUE, "requeue", NULL,                                   \
	  "If a node of the job dies, queue it again rather than fail it: "  \
	  "it runs on from its last checkpoint that survives the node, or "  \
	  "from the start if none does (what it wrote before is not "        \
	  "undone)." },                                                      \
	{ SC_OPT_MPI, "mpi", "KIND",                                         \
	  "What the ranks communicate with: none, pmi1 (an MPI of its "     \
	  "own, such as MPICH, started through PMI-1 on PMI_FD), pmix "      \
	  "(Open MPI 4, started as a foreign launcher starts it) or bcs "    \
	  "(Storm's BCS-MPI: each node's engine sets up the job's "          \
	  "communication; programs built with bcsmpicc or bcsmpifort, or "  \
	  "with MPICH's mpicc or mpif90, unchanged).  By default, from "     \
	  "the libraries the program asks for: libmpich.so.12 pmi1, "        \
	  "libmpi.so.40 pmix, "                                             \
	  "libbcsmpi.so.0 bcs, else the configuration's mpi_default "       \
	  "(none unless the site sets one)." },                              \
	{ SC_OPT_BCS_ORDER, "bcs-order", "ORDER",                            \
	  "With --mpi=bcs: deterministic (the default: MPI_ANY_SOURCE "      \
	  "receives match in an order the program alone decides) or "       \
	  "arrival (first come, first matched; to measure what "            \
	  "determinism costs)." },                                           \
	{ SC_OPT_BCS_TRACE, "bcs-trace", "FILE",                             \
	  "With --mpi=bcs: write the job's match log to FILE (as you; a "   \
	  "line per message matched, which receive took which send)." },    \
	{ SC_OPT_BCS_REPLAY, "bcs-replay", "FILE",                           \
	  "With --mpi=bcs: make every receive take the send a match log "   \
	  "(--bcs-trace) names; a run that cannot stops FAILED naming the " \
	  "first differing match." },                                        \
	{ SC_OPT_FILE, "file", "PATH",                                       \
	  "Send PATH (a regular file) to the nodes along with the program, " \
	  "into the job's directory ($STORM_JOB_DIR).  Repeatable; the "     \
	  "program and the files together at most the manager's "           \
	  "max_input_mib (default 1024 MiB)." },                             \
	{ SC_OPT_NAME, "name", "NAME",                                       \
	  "Name the job (default: the program's file name)." }

static const struct sc_opt run_opts[] = {
	SC_JOB_OPTS,
	{ 'i', "input", "WHICH",
	  "Where this process's stdin goes: 0 (the default) forwards it to "
	  "rank 0 of the job, as srun's --input=0, which reads end of file "
	  "once stormctl's stdin ends; none gives rank 0 end of file at "
	  "once.  The other ranks always read /dev/null.  If rank 0 exits "
	  "or closes its stdin, stormctl stops reading it." },
	{ 0, NULL, NULL, NULL },
};

static const struct sc_opt drain_opts[] = {
	{ SC_OPT_REASON, "reason", "TEXT",
	  "Why (required; at most 150 bytes): stormctl nodes shows it." },
	{ 0, NULL, NULL, NULL },
};

static const struct sc_opt submit_opts[] = {
	SC_JOB_OPTS,
	{ SC_OPT_ARRAY, "array", "TASKS",
	  "An array of jobs, one per task number: A-B (A to B), A-B:S (every "
	  "S-th), N (one), each optionally %M (at most M running at once): "
	  "--array 0-99%10.  Each task's ranks find STORM_ARRAY_JOB_ID and "
	  "STORM_ARRAY_TASK_ID; at most 10000 tasks." },
	{ 'o', "output", "PATTERN",
	  "Append the ranks' stdout to PATTERN, written on the nodes as "
	  "you (default storm-%j.out); %j stands for the job id, %r for "
	  "the rank: with %r each rank's node writes that rank's file, "
	  "without it the node of rank 0 writes them all.  Relative to "
	  "the working directory; a path you may not write or a symbolic "
	  "link fails the job; /dev/null drops the stream." },
	{ 'e', "error", "PATTERN",
	  "Append the ranks' stderr to PATTERN (default storm-%j.err; the "
	  "same substitutions and rules)." },
	{ 0, NULL, NULL, NULL },
};

static const struct sc_opt batch_opts[] = {
	SC_JOB_OPTS,
	{ 'o', "output", "PATTERN",
	  "Append the script's stdout to PATTERN, written on its node as you "
	  "(default storm-%j.out, %j the job id; the same rules as "
	  "submit's)." },
	{ 'e', "error", "PATTERN",
	  "Append the script's stderr to PATTERN (default storm-%j.err)." },
	{ 0, NULL, NULL, NULL },
};

static const struct sc_opt queue_opts[] = {
	{ 'a', "all", NULL, "Also list jobs that have ended." },
	{ 0, NULL, NULL, NULL },
};

static const struct sc_opt history_opts[] = {
	{ 'u', "user", "USER",
	  "Only jobs of USER (a name or uid).  A user other than root or an "
	  "administrator sees only their own jobs." },
	{ 's', "state", "STATE",
	  "Only jobs that ended so: COMPLETED, FAILED or CANCELLED; a "
	  "comma list or repeated." },
	{ SC_OPT_NAME, "name", "PATTERN",
	  "Only jobs whose name matches PATTERN (a shell glob)." },
	{ 'S', "since", "TIME",
	  "Only jobs that ran at or after TIME: now, -Nh / -Nd (that long "
	  "ago; also s, m), YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] (local time) "
	  "or milliseconds since the epoch." },
	{ 'E', "until", "TIME",
	  "Only jobs submitted at or before TIME (same forms)." },
	{ SC_OPT_LIMIT, "limit", "N",
	  "List at most N jobs (1-1000000, default 1000)." },
	{ 0, NULL, NULL, NULL },
};

static const struct sc_opt help_opts[] = {
	{ SC_OPT_MAN, "man", NULL,
	  "Print the manual page (troff) built from the same table." },
	{ 0, NULL, NULL, NULL },
};

static const struct sc_opt checkpoint_opts[] = {
	{ SC_OPT_NO_WAIT, "no-wait", NULL,
	  "Ask for the checkpoint and print its epoch; do not wait for it "
	  "to be committed." },
	{ SC_OPT_REQUEUE, "requeue", NULL,
	  "Once the epoch is committed, end the job's processes and queue "
	  "it again, to run on from that epoch where the scheduler places "
	  "it (to free its nodes: a drain, a preemption).  If the epoch "
	  "fails the job runs on where it is." },
	{ 0, NULL, NULL, NULL },
};

static const struct sc_opt restart_opts[] = {
	{ SC_OPT_EPOCH, "epoch", "E",
	  "Run on from committed epoch E (default: the last one)." },
	{ 0, NULL, NULL, NULL },
};

static const struct sc_opt no_opts[] = {
	{ 0, NULL, NULL, NULL },
};

const struct sc_opt sc_global_opts[] = {
	{ SC_OPT_CONFIG, "config", "FILE",
	  "The cluster configuration, read only to find the manager "
	  "(default: $STORM_CONFIG, else /etc/storm/storm.conf).  Not "
	  "needed with --socket or --manager." },
	{ SC_OPT_SOCKET, "socket", "PATH",
	  "Talk to storm-mm over this unix socket (default: every "
	  "replica's RUN_DIR/storm-mm-NAME.sock that exists here, then "
	  "every replica's listen address, from the configuration)." },
	{ SC_OPT_MANAGER, "manager", "HOST:PORT",
	  "Talk to this one storm-mm over TCP." },
	{ SC_OPT_MANAGERS, "managers", "H:P,H:P,...",
	  "The manager replicas' TCP addresses, tried in turn: a request "
	  "that meets a dead replica, one without quorum or one catching "
	  "up goes to the next with the same sequence number, so it is "
	  "applied exactly once." },
	{ SC_OPT_JSON, "json", NULL,
	  "Print the manager's reply as indented JSON instead of a table." },
	{ SC_OPT_TIMEOUT, "timeout", "MS",
	  "Wait at most MS milliseconds to connect and for each reply "
	  "(1-86400000, default 10000).  run waits for its job's end "
	  "without a limit." },
	{ SC_OPT_VERSION, "version", NULL, "Print the version and exit." },
	{ 'h', "help", NULL, "Print help and exit." },
	{ 0, NULL, NULL, NULL },
};

const struct sc_cmd sc_commands[] = {
	{
		.name = "run",
		.summary = "run a program on the cluster and wait for it",
		.operands = "[--] PROGRAM [ARGS...]",
		.description =
			"Starts RANKS copies of PROGRAM as one job, copies "
			"their output to this terminal as it arrives, "
			"forwards this stdin to rank 0 (-i), and "
			"exits with the job's exit code.  Every rank runs "
			"as you: your uid and primary group as the manager "
			"authenticated them, your supplementary groups from "
			"the node's NSS, your environment (or what --export "
			"names), STORM_*, and PATH, HOME, USER, LOGNAME, "
			"SHELL where you set none "
			"(docs/security.md).  PROGRAM is made "
			"absolute here: a name without '/' is looked up in "
			"PATH, a relative path is taken from the current "
			"directory, which is also the job's working "
			"directory.  stormctl opens PROGRAM and each --file "
			"itself, with your rights, and hands them to the "
			"manager: as open descriptors on the unix socket, as "
			"their bytes over TCP; the manager never opens your "
			"paths.  The job is accepted only once a majority of "
			"the manager replicas hold a copy of those bytes, so "
			"a head's failure after the answer loses nothing; "
			"when too few can be reached the job is refused (exit "
			"1) and submitting again is safe.  "
			"One you cannot read is an error here (exit "
			"2); one that is not a regular file (a FIFO), or "
			"inputs over the manager's max_input_mib, are refused "
			"by the manager (exit 1).  The first SIGINT or SIGTERM asks the "
			"manager to cancel the job and keeps waiting for its "
			"end; a second one stops waiting.",
		.opts = run_opts,
		.min_operands = 1,
		.max_operands = -1,
		.options_first = true,
		.handler = sc_cmd_run,
	},
	{
		.name = "submit",
		.summary = "queue a program as a batch job and return",
		.operands = "[--] PROGRAM [ARGS...]",
		.description =
			"Queues the job like run does and prints \"Submitted "
			"job N\" without waiting.  Its output goes to the "
			"files named by -o and -e, written by the nodes with "
			"your rights.",
		.opts = submit_opts,
		.min_operands = 1,
		.max_operands = -1,
		.options_first = true,
		.handler = sc_cmd_submit,
	},
	{
		.name = "batch",
		.summary = "queue a batch script: an allocation for its steps",
		.operands = "[--] SCRIPT [ARGS...]",
		.description =
			"Queues an allocation of the shape the options ask "
			"for (-n tasks, -N nodes, -c cpus per task, ...) and "
			"prints \"Submitted batch job N\".  Once it starts, "
			"its first node runs SCRIPT as you, with ARGS, "
			"STORM_JOB_ID=N, STORM_NTASKS (its tasks) and "
			"STORM_NODELIST; the other tasks' cpus stay held for "
			"its steps.  Options come from the script's #STORM "
			"lines (\"#STORM -n 8 -t 30\", one or more options a "
			"line, read up to its first command, as sbatch reads "
			"#SBATCH), then from the command line, which wins.  "
			"SCRIPT must start with #! (#!/bin/sh); a bad #STORM "
			"line is refused naming the line (exit 2), and "
			"nothing is queued.  Inside it, stormctl run starts "
			"a step: a job of its own (state, exit code, usage: "
			"stormctl show), on free task slots of the "
			"allocation (all of them without -n), stopped and "
			"continued with it; a step that finds no free slots "
			"waits for one to end.  When the script ends, the "
			"allocation ends with its exit code and its steps "
			"still running are cancelled (docs/batch.md).",
		.opts = batch_opts,
		.min_operands = 1,
		.max_operands = -1,
		.options_first = true,
		.handler = sc_cmd_batch,
	},
	{
		.name = "queue",
		.summary = "list pending and running jobs",
		.operands = "",
		.description =
			"Lists the jobs that have not ended yet (all jobs "
			"with -a): id, name, user, state, ranks, nodes, the "
			"matrix row of a job holding PEs, elapsed time, the "
			"expected start of a pending job and the reason for "
			"the state (for a pending job: why it waits).  The "
			"expected start (\"in 12s\", \"now\") replays the "
			"scheduler with every job running to its time limit; "
			"\"-\" means unknown: the job waits for jobs without "
			"a time limit, or is past the first 256 pending.",
		.opts = queue_opts,
		.min_operands = 0,
		.max_operands = 0,
		.handler = sc_cmd_queue,
	},
	{
		.name = "show",
		.summary = "show everything about one job",
		.operands = "JOB",
		.description =
			"Prints every field the manager keeps for job JOB, "
			"including each rank's exit status; for a job holding "
			"PEs its matrix row and buddy block, for a pending "
			"one why it waits and its expected start.",
		.opts = no_opts,
		.min_operands = 1,
		.max_operands = 1,
		.handler = sc_cmd_show,
	},
	{
		.name = "history",
		.summary = "list jobs that ended, from the job history",
		.operands = "",
		.description =
			"Lists the jobs that ended and left the manager's "
			"replicated state after its retention (job_retention "
			"ended jobs, or job_retention_s seconds), most "
			"recently ended first, like sacct: id, name, user, "
			"final state, ranks, nodes, elapsed time, end time "
			"and exit code.  Every manager replica holds the same "
			"history (the last history_jobs job ids, ended within "
			"history_days); show JOB and queue -a find these jobs "
			"too.  A user sees their own jobs; root and the "
			"configured administrators everyone's.",
		.opts = history_opts,
		.min_operands = 0,
		.max_operands = 0,
		.handler = sc_cmd_history,
	},
	{
		.name = "cancel",
		.summary = "cancel jobs",
		.operands = "JOB...",
		.description =
			"Cancels each JOB: pending jobs never start, running "
			"ones are killed on every node.  Carries on past a job "
			"it cannot cancel and then exits 1.",
		.opts = no_opts,
		.min_operands = 1,
		.max_operands = -1,
		.handler = sc_cmd_cancel,
	},
	{
		.name = "drain",
		.summary = "take nodes out of service",
		.operands = "NODES...",
		.description =
			"Drains each node of NODES (names, nm[1-4] ranges, or "
			"world ids, comma-separated): no new job is placed on "
			"it; its running jobs run to their end, or, for jobs "
			"that take checkpoints (--checkpoint, --requeue), are "
			"checkpointed and queued again to run on elsewhere.  "
			"stormctl nodes shows it DRAINING while jobs hold it, "
			"then DRAINED, with the reason.  Root and the "
			"configured administrators only.  Every name is "
			"checked first: a typo drains nothing.",
		.opts = drain_opts,
		.min_operands = 1,
		.max_operands = -1,
		.handler = sc_cmd_drain,
	},
	{
		.name = "resume",
		.summary = "put drained nodes back in service",
		.operands = "NODES...",
		.description =
			"Resumes each node of NODES (as drain names them): "
			"jobs are placed on it again.  Root and the configured "
			"administrators only.",
		.opts = no_opts,
		.min_operands = 1,
		.max_operands = -1,
		.handler = sc_cmd_resume,
	},
	{
		.name = "checkpoint",
		.summary = "checkpoint a running job",
		.operands = "JOB",
		.description =
			"Takes a checkpoint of JOB now: every node stops the "
			"job's ranks only while their memory is captured, "
			"writes their images (each the job owner's, mode 0600) "
			"and the epoch is committed in the replicated catalog "
			"once every node has them; an epoch that fails anywhere "
			"is discarded everywhere and the job runs on.  Waits "
			"for the commit (at most --timeout) and prints the "
			"epoch, its size and how long the job was stopped; "
			"exits 1 with the reason if it failed.  The job's "
			"owner, root or an administrator may ask; show JOB "
			"lists its epochs.  Jobs of BCS-MPI ranks cannot be "
			"checkpointed yet.",
		.opts = checkpoint_opts,
		.min_operands = 1,
		.max_operands = 1,
		.handler = sc_cmd_checkpoint,
	},
	{
		.name = "restart",
		.summary = "run a job on from a checkpoint",
		.operands = "JOB",
		.description =
			"Ends JOB's processes and queues it again, to run on "
			"from its last committed checkpoint epoch (or --epoch "
			"E) on the nodes the scheduler gives it: each rank is "
			"restored from its images, as its owner.  A job whose "
			"node fails restarts by itself when its last epoch has "
			"a copy that outlives the node (on its buddy node, "
			"L2, or in ckpt_shared_dir, L3).  "
			"Refused for a job with no committed epoch, an epoch "
			"not in its catalog (show JOB lists them), or a job "
			"that ended.",
		.opts = restart_opts,
		.min_operands = 1,
		.max_operands = 1,
		.handler = sc_cmd_restart,
	},
	{
		.name = "nodes",
		.summary = "list compute nodes and their state",
		.operands = "",
		.description =
			"Lists every compute node: id, name, UP or DOWN, cpus, "
			"cpus in use, failures seen, service time observed "
			"(time UP), observed MTTF (service time per failure "
			"+ 1, what molar placement prefers) and why it is "
			"down.",
		.opts = no_opts,
		.min_operands = 0,
		.max_operands = 0,
		.handler = sc_cmd_nodes,
	},
	{
		.name = "matrix",
		.summary = "show the scheduling matrix: rows, PEs, jobs",
		.operands = "",
		.description =
			"Prints the scheduler's settings (policy, MPL, "
			"quantum, placement), the slice and the row whose "
			"jobs run in it, the matrix digest, then the matrix: "
			"one line per row (time slot), one column per PE "
			"headed NODE.CPU, each cell the job holding it or "
			"\"-\"; \"*\" marks the active row.  Wide machines "
			"are printed in bands of columns.  Last, each job "
			"holding PEs with its row and buddy block "
			"[COLUMN,+WIDTH).  Any manager replica answers; one "
			"that is not the strobe master takes the slice from "
			"its clock.",
		.opts = no_opts,
		.min_operands = 0,
		.max_operands = 0,
		.handler = sc_cmd_matrix,
	},
	{
		.name = "managers",
		.summary = "show the manager replicas",
		.operands = "",
		.description =
			"Prints each configured manager replica as the "
			"answering one sees it: whether it is a member of the "
			"replication group, synced, the strobe master, and "
			"its last applied operation; then this replica's "
			"quorum and view.",
		.opts = no_opts,
		.min_operands = 0,
		.max_operands = 0,
		.handler = sc_cmd_managers,
	},
	{
		.name = "status",
		.summary = "summarise the cluster",
		.operands = "",
		.description =
			"Prints the cluster name, the manager answering, the "
			"current time slice and view, and counts of nodes and "
			"jobs.",
		.opts = no_opts,
		.min_operands = 0,
		.max_operands = 0,
		.handler = sc_cmd_status,
	},
	{
		.name = "help",
		.summary = "print help on stormctl or on one command",
		.operands = "[COMMAND]",
		.description =
			"Without COMMAND, lists the global options, the "
			"commands and the exit status; with it, that "
			"command's options.  `stormctl COMMAND --help` does "
			"the same.",
		.opts = help_opts,
		.min_operands = 0,
		.max_operands = 1,
		.handler = sc_cmd_help,
	},
};

const size_t sc_ncommands = sizeof(sc_commands) / sizeof(sc_commands[0]);

const struct sc_exit_doc sc_exit_docs[] = {
	{ "0", "Success." },
	{ "1", "The job failed or was cancelled, or the manager refused the "
	       "request (for example: no such job)." },
	{ "2", "Usage error: an unknown option, a bad number or operand, a "
	       "program or --file you cannot read, or a configuration file "
	       "that cannot be read.  The message names the option or the "
	       "file." },
	{ "3", "The manager could not be reached, did not answer within "
	       "--timeout, or closed the connection.  The message names the "
	       "socket or address tried." },
	{ "4", "Protocol error: the manager sent a frame or a reply stormctl "
	       "cannot read (mismatched versions?)." },
	{ "other", "run only: the job ran and exited with this code." },
	{ NULL, NULL },
};

#endif /* SC_COMMANDS_DEFINE */

#endif /* STORMCTL_COMMANDS_H */
