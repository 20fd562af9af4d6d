/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Pressure stall information (the kernel's Documentation/accounting/psi.rst): the system-wide
 * /proc/pressure/{cpu,io,memory} and a cgroup2 group's cpu.pressure, io.pressure, memory.pressure.
 *
 *   some avg10=1.23 avg60=0.50 avg300=0.08 total=3703689
 *   full avg10=0.00 avg60=0.00 avg300=0.00 total=0
 *
 * avgN are the shares of wall time, in percent with two decimals, that some (or all) non-idle
 * tasks stalled over the last N seconds. They are parsed to fixed point in hundredths of a
 * percent, i.e. permyriad: "1.23" -> 123, "100.00" -> 10000. total is the cumulated stall time in
 * microseconds since boot (or since the group was created).
 *
 * The "some" line is always there. The "full" line is there for io and memory, and for cpu since
 * Linux 5.13; at system level cpu "full" is all zero (it only means something for cgroups).
 * has_full says whether the file had it.
 *
 * Every function that returns int returns 0 or a negative errno and writes ret only on success.
 */

#include <stdbool.h>
#include <stdint.h>

#define PSI_PERMYRIAD_MAX 10000u
/* Real pressure files are about 110 bytes; anything near this is not one. */
#define PSI_FILE_SIZE_MAX 4096u

typedef struct PsiLine {
        uint32_t avg10_permyriad;
        uint32_t avg60_permyriad;
        uint32_t avg300_permyriad;
        uint64_t total_usec;
} PsiLine;

typedef struct PsiStats {
        PsiLine some;
        PsiLine full; /* all zero when !has_full */
        bool has_full;
} PsiStats;

/*
 * Parses the text of a pressure file. Pure; the fuzz target.
 *
 * Each line is "some" or "full" followed by blank-separated key=value fields. avg10, avg60, avg300
 * and total are required exactly once, in any order; unknown fields with a well-formed key
 * ([a-z0-9_]+) and a non-empty printable value are ignored, so a kernel that adds fields keeps
 * working. An avg is 1-3 digits, a dot and exactly 2 digits (the kernel prints "%lu.%02lu"); a
 * total is decimal digits.
 *
 * Returns -EINVAL for anything else: an unknown line kind, a duplicate line or field, a missing
 * "some" line or required field, a malformed number, a control character, an empty line, or a
 * last line without its newline (the kernel ends every line with one, so a read cut short is
 * caught even when it cuts a number). Returns -ERANGE for an avg above 100.00 or a total above
 * UINT64_MAX.
 */
int psi_parse(const char *buf, PsiStats *ret);

/*
 * Reads and parses the pressure file name relative to dirfd (an fd of /proc/pressure, of a
 * cgroup2 group directory, of a fixture, or AT_FDCWD).
 *
 * The two ways a host lacks PSI are reported apart, so callers can say which:
 *   -ENOENT      no such file. /proc/pressure is absent when the kernel booted with psi=0 or was
 *                built without CONFIG_PSI; recent kernels also hide a group's *.pressure files
 *                when PSI is off or the group has cgroup.pressure set to 0 (measured on 6.18).
 *   -EOPNOTSUPP  the file exists but the kernel refuses to read it: PSI built in but disabled at
 *                boot, on kernels that still show the cgroup files then.
 * Also: -EFBIG if the file holds more than PSI_FILE_SIZE_MAX bytes, -EBADMSG if it contains a
 * NUL byte (as every reader of a kernel file, see fileio.h), any psi_parse() error, and other
 * errors of openat() and read().
 */
int psi_read_at(int dirfd, const char *name, PsiStats *ret);
