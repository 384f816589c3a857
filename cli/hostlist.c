/*
 * hostlist.c — host names folded the way cluster tools print them:
 * nm1,nm2,nm3,nm7,login -> nm[1-3,7],login.  Runs of consecutive names
 * that share a prefix and end in a number (no leading zero) fold into one
 * bracket of ranges; anything else is printed as it is.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"

/* The prefix length of name and its trailing number, or -1 if it has no
 * plain trailing number. */
static long split(const char *name, size_t *pl)
{
	size_t n = strlen(name), k = n;
	char *end;
	long v;

	while (k > 0 && name[k - 1] >= '0' && name[k - 1] <= '9')
		k--;
	*pl = k;
	if (k == n || name[k] == '0' || n - k > 9)
		return -1;
	v = strtol(name + k, &end, 10);
	return *end ? -1 : v;
}

static void put(char *buf, size_t len, size_t *out, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void put(char *buf, size_t len, size_t *out, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (*out >= len)
		return;
	va_start(ap, fmt);
	w = vsnprintf(buf + *out, len - *out, fmt, ap);
	va_end(ap);
	*out += w > 0 ? (size_t)w : 0;
}

void sc_fmt_hostlist(const json_t *names, char *buf, size_t len)
{
	size_t n = json_array_size(names), out = 0, i = 0;

	if (!len)
		return;
	buf[0] = '\0';
	while (i < n) {
		const char *a = json_string_value(json_array_get(names, i));
		size_t pl, bl, j = i + 1;
		long lo, prev;

		if (!a)
			break;
		lo = prev = split(a, &pl);
		/* how far the run of same-prefix numbered names goes */
		while (lo >= 0 && j < n) {
			const char *b = json_string_value(json_array_get(names,
									 j));

			if (!b || split(b, &bl) < 0 || bl != pl ||
			    strncmp(a, b, pl))
				break;
			j++;
		}
		if (lo < 0 || j == i + 1) {
			put(buf, len, &out, "%s%s", out ? "," : "", a);
			i++;
			continue;
		}
		put(buf, len, &out, "%s%.*s[%ld", out ? "," : "", (int)pl, a,
		    lo);
		for (size_t k = i + 1; k < j; k++) {
			long v = split(json_string_value(json_array_get(names,
									k)),
				       &bl);

			if (v != prev + 1) {
				if (prev > lo)
					put(buf, len, &out, "-%ld", prev);
				put(buf, len, &out, ",%ld", v);
				lo = v;
			}
			prev = v;
		}
		if (prev > lo)
			put(buf, len, &out, "-%ld", prev);
		put(buf, len, &out, "]");
		i = j;
	}
	if (out >= len && len > 4)
		strcpy(buf + len - 4, "...");
}
