/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "load.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "macro.h"

/* In contest's order: no_load first, since every Ratio is over its Time. */
const Load loads[] = {
        { "no_load", "Nothing: sleeps for the duration (the baseline).", "units", "-", 1,
          no_load_run },
        { "cacherun", "Nothing, but the job runs again straight after a run, caches warm.", "units",
          "-", 1, cacherun_run },
        { "process_load", "4 x ncpus processes in ncpus rings of pipes pass a token round each.",
          "token hops", "token hops / 10^4", 10000, process_load_run },
        { "ctar_load", "Creates a tar of the job's tree (tar -cf) in the work dir, repeatedly.",
          "archives", "archives", 1, ctar_load_run },
        { "xtar_load",
          "Extracts a tar of the job's tree into a fresh directory, removes it, "
          "repeatedly.",
          "extractions", "extractions", 1, xtar_load_run },
        { "io_load", "Writes zeroes to a file the size of RAM (--mem) as dd would, repeatedly.",
          "MB written", "MB written / 100", 100, io_load_run },
        { "io_other", "io_load in a directory of its own under the other dir.", "MB written",
          "MB written / 100", 100, io_other_run },
        { "read_load", "Reads a file the size of RAM (--mem) from start to end, repeatedly.",
          "MB read", "MB read / 100", 100, read_load_run },
        { "list_load", "Lists the job's tree (ls -lRa) to /dev/null, repeatedly.", "listings",
          "listings", 1, list_load_run },
        { "mem_load", "Writes every line of 90% of RAM (--mem), pages in a cache-hostile order.",
          "passes", "passes", 1, mem_load_run },
};
const size_t n_loads = ELEMENTSOF(loads);

const Load *load_find(const char *name) {
        for (size_t i = 0; i < n_loads; i++)
                if (streq(loads[i].name, name))
                        return &loads[i];
        return NULL;
}

void load_options_init(LoadOptions *o) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);

        *o = (LoadOptions){
                .duration_usec = 1000000,
                .ncpus = n > 0 ? (unsigned) n : 1,
                .ram_bytes = LOAD_DEFAULT_RAM_BYTES,
                .ready_fd = -1,
        };
}

uint64_t load_ready(const LoadOptions *o) {
        if (o->ready_fd >= 0)
                (void) !write(o->ready_fd, "r", 1); /* a harness that went away: carry on */
        return o->duration_usec ? now_usec() + o->duration_usec : UINT64_MAX;
}

void load_progress_add(const LoadOptions *o, uint64_t n) {
        atomic_fetch_add_explicit(o->progress, n, memory_order_relaxed);
}

void load_result(const LoadOptions *o, uint64_t start_usec, LoadResult *ret) {
        *ret = (LoadResult){
                .work = atomic_load_explicit(o->progress, memory_order_relaxed),
                .elapsed_usec = now_usec() - start_usec,
                .interrupted = o->stop && *o->stop,
        };
}

bool load_should_stop(const LoadOptions *o, uint64_t deadline_usec) {
        return (o->stop && *o->stop) || now_usec() >= deadline_usec;
}

void load_nap(uint64_t deadline_usec, uint64_t max_usec) {
        uint64_t now = now_usec(), d;
        struct timespec ts;

        if (now >= deadline_usec)
                return;
        d = MIN(deadline_usec - now, max_usec);
        ts = (struct timespec){ .tv_sec = (time_t) (d / 1000000),
                                .tv_nsec = (long) (d % 1000000) * 1000 };
        (void) nanosleep(&ts, NULL); /* EINTR: the caller checks its stop flag */
}

/* Waits for the command until the deadline or a stop, killing it then: -ECANCELED, else 0. */
static int command_wait(const LoadOptions *o, uint64_t deadline_usec, Child *c) {
        int r = child_wait(c, deadline_usec, o->stop);

        if (r < 0)
                child_kill(c);
        return r == -ETIME || r == -EINTR ? -ECANCELED : r;
}

int load_run_command(const LoadOptions *o, uint64_t deadline_usec, const char *const argv[]) {
        /* stdio on /dev/null; killed with loadgen, and at the deadline or a stop */
        ChildSpec spec = { .argv = argv,
                           .pdeathsig = SIGKILL,
                           .stdin_fd = CHILD_FD_NULL,
                           .stdout_fd = CHILD_FD_NULL,
                           .stderr_fd = CHILD_FD_NULL };
        Child c = CHILD_NULL;
        int e, r;

        if (!argv || !argv[0])
                return -EINVAL;
        if ((o->stop && *o->stop) || now_usec() >= deadline_usec)
                return -ECANCELED;
        r = child_spawn(&spec, &c);
        if (r < 0)
                return r;
        r = command_wait(o, deadline_usec, &c);
        e = child_start_error(&c);
        child_done(&c);
        if (r < 0)
                return r;
        if (WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0)
                return 0;
        return e < 0 ? e : -EIO; /* exec's error, or the command failed */
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void) st;
        (void) ftw;
        /* FTW_DEPTH: a directory comes after its contents (FTW_DP), or unread (FTW_DNR). */
        if ((type == FTW_DP || type == FTW_DNR ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT)
                return errno;
        return 0;
}

int load_remove_tree(const char *path) {
        int r;

        if (!path)
                return -EINVAL;
        r = nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
        if (r < 0)
                return errno == ENOENT ? 0 : negative_errno();
        return -r; /* remove_entry()'s errno, or 0 */
}

int load_write_zeroes(int fd, size_t len) {
        static char zeroes[1 << 20]; /* not const: in .bss, only read, so backed by the zero page */

        while (len > 0) {
                ssize_t n = write(fd, zeroes, MIN(len, sizeof(zeroes)));

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        return -EIO;
                len -= (size_t) n;
        }
        return 0;
}

int parse_seconds(const char *s, uint64_t *ret_usec) {
        unsigned long long whole;
        uint64_t frac = 0, scale = 100000;
        char *end;

        if (!s || !isdigit((unsigned char) s[0]))
                return -EINVAL;
        errno = 0;
        whole = strtoull(s, &end, 10);
        if (errno == ERANGE || whole > 1000000)
                return -ERANGE;
        if (*end == '.') {
                end++;
                if (!isdigit((unsigned char) *end))
                        return -EINVAL;
                for (; isdigit((unsigned char) *end); end++) {
                        if (scale == 0)
                                return -EINVAL; /* finer than a microsecond */
                        frac += (uint64_t) (*end - '0') * scale;
                        scale /= 10;
                }
        }
        if (*end != '\0')
                return -EINVAL;
        if (whole == 0 && frac == 0)
                return -ERANGE;
        *ret_usec = (uint64_t) whole * 1000000 + frac;
        return 0;
}

int parse_size(const char *s, uint64_t *ret_bytes) {
        static const char suffixes[] = "KMGT";
        unsigned long long v;
        unsigned shift = 0;
        char *end;

        if (!s || !isdigit((unsigned char) s[0]))
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (*end != '\0') {
                const char *p = strchr(suffixes, toupper((unsigned char) *end));

                if (!p)
                        return -EINVAL;
                shift = 10 * (unsigned) (p - suffixes + 1);
                end++;
                if (streq(end, "iB") || streq(end, "B"))
                        end += strlen(end);
                if (*end != '\0')
                        return -EINVAL;
        }
        if (v == 0)
                return -ERANGE;
        if (shift && v > (UINT64_MAX >> shift))
                return -ERANGE;
        *ret_bytes = (uint64_t) v << shift;
        return 0;
}

static uint64_t gcd(uint64_t a, uint64_t b) {
        while (b) {
                uint64_t t = a % b;
                a = b;
                b = t;
        }
        return a;
}

uint64_t load_page_step(uint64_t npages) {
        uint64_t step = 4099; /* prime, 16 MiB apart with 4 KiB pages */

        if (npages <= 1)
                return 1;
        step %= npages;
        while (step == 0 || gcd(step, npages) != 1)
                step = (step + 1) % npages;
        return step;
}
