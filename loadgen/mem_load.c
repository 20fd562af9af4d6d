/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

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

/* The bytes this process already holds (statm's resident pages), or 0 if unknown. */
static uint64_t resident_bytes(size_t pagesize) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/statm", "re");
        unsigned long long size, resident;

        if (!f || fscanf(f, "%llu %llu", &size, &resident) != 2)
                return 0;
        /* f is closed by its cleanup attribute, which cppcheck does not model. */
        // cppcheck-suppress resourceLeak
        return (uint64_t) resident * pagesize;
}

/* What mem_load references: MEM_LOAD_RAM_PERCENT of ram_bytes, less what the process holds
 * already, since both count against the run's memory limit. */
static uint64_t buffer_bytes(uint64_t ram_bytes, uint64_t resident) {
        uint64_t want = ram_bytes / 100 * MEM_LOAD_RAM_PERCENT;

        if (resident >= want)
                return 0;
        return (want - resident) / SHADOW_DIVISOR * SHADOW_MULTIPLIER;
}

int mem_load_run(const LoadOptions *o, LoadResult *ret) {
        long ps = sysconf(_SC_PAGESIZE);
        size_t pagesize = ps > 0 ? (size_t) ps : 4096;
        uint64_t bytes = buffer_bytes(o->ram_bytes, resident_bytes(pagesize));
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
