/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Replays a fuzz target's corpus without libFuzzer: every file named, and every file in every
 * directory named, is passed once to LLVMFuzzerTestOneInput(). Built with the sanitizers by
 * `make check`, so a corpus entry that once crashed a parser keeps being checked.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
        FILE *f = fopen(path, "re");
        uint8_t *buf;
        long n;

        if (!f) {
                perror(path);
                return -1;
        }
        if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0) {
                perror(path);
                fclose(f);
                return -1;
        }
        /* An exact-size heap copy, so ASan sees any read past the input. */
        buf = malloc(n > 0 ? (size_t) n : 1);
        if (!buf || fread(buf, 1, (size_t) n, f) != (size_t) n) {
                perror(path);
                free(buf);
                fclose(f);
                return -1;
        }
        fclose(f);
        (void) LLVMFuzzerTestOneInput(buf, (size_t) n);
        free(buf);
        return 0;
}

int main(int argc, char **argv) {
        unsigned count = 0;

        for (int i = 1; i < argc; i++) {
                struct stat st;
                DIR *d;
                struct dirent *de;

                if (stat(argv[i], &st) < 0) {
                        perror(argv[i]);
                        return 1;
                }
                if (!S_ISDIR(st.st_mode)) {
                        if (replay_file(argv[i]) < 0)
                                return 1;
                        count++;
                        continue;
                }
                d = opendir(argv[i]);
                if (!d) {
                        perror(argv[i]);
                        return 1;
                }
                while ((de = readdir(d))) {
                        char path[4096];

                        if (de->d_name[0] == '.')
                                continue;
                        snprintf(path, sizeof path, "%s/%s", argv[i], de->d_name);
                        if (replay_file(path) < 0) {
                                closedir(d);
                                return 1;
                        }
                        count++;
                }
                closedir(d);
        }
        printf("%u inputs replayed\n", count);
        return count > 0 ? 0 : 1;
}
