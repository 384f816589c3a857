/*
 * test_proto_config.c — the cluster configuration file (proto/config.c)
 * against the contract in storm_proto.h and docs/config.md: every key is
 * read, defaults fill the rest, world ids put managers first in file order,
 * every content error names "FILE:LINE" (or the file and the section/key
 * when no line is to blame) and leaves *cfg zeroed, a missing file says how
 * to name another, and a seeded fuzz loop over mutated files never crashes
 * or leaks (run it under -Db_sanitize=address,undefined).
 * STORM_FUZZ_SEED=N replays the fuzz loop.
 *
 * Files are written into a mkdtemp() directory removed when the group ends.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <cmocka.h>

#include "fuzz_rng.h"

#include <storm_proto.h>

/* ---- fixture: a temporary directory ------------------------------------ */

static char tmpdir[] = "/tmp/storm-test-proto-config-XXXXXX";

static int group_setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	char path[4096];

	(void)state;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmpdir, e->d_name);
		unlink(path);
	}
	closedir(d);
	return rmdir(tmpdir);
}

/* Write len bytes of text to tmpdir/name; the path goes into path. */
static void write_bytes(const char *name, const void *text, size_t len,
			char *path, size_t cap)
{
	FILE *f;

	assert_true((size_t)snprintf(path, cap, "%s/%s", tmpdir, name) < cap);
	f = fopen(path, "w");
	assert_non_null(f);
	if (len)
		assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void write_file(const char *name, const char *text, char *path,
		       size_t cap)
{
	write_bytes(name, text, strlen(text), path, cap);
}

static int is_zeroed(const st_config_t *c)
{
	static const st_config_t zero;

	return memcmp(c, &zero, sizeof(zero)) == 0;
}

/* Load text; it must fail with -STORM_ECONFIG, err must start with
 * "PATH:LINE:" and contain needle, and *cfg must be left zeroed. */
static void expect_line_error(const char *text, unsigned line,
			      const char *needle)
{
	char path[4096], err[512], want[4200];
	st_config_t cfg;
	int rc;

	write_file("line-error.conf", text, path, sizeof(path));
	memset(&cfg, 0xa5, sizeof(cfg));
	err[0] = '\0';
	rc = st_config_load(path, &cfg, err, sizeof(err));
	if (rc == 0)
		st_config_free(&cfg); /* no leak on the way to failing */
	if (rc != -STORM_ECONFIG)
		fail_msg("want -STORM_ECONFIG for line %u (%s), got %d: \"%s\""
			 "\n--- file ---\n%s", line, needle, rc, err, text);
	snprintf(want, sizeof(want), "%s:%u:", path, line);
	if (strncmp(err, want, strlen(want)) != 0)
		fail_msg("want err starting \"%s\", got \"%s\"", want, err);
	if (needle && !strstr(err, needle))
		fail_msg("want err mentioning \"%s\", got \"%s\"", needle, err);
	assert_int_equal(cfg.nmanagers, 0);
	assert_int_equal(cfg.nnodes, 0);
	assert_null(cfg.nodes);
	assert_null(cfg.managers);
	assert_true(is_zeroed(&cfg));
	unlink(path);
}

/* Load text; it must fail with -STORM_ECONFIG without a line: err starts
 * with "PATH: " and mentions each of the needles. */
static void expect_file_error(const char *text, const char *needle1,
			      const char *needle2)
{
	char path[4096], err[512], want[4200];
	st_config_t cfg;
	int rc;

	write_file("file-error.conf", text, path, sizeof(path));
	memset(&cfg, 0xa5, sizeof(cfg));
	err[0] = '\0';
	rc = st_config_load(path, &cfg, err, sizeof(err));
	if (rc == 0)
		st_config_free(&cfg);
	if (rc != -STORM_ECONFIG)
		fail_msg("want -STORM_ECONFIG (%s), got %d: \"%s\"", needle1, rc,
			 err);
	snprintf(want, sizeof(want), "%s: ", path);
	if (strncmp(err, want, strlen(want)) != 0)
		fail_msg("want err starting \"%s\", got \"%s\"", want, err);
	if (needle1 && !strstr(err, needle1))
		fail_msg("want err mentioning \"%s\", got \"%s\"", needle1, err);
	if (needle2 && !strstr(err, needle2))
		fail_msg("want err mentioning \"%s\", got \"%s\"", needle2, err);
	assert_true(is_zeroed(&cfg));
	unlink(path);
}

/* Load text that must load; the caller frees *cfg. */
static void load_ok(const char *name, const char *text, st_config_t *cfg)
{
	char path[4096], err[512] = "";
	int rc;

	write_file(name, text, path, sizeof(path));
	rc = st_config_load(path, cfg, err, sizeof(err));
	if (rc != 0)
		fail_msg("want 0, got %d: \"%s\"", rc, err);
	assert_string_equal(cfg->path, path);
}

/* Every [cluster] key; managers and nodes interleaved so that world ids
 * must be managers-first rather than file order overall. */
static const char good_file[] =
	"; the cluster\n"                 /*  1 */
	"[cluster]\n"                     /*  2 */
	"name = alpha\n"                  /*  3 */
	"provider = shm\n"                /*  4 */
	"slice_us = 2500\n"               /*  5 */
	"hb_period_ms = 20\n"             /*  6 */
	"hb_timeout_ms = 400\n"           /*  7 */
	"chunk_kib = 256\n"               /*  8 */
	"slots = 8\n"                     /*  9 */
	"output_kib = 128\n"              /* 10 */
	"ramdisk = /tmp/rd\n"             /* 11 */
	"state_dir = /tmp/state\n"        /* 12 */
	"run_dir = /tmp/run\n"            /* 13 */
	"log = syslog\n"                  /* 14 */
	"log_level = debug\n"             /* 15 */
	"\n"                              /* 16 */
	"[manager mm0]\n"                 /* 17 */
	"address = 10.0.0.1:7000\n"       /* 18 */
	"listen = 10.0.0.1:7100\n"        /* 19 */
	"\n"                              /* 20 */
	"# a node between the managers\n" /* 21 */
	"[node n1]\n"                     /* 22 */
	"address = 10.0.1.1:7000\n"       /* 23 */
	"cpus = 16\n"                     /* 24 */
	"\n"                              /* 25 */
	"[manager mm1]\n"                 /* 26 */
	"address = 10.0.0.2:7000\n"       /* 27 */
	"\n"                              /* 28 */
	"[node n2]\n"                     /* 29 */
	"address = 10.0.1.2:7000\n"       /* 30 */
	"\n"                              /* 31 */
	"[node n3]\n"                     /* 32 */
	"address = 10.0.1.3:7000\n"       /* 33 */
	"cpus = 4\n";                     /* 34 */

/* The smallest file that loads. */
#define MINIMAL_HOSTS                                                        \
	"[manager m]\n"                                                      \
	"address = a:1\n"                                                    \
	"[node n]\n"                                                         \
	"address = b:1\n"

/* ---- good files --------------------------------------------------------- */

static void test_config_load_reads_every_value(void **state)
{
	st_config_t cfg;

	(void)state;
	load_ok("good.conf", good_file, &cfg);
	assert_string_equal(cfg.cluster, "alpha");
	assert_string_equal(cfg.provider, "shm");
	assert_int_equal(cfg.slice_us, 2500);
	assert_int_equal(cfg.hb_period_ms, 20);
	assert_int_equal(cfg.hb_timeout_ms, 400);
	assert_int_equal(cfg.chunk_kib, 256);
	assert_int_equal(cfg.slots, 8);
	assert_int_equal(cfg.output_kib, 128);
	assert_string_equal(cfg.ramdisk, "/tmp/rd");
	assert_string_equal(cfg.state_dir, "/tmp/state");
	assert_string_equal(cfg.run_dir, "/tmp/run");
	assert_string_equal(cfg.log_target, "syslog");
	assert_int_equal(cfg.log_level, LOG_DEBUG);

	assert_int_equal(cfg.nmanagers, 2);
	assert_int_equal(cfg.nnodes, 3);
	assert_string_equal(cfg.managers[0].name, "mm0");
	assert_string_equal(cfg.managers[0].address, "10.0.0.1:7000");
	assert_string_equal(cfg.managers[0].listen, "10.0.0.1:7100");
	assert_string_equal(cfg.managers[1].name, "mm1");
	assert_string_equal(cfg.managers[1].address, "10.0.0.2:7000");
	assert_string_equal(cfg.managers[1].listen, "");
	assert_string_equal(cfg.nodes[0].name, "n1");
	assert_string_equal(cfg.nodes[0].address, "10.0.1.1:7000");
	assert_int_equal(cfg.nodes[0].cpus, 16);
	assert_string_equal(cfg.nodes[1].name, "n2");
	assert_string_equal(cfg.nodes[1].address, "10.0.1.2:7000");
	assert_int_equal(cfg.nodes[1].cpus, 1); /* default */
	assert_string_equal(cfg.nodes[2].name, "n3");
	assert_string_equal(cfg.nodes[2].address, "10.0.1.3:7000");
	assert_int_equal(cfg.nodes[2].cpus, 4);
	st_config_free(&cfg);
}

static void test_config_load_fills_defaults_for_missing_keys(void **state)
{
	st_config_t cfg;

	(void)state;
	load_ok("defaults.conf", MINIMAL_HOSTS, &cfg);
	assert_string_equal(cfg.cluster, "storm");
	assert_string_equal(cfg.provider, "tcp");
	assert_int_equal(cfg.slice_us, 10000);
	assert_int_equal(cfg.hb_period_ms, 50);
	assert_int_equal(cfg.hb_timeout_ms, 500);
	assert_int_equal(cfg.chunk_kib, 1024);
	assert_int_equal(cfg.slots, 4);
	assert_int_equal(cfg.output_kib, 64);
	assert_string_equal(cfg.ramdisk, "/dev/shm/storm");
	assert_string_equal(cfg.state_dir, "/var/lib/storm");
	assert_string_equal(cfg.run_dir, "/run/storm");
	assert_string_equal(cfg.log_target, "stderr");
	assert_int_equal(cfg.log_level, LOG_INFO);
	assert_int_equal(cfg.nmanagers, 1);
	assert_int_equal(cfg.nnodes, 1);
	assert_string_equal(cfg.managers[0].listen, "");
	assert_int_equal(cfg.nodes[0].cpus, 1);
	/* retention (docs/history.md) */
	assert_int_equal(cfg.job_retention, 10000);
	assert_int_equal(cfg.job_retention_s, 3600);
	assert_int_equal(cfg.history_jobs, 1000000);
	assert_int_equal(cfg.history_days, 90);
	/* BCS-MPI under MPICH's sonames: where meson install puts it */
	assert_string_equal(cfg.mpich_abi_dir, STORM_MPICH_ABI_DIR);
	st_config_free(&cfg);
}

static void test_config_load_accepts_range_limits(void **state)
{
	st_config_t cfg;

	(void)state;
	load_ok("low.conf",
		"[cluster]\nslice_us = 100\nhb_period_ms = 1\n"
		"hb_timeout_ms = 2\nchunk_kib = 4\nslots = 1\n"
		"output_kib = 4\nlog_level = error\n" MINIMAL_HOSTS, &cfg);
	assert_int_equal(cfg.slice_us, 100);
	assert_int_equal(cfg.hb_period_ms, 1);
	assert_int_equal(cfg.hb_timeout_ms, 2);
	assert_int_equal(cfg.chunk_kib, 4);
	assert_int_equal(cfg.slots, 1);
	assert_int_equal(cfg.output_kib, 4);
	assert_int_equal(cfg.log_level, LOG_ERR);
	st_config_free(&cfg);
	load_ok("high.conf",
		"[cluster]\nslice_us = 10000000\nhb_period_ms = 60000\n"
		"hb_timeout_ms = 600000\nchunk_kib = 65536\nslots = 64\n"
		"output_kib = 4096\nlog_level = warning\n" MINIMAL_HOSTS, &cfg);
	assert_int_equal(cfg.slice_us, 10000000);
	assert_int_equal(cfg.hb_period_ms, 60000);
	assert_int_equal(cfg.hb_timeout_ms, 600000);
	assert_int_equal(cfg.chunk_kib, 65536);
	assert_int_equal(cfg.slots, 64);
	assert_int_equal(cfg.output_kib, 4096);
	assert_int_equal(cfg.log_level, LOG_WARNING);
	st_config_free(&cfg);
}

static void test_config_world_ids_are_managers_first_in_file_order(
	void **state)
{
	st_config_t cfg;

	(void)state;
	load_ok("good.conf", good_file, &cfg);
	assert_int_equal(cfg.managers[0].world_id, 0); /* mm0 */
	assert_int_equal(cfg.managers[1].world_id, 1); /* mm1, after n1 */
	assert_int_equal(cfg.nodes[0].world_id, 2);    /* n1 */
	assert_int_equal(cfg.nodes[1].world_id, 3);    /* n2 */
	assert_int_equal(cfg.nodes[2].world_id, 4);    /* n3 */
	st_config_free(&cfg);
}

static void test_config_host_finds_managers_and_nodes_by_name(void **state)
{
	st_config_t cfg;
	const st_host_t *h;

	(void)state;
	load_ok("good.conf", good_file, &cfg);
	h = st_config_host(&cfg, "mm1");
	assert_ptr_equal(h, &cfg.managers[1]);
	assert_int_equal(h->world_id, 1);
	h = st_config_host(&cfg, "n3");
	assert_ptr_equal(h, &cfg.nodes[2]);
	assert_string_equal(h->address, "10.0.1.3:7000");
	assert_int_equal(h->world_id, 4);
	assert_ptr_equal(st_config_host(&cfg, "mm0"), &cfg.managers[0]);
	assert_null(st_config_host(&cfg, "n4"));
	assert_null(st_config_host(&cfg, "n"));
	assert_null(st_config_host(&cfg, ""));
	assert_null(st_config_host(&cfg, NULL));
	assert_null(st_config_host(NULL, "n1"));
	st_config_free(&cfg);
}

static void test_config_free_leaves_config_zeroed(void **state)
{
	st_config_t cfg;

	(void)state;
	load_ok("good.conf", good_file, &cfg);
	st_config_free(&cfg);
	assert_true(is_zeroed(&cfg));
	st_config_free(&cfg); /* a zeroed config again */
	assert_true(is_zeroed(&cfg));
	st_config_free(NULL);
}

static void test_config_world_builds_primitives_config(void **state)
{
	st_config_t cfg;
	char err[512];

	(void)state;
	load_ok("good.conf", good_file, &cfg);
	for (uint32_t id = 0; id < cfg.nmanagers + cfg.nnodes; id++) {
		sp_config_t *sc = NULL;
		int rc;

		err[0] = '\0';
		rc = st_config_world(&cfg, id, id >= cfg.nmanagers, 2000, &sc,
				     err, sizeof(err));
		if (rc != 0)
			fail_msg("world id %u: %d \"%s\"", id, rc, err);
		assert_non_null(sc);
		sp_config_destroy(sc);
	}
	st_config_free(&cfg);
}

static void test_config_world_rejects_unknown_world_id(void **state)
{
	st_config_t cfg;
	sp_config_t *sc = NULL;
	char err[512] = "";

	(void)state;
	load_ok("good.conf", good_file, &cfg);
	assert_int_equal(st_config_world(&cfg, 5, 1, 2000, &sc, err,
					 sizeof(err)), -STORM_ECONFIG);
	assert_null(sc);
	assert_non_null(strstr(err, cfg.path));
	assert_non_null(strstr(err, "5"));
	st_config_free(&cfg);
}

/* ---- errors with a line ------------------------------------------------- */

static void test_config_error_unknown_cluster_key_names_its_line(
	void **state)
{
	(void)state;
	expect_line_error("[cluster]\nname = x\n\nslice = 100\n" MINIMAL_HOSTS,
			  4, "\"slice\"");
	expect_line_error(MINIMAL_HOSTS "[cluster]\nlevel = debug\n", 6,
			  "[cluster]");
}

static void test_config_error_unknown_node_key_names_its_line(void **state)
{
	(void)state;
	expect_line_error(MINIMAL_HOSTS "[node x]\naddress = c:1\ncpu = 2\n", 7,
			  "[node x]: unknown key \"cpu\"");
	/* listen is a manager key, cpus a node key */
	expect_line_error(MINIMAL_HOSTS "[node x]\nlisten = c:1\n", 6,
			  "\"listen\"");
	expect_line_error("[manager m]\naddress = a:1\ncpus = 2\n"
			  "[node n]\naddress = b:1\n", 3, "\"cpus\"");
}

static void test_config_error_unknown_section_names_its_line(void **state)
{
	(void)state;
	expect_line_error(MINIMAL_HOSTS "\n[nodes x]\naddress = c:1\n", 7,
			  "[nodes x]");
	expect_line_error("[manager]\naddress = a:1\n" MINIMAL_HOSTS, 2,
			  "[manager]");
	/* a key before any section */
	expect_line_error("name = x\n" MINIMAL_HOSTS, 1, "unknown section");
}

static void test_config_error_bad_number_names_its_line(void **state)
{
	static const struct { const char *kv; const char *key; } cases[] = {
		{ "slice_us = ten", "slice_us" },       /* letters */
		{ "slice_us = 100ms", "slice_us" },     /* trailing letters */
		{ "slots = -1", "slots" },              /* negative */
		{ "chunk_kib = -0", "chunk_kib" },      /* negative zero */
		{ "slice_us = 50", "slice_us" },        /* below 100 */
		{ "slice_us = 10000001", "slice_us" },  /* above 10 s */
		{ "slots = 0", "slots" },
		{ "slots = 65", "slots" },
		{ "hb_period_ms = 0", "hb_period_ms" },
		{ "hb_timeout_ms = 600001", "hb_timeout_ms" },
		{ "chunk_kib = 3", "chunk_kib" },
		{ "output_kib = 4097", "output_kib" },
		{ "output_kib = 4294967300", "output_kib" }, /* over 32 bits */
		{ "slice_us = 99999999999999999999999", "slice_us" },
		{ "slots =", "slots" },                 /* empty */
		{ "slots = 0x10", "slots" },
		/* a retention of nothing would drop jobs unseen */
		{ "job_retention = 0", "job_retention" },
		{ "job_retention_s = 0", "job_retention_s" },
		{ "history_jobs = 0", "history_jobs" },
		{ "history_days = 0", "history_days" },
		{ "history_days = 36501", "history_days" },
	};
	char text[512];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "[cluster]\nname = x\n%s\n"
			 MINIMAL_HOSTS, cases[i].kv);
		expect_line_error(text, 3, cases[i].key);
	}
	expect_line_error(MINIMAL_HOSTS "[node x]\naddress = c:1\ncpus = 0\n", 7,
			  "cpus");
	expect_line_error(MINIMAL_HOSTS "[node x]\ncpus = 4097\n", 6, "cpus");
	expect_line_error(MINIMAL_HOSTS "[node x]\ncpus = many\n", 6, "cpus");
}

static void test_config_mpich_abi_dir_is_an_absolute_path(void **state)
{
	st_config_t cfg;

	(void)state;
	load_ok("abi.conf", "[cluster]\nmpich_abi_dir = /opt/storm/abi\n"
		MINIMAL_HOSTS, &cfg);
	assert_string_equal(cfg.mpich_abi_dir, "/opt/storm/abi");
	st_config_free(&cfg);
	expect_line_error("[cluster]\nmpich_abi_dir = lib/abi\n"
			  MINIMAL_HOSTS, 2, "mpich_abi_dir");
}

static void test_config_error_bad_log_level_names_its_line(void **state)
{
	(void)state;
	expect_line_error("[cluster]\nlog_level = verbose\n" MINIMAL_HOSTS, 2,
			  "log_level");
	expect_line_error("[cluster]\nlog_level = DEBUG\n" MINIMAL_HOSTS, 2,
			  "log_level");
	expect_line_error("[cluster]\nlog_level = 7\n" MINIMAL_HOSTS, 2,
			  "log_level");
}

static void test_config_error_host_name_with_slash_names_its_line(
	void **state)
{
	(void)state;
	/* the error is in the section header, and says so */
	expect_line_error(MINIMAL_HOSTS "[node a/b]\naddress = c:1\n", 5,
			  "a/b");
	expect_line_error("[manager ../m]\naddress = a:1\n" MINIMAL_HOSTS, 1,
			  "../m");
}

static void test_config_error_host_name_with_blank_names_its_line(
	void **state)
{
	(void)state;
	/* "[node a b]" must not quietly become node "a" */
	expect_line_error(MINIMAL_HOSTS "[node a b]\naddress = c:1\n", 5,
			  "host name");
	expect_line_error(MINIMAL_HOSTS "[node a\tb]\naddress = c:1\n", 5,
			  "host name");
}

static void test_config_error_host_name_too_long_names_its_line(
	void **state)
{
	char text[512], name[ST_HOST_NAME_MAX + 2];

	(void)state;
	/* one over the limit (libinih would cut it silently) */
	memset(name, 'h', ST_HOST_NAME_MAX + 1);
	name[ST_HOST_NAME_MAX + 1] = '\0';
	snprintf(text, sizeof(text), MINIMAL_HOSTS "[node %s]\naddress = c:1\n",
		 name);
	expect_line_error(text, 5, "host name");
}

static void test_config_long_host_names_are_kept_whole(void **state)
{
	char text[1024], a[ST_HOST_NAME_MAX + 1], b[ST_HOST_NAME_MAX + 1];
	st_config_t cfg;

	(void)state;
	/* the longest names allowed, differing only in the last character:
	 * two hosts, each found under its own full name */
	memset(a, 'h', ST_HOST_NAME_MAX);
	a[ST_HOST_NAME_MAX] = '\0';
	memcpy(b, a, sizeof(b));
	b[ST_HOST_NAME_MAX - 1] = 'i';
	snprintf(text, sizeof(text),
		 "[manager m]\naddress = a:1\n"
		 "[node %s]\naddress = c:1\n[node %s]\naddress = d:1\n", a, b);
	load_ok("long-names.conf", text, &cfg);
	if (cfg.nnodes != 2 || strcmp(cfg.nodes[0].name, a) ||
	    !st_config_host(&cfg, b)) {
		char got[ST_NAME_MAX];
		uint32_t n = cfg.nnodes;

		snprintf(got, sizeof(got), "%s", cfg.nodes[0].name);
		st_config_free(&cfg);
		fail_msg("two longest node names: want 2 nodes, got %u, "
			 "the first named \"%s\" (%zu characters)", n, got,
			 strlen(got));
	}
	assert_string_equal(cfg.nodes[1].name, b);
	assert_string_equal(st_config_host(&cfg, b)->address, "d:1");
	st_config_free(&cfg);
}

static void test_config_long_lines_are_refused_with_their_line(void **state)
{
	char text[2048], dir[1000];

	(void)state;
	/* libinih reads at most 198 characters a line and would split a
	 * longer one silently: refused, naming the line */
	dir[0] = '/';
	memset(dir + 1, 'd', sizeof(dir) - 2);
	dir[sizeof(dir) - 1] = '\0';
	snprintf(text, sizeof(text), "[cluster]\nramdisk = %s\n" MINIMAL_HOSTS,
		 dir);
	expect_line_error(text, 2, "at most 198");
}

static void test_config_long_lines_count_as_one_line(void **state)
{
	char text[1024], comment[400];

	(void)state;
	/* a 250-character line is refused as one line, not split in two */
	comment[0] = '#';
	memset(comment + 1, 'c', 249);
	comment[250] = '\0';
	snprintf(text, sizeof(text), "[cluster]\n%s\nslots = 0\n"
		 MINIMAL_HOSTS, comment);
	expect_line_error(text, 2, "at most 198");
	/* a 197-character comment does not shift later line numbers */
	comment[197] = '\0';
	snprintf(text, sizeof(text), "[cluster]\n%s\nslots = 0\n"
		 MINIMAL_HOSTS, comment);
	expect_line_error(text, 3, "slots");
}

static void test_config_error_value_too_long_names_its_line(void **state)
{
	char text[256], name[ST_NAME_MAX + 1];

	(void)state;
	memset(name, 'c', ST_NAME_MAX);
	name[ST_NAME_MAX] = '\0';
	snprintf(text, sizeof(text), "[cluster]\nname = %s\n" MINIMAL_HOSTS,
		 name);
	expect_line_error(text, 2, "name");
}

static void test_config_error_name_used_twice_names_its_line(void **state)
{
	(void)state;
	/* a manager and a node with the same name */
	expect_line_error("[manager a]\naddress = a:1\n\n[node a]\n"
			  "address = b:1\n", 4, "[node a]");
	expect_line_error("[node a]\naddress = b:1\n[manager a]\n"
			  "address = a:1\n", 3, "[manager a]");
}

static void test_config_error_syntax_names_its_line(void **state)
{
	(void)state;
	expect_line_error("[cluster]\nname = x\nthis is not ini\n" MINIMAL_HOSTS,
			  3, "syntax error");
	expect_line_error(MINIMAL_HOSTS "[node x\naddress = c:1\n", 5,
			  "syntax error");
}

static void test_config_error_reports_the_first_of_several(void **state)
{
	(void)state;
	expect_line_error("[cluster]\nslots = 0\nbogus = 1\nnot ini\n"
			  MINIMAL_HOSTS, 2, "slots");
	expect_line_error("[cluster]\nnot ini\nslots = 0\n" MINIMAL_HOSTS, 2,
			  "syntax error");
}

/* ---- errors without a line ---------------------------------------------- */

static void test_config_error_no_manager_section_names_file(void **state)
{
	(void)state;
	expect_file_error("[cluster]\nname = x\n[node n]\naddress = b:1\n",
			  "[manager NAME]", NULL);
}

static void test_config_error_no_node_section_names_file(void **state)
{
	(void)state;
	expect_file_error("[manager m]\naddress = a:1\n", "[node NAME]", NULL);
	expect_file_error("", "[manager NAME]", NULL);
}

static void test_config_error_node_without_address_names_it(void **state)
{
	(void)state;
	expect_file_error(MINIMAL_HOSTS "[node x]\ncpus = 2\n", "[node x]",
			  "address");
	expect_file_error("[manager m]\nlisten = l:1\n[node n]\naddress = b:1\n",
			  "[manager m]", "address");
}

static void test_config_error_empty_node_section_is_not_dropped(
	void **state)
{
	char path[4096], err[512] = "";
	st_config_t cfg;
	int rc;

	(void)state;
	/* a declared node with nothing in it has no address either; it must
	 * not silently vanish from the world (an error with or without a
	 * line will do) */
	write_file("empty-node.conf", MINIMAL_HOSTS "[node x]\n", path,
		   sizeof(path));
	rc = st_config_load(path, &cfg, err, sizeof(err));
	if (rc == 0) {
		uint32_t n = cfg.nnodes;

		st_config_free(&cfg);
		fail_msg("[node x] without keys: want -STORM_ECONFIG, got 0 "
			 "with %u node(s) (node x dropped)", n);
	}
	assert_int_equal(rc, -STORM_ECONFIG);
	assert_true(strncmp(err, path, strlen(path)) == 0 &&
		    err[strlen(path)] == ':');
	assert_non_null(strstr(err, "node x"));
	assert_true(is_zeroed(&cfg));
	unlink(path);
}

static void test_config_error_hb_timeout_not_above_period_names_key(
	void **state)
{
	(void)state;
	expect_file_error("[cluster]\nhb_period_ms = 100\nhb_timeout_ms = 100\n"
			  MINIMAL_HOSTS, "[cluster]", "hb_timeout_ms");
	expect_file_error("[cluster]\nhb_period_ms = 600\n" MINIMAL_HOSTS,
			  "[cluster]", "hb_period_ms");
}

static void test_config_scheduler_settings(void **state)
{
	(void)state;
	expect_line_error("[cluster]\nsched_policy = roundrobin\n"
			  MINIMAL_HOSTS, 2, "no such policy");
	expect_line_error("[cluster]\nplacement = random\n" MINIMAL_HOSTS, 2,
			  "placement");
	expect_line_error("[cluster]\nmpl = 0\n" MINIMAL_HOSTS, 2, "mpl");
	expect_line_error("[cluster]\nmpl = 17\n" MINIMAL_HOSTS, 2, "mpl");
	expect_line_error("[cluster]\nquantum_us = 50\n" MINIMAL_HOSTS, 2,
			  "quantum_us");
	expect_line_error("[cluster]\nrealtime = 100\n" MINIMAL_HOSTS, 2,
			  "realtime");
	/* mpl > 1 only with gang; a quantum of whole slices */
	expect_file_error("[cluster]\nmpl = 2\n" MINIMAL_HOSTS, "[cluster]",
			  "sched_policy = gang");
	expect_file_error("[cluster]\nslice_us = 1000\nquantum_us = 1500\n"
			  MINIMAL_HOSTS, "[cluster]", "whole number of slices");
}

static void test_config_missing_file_is_enoent_and_says_how(void **state)
{
	char path[4096], err[512] = "";
	st_config_t cfg;

	(void)state;
	snprintf(path, sizeof(path), "%s/no-such.conf", tmpdir);
	memset(&cfg, 0xa5, sizeof(cfg));
	assert_int_equal(st_config_load(path, &cfg, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "--config"));
	assert_non_null(strstr(err, "STORM_CONFIG"));
	assert_true(is_zeroed(&cfg));
}

static void test_config_load_without_err_buffer_still_fails(void **state)
{
	char path[4096];
	st_config_t cfg;

	(void)state;
	write_file("noerr.conf", "[cluster]\nslots = 0\n" MINIMAL_HOSTS, path,
		   sizeof(path));
	assert_int_equal(st_config_load(path, &cfg, NULL, 0), -STORM_ECONFIG);
	assert_true(is_zeroed(&cfg));
	write_file("noerr.conf", MINIMAL_HOSTS "[node x]\ncpus = 2\n", path,
		   sizeof(path));
	assert_int_equal(st_config_load(path, &cfg, NULL, 0), -STORM_ECONFIG);
	assert_true(is_zeroed(&cfg));
	unlink(path);
}

/* ---- fuzz --------------------------------------------------------------- */

#define FUZZ_ROUNDS 3000

static uint8_t interesting_byte(void)
{
	static const char set[] = "[]=:;# \t\n/-0123456789axz";

	switch (rnd() % 4) {
	case 0:
		return (uint8_t)rnd();
	case 1:
		return (uint8_t)(rnd() % 2 ? 0 : 0xff);
	default:
		return (uint8_t)set[rnd() % (sizeof(set) - 1)];
	}
}

/* Mutate buf (n bytes, capacity cap) in place; returns the new length. */
static size_t mutate(uint8_t *buf, size_t n, size_t cap)
{
	unsigned edits = 1 + (unsigned)(rnd() % 8);

	for (unsigned e = 0; e < edits; e++) {
		size_t at = n ? (size_t)(rnd() % n) : 0;

		switch (rnd() % 5) {
		case 0: /* flip a bit */
			if (n)
				buf[at] ^= (uint8_t)(1u << (rnd() % 8));
			break;
		case 1: /* replace a byte */
			if (n)
				buf[at] = interesting_byte();
			break;
		case 2: /* insert a byte */
			if (n < cap) {
				memmove(buf + at + 1, buf + at, n - at);
				buf[at] = interesting_byte();
				n++;
			}
			break;
		case 3: /* delete a run */
			if (n) {
				size_t k = 1 + (size_t)(rnd() % 8);

				if (k > n - at)
					k = n - at;
				memmove(buf + at, buf + at + k, n - at - k);
				n -= k;
			}
			break;
		default: /* duplicate a run (often a whole line) */
			if (n) {
				size_t k = 1 + (size_t)(rnd() % 40);

				if (k > n - at)
					k = n - at;
				if (n + k <= cap) {
					memmove(buf + at + k, buf + at, n - at);
					n += k;
				}
			}
			break;
		}
	}
	return n;
}

static void test_config_fuzz_mutated_files_load_or_fail_cleanly(
	void **state)
{
	uint64_t seed;
	uint8_t buf[4096];
	char path[4096], err[512];
	unsigned loaded = 0, failed = 0;

	(void)state;
	seed = fuzz_seed_begin(0xc0f16ULL);
	for (int round = 0; round < FUZZ_ROUNDS; round++) {
		size_t n = sizeof(good_file) - 1;
		st_config_t cfg;
		int rc;

		memcpy(buf, good_file, n);
		n = mutate(buf, n, sizeof(buf));
		write_bytes("fuzz.conf", buf, n, path, sizeof(path));
		memset(&cfg, 0xa5, sizeof(cfg));
		memset(err, 0, sizeof(err));
		rc = st_config_load(path, &cfg, err, sizeof(err));
		if (rc == 0) {
			uint32_t id = 0;

			if (cfg.nmanagers < 1 || cfg.nnodes < 1 ||
			    cfg.hb_timeout_ms <= cfg.hb_period_ms)
				fail_msg("seed %#llx round %d: loaded an "
					 "inconsistent config",
					 (unsigned long long)seed, round);
			for (uint32_t i = 0; i < cfg.nmanagers; i++)
				if (cfg.managers[i].world_id != id++ ||
				    !cfg.managers[i].address[0])
					fail_msg("seed %#llx round %d: manager "
						 "%u", (unsigned long long)seed,
						 round, i);
			for (uint32_t i = 0; i < cfg.nnodes; i++)
				if (cfg.nodes[i].world_id != id++ ||
				    !cfg.nodes[i].address[0] ||
				    !cfg.nodes[i].cpus)
					fail_msg("seed %#llx round %d: node %u",
						 (unsigned long long)seed, round,
						 i);
			st_config_free(&cfg);
			loaded++;
		} else {
			if (rc >= 0 || !err[0] || !is_zeroed(&cfg))
				fail_msg("seed %#llx round %d: rc %d, err "
					 "\"%s\", cfg %szeroed",
					 (unsigned long long)seed, round, rc,
					 err, is_zeroed(&cfg) ? "" : "not ");
			failed++;
		}
	}
	unlink(path);
	/* both outcomes exercised, or the mutations are too tame/too wild */
	assert_true(loaded > 0);
	assert_true(failed > 0);
}

/* examples/storm.conf, installed as /etc/storm/storm.conf.example,
 * loads as it is: three managers, four nodes, its settings. */
static void test_example_configuration_loads(void **state)
{
	st_config_t cfg;
	char err[512] = "";

	(void)state;
	if (st_config_load(STORM_EXAMPLE_CONF, &cfg, err, sizeof(err)))
		fail_msg("%s", err);
	assert_string_equal(cfg.cluster, "hpc1");
	assert_int_equal(cfg.nmanagers, 3);
	assert_int_equal(cfg.nnodes, 4);
	assert_int_equal(cfg.nodes[3].cpus, 32);
	assert_string_equal(cfg.replication, "corosync");
	st_config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example_configuration_loads),
		cmocka_unit_test(test_config_load_reads_every_value),
		cmocka_unit_test(test_config_load_fills_defaults_for_missing_keys),
		cmocka_unit_test(test_config_load_accepts_range_limits),
		cmocka_unit_test(
			test_config_world_ids_are_managers_first_in_file_order),
		cmocka_unit_test(
			test_config_host_finds_managers_and_nodes_by_name),
		cmocka_unit_test(test_config_free_leaves_config_zeroed),
		cmocka_unit_test(test_config_world_builds_primitives_config),
		cmocka_unit_test(test_config_world_rejects_unknown_world_id),
		cmocka_unit_test(
			test_config_error_unknown_cluster_key_names_its_line),
		cmocka_unit_test(
			test_config_error_unknown_node_key_names_its_line),
		cmocka_unit_test(
			test_config_error_unknown_section_names_its_line),
		cmocka_unit_test(test_config_error_bad_number_names_its_line),
		cmocka_unit_test(test_config_mpich_abi_dir_is_an_absolute_path),
		cmocka_unit_test(test_config_error_bad_log_level_names_its_line),
		cmocka_unit_test(
			test_config_error_host_name_with_slash_names_its_line),
		cmocka_unit_test(
			test_config_error_host_name_with_blank_names_its_line),
		cmocka_unit_test(
			test_config_error_host_name_too_long_names_its_line),
		cmocka_unit_test(test_config_long_host_names_are_kept_whole),
		cmocka_unit_test(test_config_long_lines_are_refused_with_their_line),
		cmocka_unit_test(test_config_long_lines_count_as_one_line),
		cmocka_unit_test(test_config_error_value_too_long_names_its_line),
		cmocka_unit_test(
			test_config_error_name_used_twice_names_its_line),
		cmocka_unit_test(test_config_error_syntax_names_its_line),
		cmocka_unit_test(
			test_config_error_reports_the_first_of_several),
		cmocka_unit_test(test_config_error_no_manager_section_names_file),
		cmocka_unit_test(test_config_error_no_node_section_names_file),
		cmocka_unit_test(test_config_error_node_without_address_names_it),
		cmocka_unit_test(
			test_config_error_empty_node_section_is_not_dropped),
		cmocka_unit_test(
			test_config_error_hb_timeout_not_above_period_names_key),
		cmocka_unit_test(test_config_scheduler_settings),
		cmocka_unit_test(test_config_missing_file_is_enoent_and_says_how),
		cmocka_unit_test(
			test_config_load_without_err_buffer_still_fails),
		cmocka_unit_test(
			test_config_fuzz_mutated_files_load_or_fail_cleanly),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
