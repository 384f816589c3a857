/*
 * phist.c — see phist.h.
 */
#include "phist.h"

const double mmd_phist_bound[MMD_PHIST_BOUNDS] = {
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
	0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
};

void mmd_phist_add(struct mmd_phist *h, uint64_t ns)
{
	double s = (double)ns / 1e9;

	for (int i = 0; i < MMD_PHIST_BOUNDS; i++)
		if (s <= mmd_phist_bound[i]) {
			h->b[i]++;
			break;
		}
	h->n++;
	h->sum_ns += ns;
}
