/*
 * why.c — the engine's one way of saying why it refused (ckpt_int.h).
 */
#include <stdio.h>

#include "ckpt_int.h"

int ckpt_fail(char *why, size_t whylen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return rc;
}
