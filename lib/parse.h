/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Decimal numbers as the kernel prints them: ASCII digits only (not isdigit(), whatever the
 * locale), no sign, no blanks, no base prefix: what strtoull() would also take ("-1", " 1",
 * "0x1") is refused. The one parser behind /proc, cgroupfs, PSI, the configuration and loadgen's
 * reading of the daemon's lines; each caller maps the errors to its own domain (the /proc
 * readers: -EBADMSG).
 *
 * Pure. Return 0, or -EINVAL when there is no digit (or, for a span, a byte that is not one),
 * -ERANGE above max; *ret (and *p) are written only on success.
 */

#include <stddef.h>
#include <stdint.h>

/* The digits at *p, at most max; advances *p past them. The text after them is not looked at:
 * "12 34" gives 12 and leaves *p at " 34". */
int parse_u64_prefix(const char **p, uint64_t max, uint64_t *ret);

/* Exactly the n bytes at s, all digits (n == 0: -EINVAL); never reads s[n]. Bytes are checked
 * in order: the first non-digit or overflow decides the error. */
int parse_u64_span(const char *s, size_t n, uint64_t *ret);
