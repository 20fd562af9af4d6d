/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fileio.h"
#include "load.h"
#include "macro.h"

#define LINE 64u /* bytes of a cache line */

/* AddressSanitizer keeps a shadow byte for every 8 it checks, charged to the same memory group:
 * a sanitized build referencing 90% of --mem was killed by it at 106%. */
#ifdef __SANITIZE_ADDRESS__
#define SHADOW_DIVISOR 9u /* buffer + buffer / 8 = 9/8 of the buffer */
#define SHADOW_MULTIPLIER 8u
#else
#define SHADOW_DIVISOR 1u
#define SHADOW_MULTIPLIER 1u
#endif

int mem_load_parse_private_dirty(const char *smaps_rollup, uint64_t *ret) {
        static const char key[] = "Private_Dirty:";
        const char *line;

        if (!smaps_rollup)
                return -EINVAL;
        for (line = smaps_rollup; *line; line++) {
                if (strncmp(line, key, sizeof key - 1) == 0) {
                        unsigned long long kib;
                        int end = 0;

                        if (sscanf(line + sizeof key - 1, " %llu kB%n", &kib, &end) != 1 ||
                            end == 0 || kib > UINT64_MAX / 1024)
                                return -EBADMSG;
                        *ret = (uint64_t) kib * 1024;
                        return 0;
                }
                line = strchr(line, '\n');
                if (!line)
                        break;
        }
        return -EBADMSG;
}

/* What this process has been charged since it was forked, or 0 if unknown. Not statm's resident
 * pages: after fork() those count every page still shared with the parent, which stays charged
 * to the parent's memory group, not the run's. A sanitized loadgen's parent holds 15-25 MiB
 * (more with transparent huge pages "always"), so the reference fell out of range at --mem 32M.
 * The pages this process wrote itself (copies of shared ones included) are its private dirty
 * pages: those are charged to the group whose limit mem_load sizes itself by. */
static uint64_t charged_bytes(void) {
        _cleanup_close_ int fd = open("/proc/self/smaps_rollup", O_RDONLY | O_CLOEXEC);
        _cleanup_free_ char *text = NULL;
        uint64_t bytes;

        if (fd < 0 || read_full_fd(fd, 64 * 1024, &text, NULL) < 0 ||
            mem_load_parse_private_dirty(text, &bytes) < 0)
                return 0;
        return bytes;
}

uint64_t mem_load_buffer_bytes(uint64_t ram_bytes, uint64_t charged) {
        uint64_t want = ram_bytes / 100 * MEM_LOAD_RAM_PERCENT;

        if (charged >= want)
                return 0;
        return (want - charged) / SHADOW_DIVISOR * SHADOW_MULTIPLIER;
}

int mem_load_run(const LoadOptions *o, LoadResult *ret) {
        long ps = sysconf(_SC_PAGESIZE);
        size_t pagesize = ps > 0 ? (size_t) ps : 4096;
        uint64_t bytes = mem_load_buffer_bytes(o->ram_bytes, charged_bytes());
        uint64_t page, npages, step, start, deadline, passes = 0;
        volatile unsigned char *buf;
        bool stopped = false;
        void *m;

        if (bytes < pagesize || bytes > SIZE_MAX)
                return -ERANGE;
        m = mmap(NULL, (size_t) bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
                return negative_errno();
        buf = m;
        npages = bytes / pagesize;
        step = load_page_step(npages);
        deadline = load_ready(o);
        start = now_usec();

        while (!stopped) {
                /* Every cache line of each page, from another one each pass. One line a page made
                 * every access a TLB miss as well as a cache miss: 0.37x the lines per second of
                 * stress-ng --vm write64. */
                size_t first = (size_t) (passes * LINE) % pagesize;

                page = 0;
                for (uint64_t i = 0; i < npages; i++) {
                        volatile unsigned char *p = buf + page * pagesize;

                        for (size_t l = first; l < pagesize; l += LINE)
                                p[l]++;
                        for (size_t l = first % LINE; l < first; l += LINE)
                                p[l]++;
                        page += step;
                        if (page >= npages)
                                page -= npages;
                        if ((i & 255) == 255 && load_should_stop(o, deadline)) {
                                stopped = true;
                                break;
                        }
                }
                if (!stopped) {
                        passes++;
                        load_progress_add(o, 1);
                }
                stopped = stopped || load_should_stop(o, deadline);
        }
        (void) munmap(m, (size_t) bytes);

        load_result(o, start, ret);
        return 0;
}
