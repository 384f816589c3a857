/*
 * matrix.c — the Ousterhout matrix and its buddy allocator (ParPar style).
 *
 * Rows are time slots (the MPL), columns PEs: the cpus of every compute
 * node, nodes in ascending world id, each node's first column aligned to
 * its cpus rounded up to a power of two (phantom columns fill the gaps).  A job holds one buddy block of one
 * row: a power-of-two run of columns aligned to its width.  Blocks form a
 * binary tree over pow2 leaves (the columns rounded up to a power of two;
 * the leaves past the last column are phantoms, always free and never
 * usable), so freeing a job's block re-forms the larger free blocks it
 * was split from without any bookkeeping: the tree is read off the cells.
 *
 * Choosing a block (mmi_find_block): the smallest width that holds the
 * job's ranks on usable columns (UP, in its nodelist), then among the free
 * blocks of that width the one whose largest free ancestor is smallest —
 * the buddy system's "take from the smallest free block", which keeps big
 * blocks whole — then the lowest column.  MOLAR placement puts the
 * reliability of the block's least reliable node first.
 *
 * Invariants (mm_matrix_check): a cell holds 0 or the id of a job holding
 * PEs whose block covers it; such a job's block is whole in its row, its
 * ranks on usable columns of it in order; node.used = its ranks over all
 * rows; rowuse[r] = occupied cells of row r.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm_internal.h"

/* ---- settings ------------------------------------------------------------ */

static const char *const policy_names[] = {
	[MM_POLICY_FCFS] = "fcfs",
	[MM_POLICY_BACKFILL] = "backfill",
	[MM_POLICY_GANG] = "gang",
};

static const char *const placement_names[] = {
	[MM_PLACE_BUDDY] = "buddy",
	[MM_PLACE_MOLAR] = "molar",
};

const char *mm_policy_name(mm_policy_t p)
{
	if (p < MM_POLICY_FCFS || p > MM_POLICY_GANG)
		return "unknown";
	return policy_names[p];
}

int mm_policy_parse(const char *name, mm_policy_t *out)
{
	for (int p = MM_POLICY_FCFS; name && p <= MM_POLICY_GANG; p++)
		if (!strcmp(name, policy_names[p])) {
			*out = (mm_policy_t)p;
			return 0;
		}
	return -EINVAL;
}

const char *mm_placement_name(mm_placement_t p)
{
	if (p < MM_PLACE_BUDDY || p > MM_PLACE_MOLAR)
		return "unknown";
	return placement_names[p];
}

int mm_placement_parse(const char *name, mm_placement_t *out)
{
	for (int p = MM_PLACE_BUDDY; name && p <= MM_PLACE_MOLAR; p++)
		if (!strcmp(name, placement_names[p])) {
			*out = (mm_placement_t)p;
			return 0;
		}
	return -EINVAL;
}

int mm_sched_check(const mm_sched_conf_t *c, char *err, size_t len)
{
	char scratch[8];

	if (!err || !len) {
		err = scratch;
		len = sizeof(scratch);
	}
	if (!c) {
		snprintf(err, len, "no scheduler settings");
		return -EINVAL;
	}
	if (c->policy < MM_POLICY_FCFS || c->policy > MM_POLICY_GANG) {
		snprintf(err, len, "scheduling policy %d does not exist; want "
			 "fcfs, backfill or gang", (int)c->policy);
		return -EINVAL;
	}
	if (c->mpl < 1 || c->mpl > MM_MPL_MAX) {
		snprintf(err, len, "mpl %u is out of range; give 1..%u",
			 c->mpl, MM_MPL_MAX);
		return -EINVAL;
	}
	if (c->mpl > 1 && c->policy != MM_POLICY_GANG) {
		snprintf(err, len, "mpl %u needs the gang policy (%s runs one "
			 "job per PE); give mpl 1 or policy gang", c->mpl,
			 mm_policy_name(c->policy));
		return -EINVAL;
	}
	if (c->quantum_slices < 1 || c->quantum_slices > MM_QUANTUM_MAX) {
		snprintf(err, len, "quantum of %u slices is out of range; give "
			 "1..%u", c->quantum_slices, MM_QUANTUM_MAX);
		return -EINVAL;
	}
	if (c->placement < MM_PLACE_BUDDY || c->placement > MM_PLACE_MOLAR) {
		snprintf(err, len, "placement %d does not exist; want buddy or "
			 "molar", (int)c->placement);
		return -EINVAL;
	}
	err[0] = '\0';
	return 0;
}

void mm_sched_get(const mm_state_t *s, mm_sched_conf_t *out)
{
	*out = s->conf;
}

/* ---- storage ------------------------------------------------------------- */

int mmi_matrix_init(mm_state_t *s)
{
	uint64_t c = 0;

	s->conf = (mm_sched_conf_t){ MM_POLICY_FCFS, 1, 1, MM_PLACE_BUDDY };
	if (s->total_cpus == 0 || s->total_cpus > (1u << 24))
		return -EINVAL;
	/* each node's PEs start at a multiple of its cpus rounded up to a
	 * power of two, so a whole node is one buddy block: with 4-, 2- and
	 * 8-cpu nodes a job of 8 on the 8-cpu node must not straddle two
	 * blocks.  The columns skipped are phantoms (no node). */
	for (uint32_t i = 0; i < s->nnodes; i++) {
		uint64_t a = 1;

		while (a < s->nodes[i].cpus)
			a <<= 1;
		c = (c + a - 1) / a * a;
		s->nodes[i].col = (uint32_t)c;
		c += s->nodes[i].cpus;
	}
	s->ncols = (uint32_t)c;
	for (s->pow2 = 1; s->pow2 < s->ncols; s->pow2 <<= 1)
		;
	s->col_node = malloc(s->ncols * sizeof(*s->col_node));
	s->cells = calloc(s->ncols, sizeof(*s->cells));
	s->rowuse = calloc(MM_MPL_MAX, sizeof(*s->rowuse));
	s->tree = malloc(2 * (size_t)s->pow2);
	s->scratch = malloc(s->ncols * sizeof(*s->scratch));
	s->holders = malloc(s->ncols * sizeof(*s->holders));
	s->first = malloc((s->ncols ? s->ncols : 1) * sizeof(*s->first));
	if (!s->col_node || !s->cells || !s->rowuse || !s->tree ||
	    !s->scratch || !s->holders || !s->first)
		return -ENOMEM;
	s->rows_alloc = 1;
	for (uint32_t k = 0; k < s->ncols; k++)
		s->col_node[k] = UINT32_MAX;
	for (uint32_t i = 0; i < s->nnodes; i++)
		for (uint32_t k = 0; k < s->nodes[i].cpus; k++)
			s->col_node[s->nodes[i].col + k] = s->nodes[i].id;
	return 0;
}

void mmi_matrix_free(mm_state_t *s)
{
	free(s->col_node);
	free(s->cells);
	free(s->rowuse);
	free(s->tree);
	free(s->scratch);
	free(s->holders);
	free(s->first);
}

/* Make room for rows (before any change: SCHED stays whole or refused). */
int mmi_matrix_grow(mm_state_t *s, uint32_t rows)
{
	uint32_t *c;

	if (rows <= s->rows_alloc)
		return 0;
	c = realloc(s->cells, (size_t)rows * s->ncols * sizeof(*c));
	if (!c)
		return -ENOMEM;
	memset(c + (size_t)s->rows_alloc * s->ncols, 0,
	       (size_t)(rows - s->rows_alloc) * s->ncols * sizeof(*c));
	s->cells = c;
	s->rows_alloc = rows;
	return 0;
}

uint32_t mmi_rows(const mm_state_t *s)
{
	return s->conf.mpl;
}

int mmi_col_usable(const mm_state_t *s, const struct mm_jobrec *j,
		   uint32_t col)
{
	uint32_t id = s->col_node[col];

	if (id == UINT32_MAX) /* a phantom column */
		return 0;
	return s->nodes[s->node_at[id]].state == MM_NODE_UP &&
	       !s->nodes[s->node_at[id]].drain &&
	       (!j->want || sp_nodeset_has(j->want, id));
}

/* ---- a job's shape in a block ------------------------------------------------ */

/* Place the job's ranks on the columns [lo, lo + w): node by node in
 * column order, each rank on cpus_per_task consecutive columns of one
 * usable node, at most tasks_per_node on a node; with node_count, on
 * exactly that many nodes, the first ranks % count of them one rank more
 * (Slurm's block distribution).  first[r] gets rank r's first column
 * (NULL: only whether it fits).  0, or -ENOSPC. */
static int fit(const mm_state_t *s, const struct mm_jobrec *j, uint32_t lo,
	       uint32_t w, uint32_t *first)
{
	uint32_t c = j->v.cpus_per_task ? j->v.cpus_per_task : 1;
	uint32_t k = j->v.tasks_per_node, n = j->v.node_count;
	uint32_t R = j->v.ranks, r = 0, used = 0;
	uint32_t end = lo + w < s->ncols ? lo + w : s->ncols;

	for (uint32_t col = lo; col < end && r < R;) {
		uint32_t node = s->col_node[col], run = col, slots, take;

		if (node == UINT32_MAX) { /* a phantom column */
			col++;
			continue;
		}
		while (run < end && s->col_node[run] == node)
			run++;
		slots = mmi_col_usable(s, j, col) ? (run - col) / c : 0;
		if (k && slots > k)
			slots = k;
		take = slots < R - r ? slots : R - r;
		if (n) {
			uint32_t need = R / n + (used < R % n ? 1 : 0);

			take = used < n && slots >= need ? need : 0;
		}
		for (uint32_t t = 0; t < take; t++, r++)
			if (first)
				first[r] = col + t * c;
		used += take > 0;
		col = run;
	}
	return r == R && (!n || used == n) ? 0 : -ENOSPC;
}

/* ---- the buddy search ------------------------------------------------------ */

/* tree[1] is the whole pow2 range, tree[2k], tree[2k+1] the halves of
 * tree[k], leaves at pow2 + col: 1 when the block is entirely free. */
static void build_tree(const mm_state_t *s, const uint32_t *row,
		       uint8_t *tree)
{
	for (uint32_t c = 0; c < s->pow2; c++)
		tree[s->pow2 + c] = c >= s->ncols || row[c] == 0;
	for (uint32_t k = s->pow2 - 1; k >= 1; k--)
		tree[k] = tree[2 * k] & tree[2 * k + 1];
}

/* A node's reliability for MOLAR: its observed mean time to failure, in
 * service time per failure (a node that never failed scores its whole
 * service time), from the state's own clock. */
static uint64_t node_mttf(const mm_state_t *s, const mm_node_t *n)
{
	uint64_t up = n->up_ms;

	if (n->state == MM_NODE_UP && s->now_ms > n->up_since_ms)
		up += s->now_ms - n->up_since_ms;
	return up / ((uint64_t)n->failures + 1);
}

int mmi_find_block(const mm_state_t *s, const uint32_t *row,
		   const struct mm_jobrec *j, uint32_t *col, uint32_t *width)
{
	uint8_t *tree = s->tree;
	uint32_t k0 = 0;

	build_tree(s, row, tree);
	while ((1ull << k0) < (uint64_t)j->v.ranks *
	       (j->v.cpus_per_task ? j->v.cpus_per_task : 1))
		k0++;
	for (uint32_t w = 1u << k0; w <= s->pow2; w <<= 1) {
		uint32_t best = UINT32_MAX, best_anc = 0;
		uint64_t best_rel = 0;

		for (uint32_t lo = 0; lo < s->ncols; lo += w) {
			uint32_t k = (s->pow2 + lo) / w, anc = w, cap = 0;
			uint32_t used = 0;
			uint64_t rel = UINT64_MAX;

			if (!tree[k])
				continue;
			for (uint32_t c = lo; c < lo + w && c < s->ncols; c++)
				cap += mmi_col_usable(s, j, c);
			if (cap < j->v.ranks || fit(s, j, lo, w, NULL))
				continue;
			/* the largest free block holding this one */
			for (uint32_t p = k / 2; p >= 1 && tree[p]; p /= 2)
				anc <<= 1;
			if (s->conf.placement == MM_PLACE_MOLAR) {
				for (uint32_t c = lo; used < j->v.ranks; c++) {
					const mm_node_t *n;
					uint64_t m;

					if (!mmi_col_usable(s, j, c))
						continue;
					used++;
					n = &s->nodes[s->node_at[
						s->col_node[c]]];
					m = node_mttf(s, n);
					rel = m < rel ? m : rel;
				}
			}
			if (best != UINT32_MAX) {
				int better = s->conf.placement ==
					MM_PLACE_MOLAR && rel != best_rel ?
					rel > best_rel : anc < best_anc;

				if (!better)
					continue;
			}
			best = lo;
			best_anc = anc;
			best_rel = rel;
		}
		if (best != UINT32_MAX) {
			*col = best;
			*width = w;
			return 0;
		}
	}
	return -ENOSPC;
}

/* ---- holding and releasing blocks ----------------------------------------- */

void mmi_block_take(mm_state_t *s, struct mm_jobrec *j, uint32_t row,
		    uint32_t col, uint32_t width)
{
	uint32_t *cells = s->cells + (size_t)row * s->ncols;
	uint32_t cpt = j->v.cpus_per_task ? j->v.cpus_per_task : 1;
	uint32_t *first = s->first;

	sp_nodeset_clear(j->nodes);
	for (uint32_t c = col; c < col + width && c < s->ncols; c++) {
		if (s->col_node[c] == UINT32_MAX)
			continue;
		cells[c] = j->v.id;
		s->rowuse[row]++;
	}
	/* the search found it fits: the same walk places the ranks */
	fit(s, j, col, width, first);
	for (uint32_t r = 0; r < j->v.ranks; r++) {
		uint32_t id = s->col_node[first[r]];

		j->rank_node[r] = id;
		sp_nodeset_add(j->nodes, id);
		s->nodes[s->node_at[id]].used += cpt;
	}
	j->v.row = row;
	j->v.col = col;
	j->v.width = width;
}

void mmi_block_release(mm_state_t *s, struct mm_jobrec *j)
{
	uint32_t *cells = s->cells + (size_t)j->v.row * s->ncols;

	if (j->v.parent) { /* a step: its allocation holds the cells */
		j->v.row = j->v.col = j->v.width = 0;
		return;
	}

	for (uint32_t c = j->v.col; c < j->v.col + j->v.width &&
	     c < s->ncols; c++) {
		if (s->col_node[c] == UINT32_MAX)
			continue;
		cells[c] = 0;
		s->rowuse[j->v.row]--;
	}
	for (uint32_t r = 0; r < j->v.ranks; r++)
		s->nodes[s->node_at[j->rank_node[r]]].used -=
			j->v.cpus_per_task ? j->v.cpus_per_task : 1;
	j->v.row = j->v.col = j->v.width = 0;
}

/* A step holding PEs: on task slots of its running allocation, in its
 * row, its ranks on the slots' nodes. */
static int step_check(const mm_state_t *s, const struct mm_jobrec *j)
{
	const struct mm_jobrec *p = mmi_job_of(s, j->v.parent);
	uint32_t first = j->v.col - (p ? p->v.col : 0);

	if (!p || !p->v.alloc || !holds_cpus(p->v.state))
		return -STORM_ESTATE;
	if (j->v.col < p->v.col || j->v.row != p->v.row ||
	    j->v.width != j->v.ranks || first + j->v.width > p->v.ranks)
		return -STORM_ESTATE;
	for (uint32_t r = 0; r < j->v.ranks; r++)
		if (j->rank_node[r] != p->rank_node[first + r])
			return -STORM_ESTATE;
	return 0;
}

/* ---- reading ---------------------------------------------------------------- */

uint32_t mm_matrix_rows(const mm_state_t *s)
{
	return s->conf.mpl;
}

uint32_t mm_matrix_cols(const mm_state_t *s)
{
	return s->ncols;
}

uint32_t mm_matrix_cell(const mm_state_t *s, uint32_t row, uint32_t col)
{
	if (row >= s->conf.mpl || col >= s->ncols)
		return 0;
	return s->cells[(size_t)row * s->ncols + col];
}

uint32_t mm_matrix_col_node(const mm_state_t *s, uint32_t col)
{
	return col < s->ncols ? s->col_node[col] : UINT32_MAX;
}

uint32_t mm_active_row(const mm_state_t *s, uint64_t slice)
{
	uint32_t busy = 0, k;

	for (uint32_t r = 0; r < s->conf.mpl; r++)
		busy += s->rowuse[r] > 0;
	if (!busy)
		return UINT32_MAX;
	k = (uint32_t)((slice / s->conf.quantum_slices) % busy);
	for (uint32_t r = 0; r < s->conf.mpl; r++)
		if (s->rowuse[r] > 0 && k-- == 0)
			return r;
	return UINT32_MAX; /* not reached */
}

int mm_matrix_shared(const mm_state_t *s)
{
	uint32_t busy = 0;

	for (uint32_t r = 0; r < s->conf.mpl; r++)
		busy += s->rowuse[r] > 0;
	return busy > 1;
}

uint64_t mm_free_pes(const mm_state_t *s)
{
	uint64_t n = 0;

	for (uint32_t r = 0; r < s->conf.mpl; r++)
		for (uint32_t c = 0; c < s->ncols; c++)
			n += s->col_node[c] != UINT32_MAX &&
			     s->cells[(size_t)r * s->ncols + c] == 0 &&
			     s->nodes[s->node_at[s->col_node[c]]].state ==
			     MM_NODE_UP;
	return n;
}

uint64_t mm_matrix_digest(const mm_state_t *s)
{
	uint64_t h = MMI_FNV_OFFSET;
	struct mmi_wr w = { .cap = SIZE_MAX, .fnv = &h };

	mmi_put_u8(&w, (uint8_t)s->conf.policy);
	mmi_put_u32(&w, s->conf.mpl);
	mmi_put_u32(&w, s->conf.quantum_slices);
	mmi_put_u8(&w, (uint8_t)s->conf.placement);
	mmi_put_u32(&w, s->ncols);
	for (size_t i = 0; i < (size_t)s->conf.mpl * s->ncols; i++)
		mmi_put_u32(&w, s->cells[i]);
	return h;
}

#define BAD(...) (snprintf(err, len, __VA_ARGS__), -STORM_ESTATE)

int mm_matrix_check(const mm_state_t *s, char *err, size_t len)
{
	char scratch[8];
	uint32_t *used = NULL, *rowuse = NULL;
	int rc = 0;

	if (!err || !len) {
		err = scratch;
		len = sizeof(scratch);
	}
	err[0] = '\0';
	used = calloc(s->nnodes, sizeof(*used));
	rowuse = calloc(MM_MPL_MAX, sizeof(*rowuse));
	if (!used || !rowuse) {
		free(used);
		free(rowuse);
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	for (uint32_t r = 0; !rc && r < s->conf.mpl; r++)
		for (uint32_t c = 0; !rc && c < s->ncols; c++) {
			uint32_t id = s->cells[(size_t)r * s->ncols + c];
			const struct mm_jobrec *j;

			if (!id)
				continue;
			rowuse[r]++;
			j = mmi_job_of(s, id);
			if (!j || !holds_cpus(j->v.state))
				rc = BAD("cell (%u, %u) holds job %u, which "
					 "holds no PEs", r, c, id);
			else if (j->v.row != r || c < j->v.col ||
				 c >= j->v.col + j->v.width)
				rc = BAD("cell (%u, %u) holds job %u, whose "
					 "block is row %u [%u, %u)", r, c, id,
					 j->v.row, j->v.col,
					 j->v.col + j->v.width);
		}
	for (uint32_t i = s->live_lo; !rc && i < s->njobs; i++) {
		const struct mm_jobrec *j = s->jobs[i];
		uint32_t w = j->v.width, c = j->v.col;

		if (!holds_cpus(j->v.state)) {
			if (w)
				rc = BAD("job %u (%s) still has a block", j->v.id,
					 mm_job_state_name(j->v.state));
			continue;
		}
		if (j->v.parent) {
			if (step_check(s, j))
				rc = BAD("step %u: row %u slots [%u, +%u) are not "
					 "task slots of its running allocation "
					 "%u", j->v.id, j->v.row, c, w,
					 j->v.parent);
			continue;
		}
		if (!w || (w & (w - 1)) || c % w || c >= s->ncols ||
		    w > s->pow2 || j->v.row >= s->conf.mpl) {
			rc = BAD("job %u: block row %u [%u, +%u) is not a buddy "
				 "block of the matrix", j->v.id, j->v.row, c, w);
			break;
		}
		for (uint32_t k = c; !rc && k < c + w && k < s->ncols; k++)
			if (s->cells[(size_t)j->v.row * s->ncols + k] !=
			    (s->col_node[k] == UINT32_MAX ? 0 : j->v.id))
				rc = BAD("job %u: cell (%u, %u) of its block "
					 "holds %u", j->v.id, j->v.row, k,
					 s->cells[(size_t)j->v.row * s->ncols +
						  k]);
		/* ranks sit on columns of the block, in column order,
		 * cpus_per_task columns of their node each (which columns
		 * were usable when it was placed is history: nodes come and
		 * go) */
		uint32_t cpt = j->v.cpus_per_task ? j->v.cpus_per_task : 1;

		for (uint32_t q = 0, k = c; !rc && q < j->v.ranks; q++) {
			while (k < c + w && k < s->ncols &&
			       s->col_node[k] != j->rank_node[q])
				k++;
			for (uint32_t t = 0; !rc && t < cpt; t++, k++)
				if (k >= c + w || k >= s->ncols ||
				    s->col_node[k] != j->rank_node[q])
					rc = cpt == 1 ?
					     BAD("job %u: rank %u on node %u "
						 "has no column of its own in "
						 "the job's block", j->v.id, q,
						 j->rank_node[q]) :
					     BAD("job %u: rank %u on node %u "
						 "has not %u columns of its "
						 "own in the job's block",
						 j->v.id, q, j->rank_node[q],
						 cpt);
		}
		for (uint32_t q = 0; !rc && q < j->v.ranks; q++)
			used[s->node_at[j->rank_node[q]]] += cpt;
	}
	for (uint32_t i = 0; !rc && i < s->nnodes; i++)
		if (used[i] != s->nodes[i].used)
			rc = BAD("node %s: used %u, but jobs place %u ranks on "
				 "it", s->nodes[i].name, s->nodes[i].used,
				 used[i]);
	for (uint32_t r = 0; !rc && r < MM_MPL_MAX; r++)
		if (rowuse[r] != s->rowuse[r])
			rc = BAD("row %u: %u cells counted in use, %u held",
				 r, s->rowuse[r], rowuse[r]);
	free(used);
	free(rowuse);
	return rc;
}
