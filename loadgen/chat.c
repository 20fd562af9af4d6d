/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * chat: the VolanoMark simulator of IBM's Linux Scalability Effort (seed 000). R rooms of U users
 * chat over loopback TCP, as VolanoMark's Java chat server and its clients did: each user is a
 * client connection and four threads. On the client, a sender writes the user's M messages to the
 * server and a receiver reads every message the room's other users send. On the server, the
 * connection's reader takes each message and queues it for each other user of the room, and each
 * connection's writer sends its queue to its client. Every thread of a run starts together; the
 * figure is the messages the clients received per second, from the release to the last one.
 */
#include "chat.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "benchmark.h"
#include "cli.h"
#include "fileio.h"
#include "load.h"
#include "log.h"
#include "macro.h"

#define CHAT_MAGIC 0x54414843u /* "CHAT" */
#define ROOMS_MAX 10000u
#define USERS_MAX 1000u
#define MESSAGES_MAX 1000000u
/* The threads only copy messages between a socket and a queue: a small stack each keeps 2400 of
 * them (30 rooms) cheap, with room for the sanitizers' frames. */
#define THREAD_STACK_BYTES (256u << 10)

/* ---- the arithmetic and the framing */

uint64_t chat_delivered(const ChatParams *p) {
        if (p->users < 2)
                return 0;
        return (uint64_t) p->rooms * p->users * p->messages * (p->users - 1);
}

void chat_needs(const ChatParams *p, uint64_t *ret_tasks, uint64_t *ret_fds) {
        uint64_t users = (uint64_t) p->rooms * p->users;

        *ret_tasks = users * CHAT_THREADS_PER_USER;
        *ret_fds = users * 2 + 1;
}

double chat_rate(uint64_t delivered, uint64_t elapsed_usec) {
        if (elapsed_usec == 0)
                return 0;
        return (double) delivered * 1e6 / (double) elapsed_usec;
}

static void put_le32(uint8_t *p, uint32_t v) {
        p[0] = (uint8_t) v;
        p[1] = (uint8_t) (v >> 8);
        p[2] = (uint8_t) (v >> 16);
        p[3] = (uint8_t) (v >> 24);
}

static uint32_t get_le32(const uint8_t *p) {
        return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
               (uint32_t) p[3] << 24;
}

static uint8_t filler(size_t i, unsigned sender, unsigned seq) {
        return (uint8_t) (i * 31u + sender * 7u + seq);
}

void chat_message_encode(void *buf, size_t size, unsigned room, unsigned sender, unsigned seq) {
        uint8_t *p = buf;

        put_le32(p, CHAT_MAGIC);
        put_le32(p + 4, room);
        put_le32(p + 8, sender);
        put_le32(p + 12, seq);
        for (size_t i = CHAT_MESSAGE_MIN; i < size; i++)
                p[i] = filler(i, sender, seq);
}

int chat_message_check(const void *buf, size_t size, unsigned room, unsigned self, unsigned users,
                       unsigned *ret_sender, unsigned *ret_seq) {
        const uint8_t *p = buf;
        unsigned sender, seq;

        if (size < CHAT_MESSAGE_MIN || get_le32(p) != CHAT_MAGIC || get_le32(p + 4) != room)
                return -EBADMSG;
        sender = get_le32(p + 8);
        seq = get_le32(p + 12);
        if (sender >= users || sender == self)
                return -EBADMSG;
        for (size_t i = CHAT_MESSAGE_MIN; i < size; i++)
                if (p[i] != filler(i, sender, seq))
                        return -EBADMSG;
        *ret_sender = sender;
        *ret_seq = seq;
        return 0;
}

int chat_format_header(char *buf, size_t size, const char *label) {
        return snprintf(buf, size, "Configuration Parms %s\n", label);
}

int chat_format_row(char *buf, size_t size, unsigned rooms, unsigned messages, double rate) {
        return snprintf(buf, size, "%u rooms, %u messages %.0f\n", rooms, messages, rate);
}

/* ---- one run: the threads and the sockets */

/* What the server holds for one connection's writer, as VolanoMark's server queued a
 * connection's output for its writer thread. */
typedef struct Queue {
        pthread_mutex_t lock;
        pthread_cond_t nonempty, nonfull;
        unsigned head, count;
        uint8_t *slots; /* CHAT_QUEUE_DEPTH messages */
} Queue;

struct Chat;

typedef struct User {
        struct Chat *chat;
        unsigned room, self; /* self: the user's number in its room */
        int client_fd, server_fd;
        Queue queue;
        uint64_t received; /* by the client's receiver */
} User;

typedef struct Chat {
        const ChatParams *p;
        User *users; /* room after room */
        pthread_mutex_t lock;
        pthread_cond_t main_wake; /* the main thread waits for ready, done or an error */
        pthread_cond_t go_wake;
        unsigned threads, ready, done;
        bool go;
        int error;
        const char *error_what;
        uint64_t start_usec, end_usec;
} Chat;

typedef struct ChatResult {
        uint64_t elapsed_usec;
        uint64_t delivered; /* counted by the receivers */
        unsigned port;
} ChatResult;

static void wait_for_go(Chat *c) {
        pthread_mutex_lock(&c->lock);
        if (++c->ready == c->threads)
                pthread_cond_signal(&c->main_wake);
        while (!c->go)
                pthread_cond_wait(&c->go_wake, &c->lock);
        pthread_mutex_unlock(&c->lock);
}

static void *thread_done(Chat *c, int r, const char *what) {
        pthread_mutex_lock(&c->lock);
        if (r < 0 && c->error == 0) {
                c->error = r;
                c->error_what = what;
        }
        if (++c->done == c->threads)
                c->end_usec = now_usec();
        if (r < 0 || c->done == c->threads)
                pthread_cond_signal(&c->main_wake);
        pthread_mutex_unlock(&c->lock);
        return NULL;
}

static int send_all(int fd, const uint8_t *p, size_t len) {
        while (len > 0) {
                ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

static int recv_all(int fd, uint8_t *p, size_t len) {
        while (len > 0) {
                ssize_t n = recv(fd, p, len, MSG_WAITALL);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        return -ECONNRESET; /* the peer is gone before the end */
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

static void queue_put(Queue *q, const uint8_t *msg, size_t size) {
        pthread_mutex_lock(&q->lock);
        while (q->count == CHAT_QUEUE_DEPTH)
                pthread_cond_wait(&q->nonfull, &q->lock);
        memcpy(q->slots + (size_t) ((q->head + q->count) % CHAT_QUEUE_DEPTH) * size, msg, size);
        q->count++;
        pthread_cond_signal(&q->nonempty);
        pthread_mutex_unlock(&q->lock);
}

static void queue_get(Queue *q, uint8_t *msg, size_t size) {
        pthread_mutex_lock(&q->lock);
        while (q->count == 0)
                pthread_cond_wait(&q->nonempty, &q->lock);
        memcpy(msg, q->slots + (size_t) q->head * size, size);
        q->head = (q->head + 1) % CHAT_QUEUE_DEPTH;
        q->count--;
        pthread_cond_signal(&q->nonfull);
        pthread_mutex_unlock(&q->lock);
}

static void *client_send(void *userdata) {
        User *u = userdata;
        const ChatParams *p = u->chat->p;
        _cleanup_free_ uint8_t *buf = malloc(p->size);
        int r = buf ? 0 : -ENOMEM;

        wait_for_go(u->chat);
        for (unsigned seq = 0; seq < p->messages && r >= 0; seq++) {
                chat_message_encode(buf, p->size, u->room, u->self, seq);
                r = send_all(u->client_fd, buf, p->size);
        }
        return thread_done(u->chat, r, "a client's sender");
}

static void *client_recv(void *userdata) {
        User *u = userdata;
        const ChatParams *p = u->chat->p;
        _cleanup_free_ uint8_t *buf = malloc(p->size);
        _cleanup_free_ unsigned *next = calloc(p->users, sizeof *next);
        uint64_t want = (uint64_t) (p->users - 1) * p->messages;
        int r = buf && next ? 0 : -ENOMEM;

        wait_for_go(u->chat);
        for (uint64_t i = 0; i < want && r >= 0; i++) {
                unsigned sender, seq;

                r = recv_all(u->client_fd, buf, p->size);
                if (r >= 0)
                        r = chat_message_check(buf, p->size, u->room, u->self, p->users, &sender,
                                               &seq);
                /* Each sender's messages come through one reader and one queue: in order. */
                if (r >= 0 && seq != next[sender]++)
                        r = -EBADMSG;
                if (r >= 0)
                        u->received++;
        }
        return thread_done(u->chat, r, "a client's receiver");
}

static void *server_recv(void *userdata) {
        User *u = userdata;
        const ChatParams *p = u->chat->p;
        User *room = u->chat->users + (size_t) u->room * p->users;
        _cleanup_free_ uint8_t *buf = malloc(p->size);
        int r = buf ? 0 : -ENOMEM;

        wait_for_go(u->chat);
        for (unsigned i = 0; i < p->messages && r >= 0; i++) {
                r = recv_all(u->server_fd, buf, p->size);
                for (unsigned k = 0; k < p->users && r >= 0; k++)
                        if (k != u->self)
                                queue_put(&room[k].queue, buf, p->size);
        }
        return thread_done(u->chat, r, "a server's reader");
}

static void *server_send(void *userdata) {
        User *u = userdata;
        const ChatParams *p = u->chat->p;
        _cleanup_free_ uint8_t *buf = malloc(p->size);
        uint64_t want = (uint64_t) (p->users - 1) * p->messages;
        int r = buf ? 0 : -ENOMEM;

        wait_for_go(u->chat);
        for (uint64_t i = 0; i < want && r >= 0; i++) {
                queue_get(&u->queue, buf, p->size);
                r = send_all(u->server_fd, buf, p->size);
        }
        return thread_done(u->chat, r, "a server's writer");
}

static int set_nodelay(int fd) {
        int one = 1;

        return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0 ? negative_errno()
                                                                              : 0;
}

/* The server's socket on an ephemeral port of 127.0.0.1. */
static int listen_loopback(struct sockaddr_in *ret_addr) {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof a;
        int fd;

        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        if (bind(fd, (struct sockaddr *) &a, sizeof a) < 0 || listen(fd, SOMAXCONN) < 0 ||
            getsockname(fd, (struct sockaddr *) &a, &len) < 0) {
                int r = negative_errno();

                (void) close(fd);
                return r;
        }
        *ret_addr = a;
        return fd;
}

/* A user's connection: the client connects, the server accepts it (the only one pending: users
 * connect one at a time). */
static int connect_user(int lfd, const struct sockaddr_in *addr, User *u) {
        u->client_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (u->client_fd < 0)
                return negative_errno();
        if (connect(u->client_fd, (const struct sockaddr *) addr, sizeof *addr) < 0)
                return negative_errno();
        u->server_fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (u->server_fd < 0)
                return negative_errno();
        /* Each message a segment of its own, as a chat line is sent when typed. */
        if (set_nodelay(u->client_fd) < 0 || set_nodelay(u->server_fd) < 0)
                return negative_errno();
        return 0;
}

/* The users' connections and queues. On a failure what was made is left for the process's end
 * (see chat_fn()). */
static int chat_setup(Chat *c, unsigned *ret_port) {
        const ChatParams *p = c->p;
        size_t n = (size_t) p->rooms * p->users;
        struct sockaddr_in addr;
        int lfd, r = 0;

        c->users = calloc(n, sizeof *c->users);
        if (!c->users)
                return -ENOMEM;
        lfd = listen_loopback(&addr);
        if (lfd < 0)
                return log_error_errno(lfd, "Failed to listen on 127.0.0.1: %m");
        for (size_t i = 0; i < n && r >= 0; i++) {
                User *u = &c->users[i];

                *u = (User){ .chat = c,
                             .room = (unsigned) (i / p->users),
                             .self = (unsigned) (i % p->users),
                             .client_fd = -EBADF,
                             .server_fd = -EBADF };
                u->queue.slots = malloc((size_t) CHAT_QUEUE_DEPTH * p->size);
                if (!u->queue.slots) {
                        r = -ENOMEM;
                        break;
                }
                pthread_mutex_init(&u->queue.lock, NULL);
                pthread_cond_init(&u->queue.nonempty, NULL);
                pthread_cond_init(&u->queue.nonfull, NULL);
                r = connect_user(lfd, &addr, u);
                if (r < 0)
                        log_error_errno(r, "Failed to connect user %zu to 127.0.0.1:%u: %m", i,
                                        ntohs(addr.sin_port));
        }
        (void) close(lfd);
        *ret_port = ntohs(addr.sin_port);
        return r;
}

static void chat_free(Chat *c) {
        size_t n = (size_t) c->p->rooms * c->p->users;

        for (size_t i = 0; c->users && i < n; i++) {
                User *u = &c->users[i];

                if (u->client_fd >= 0)
                        (void) close(u->client_fd);
                if (u->server_fd >= 0)
                        (void) close(u->server_fd);
                if (!u->queue.slots)
                        continue;
                free(u->queue.slots);
                pthread_mutex_destroy(&u->queue.lock);
                pthread_cond_destroy(&u->queue.nonempty);
                pthread_cond_destroy(&u->queue.nonfull);
        }
        free(c->users);
        pthread_mutex_destroy(&c->lock);
        pthread_cond_destroy(&c->main_wake);
        pthread_cond_destroy(&c->go_wake);
}

static int start_threads(Chat *c, pthread_t *tids) {
        static void *(*const roles[CHAT_THREADS_PER_USER])(void *) = {
                client_send,
                client_recv,
                server_recv,
                server_send,
        };
        size_t n = (size_t) c->p->rooms * c->p->users;
        pthread_attr_t attr;
        int r = 0;

        if (pthread_attr_init(&attr) != 0 ||
            pthread_attr_setstacksize(&attr, THREAD_STACK_BYTES) != 0)
                return -ENOMEM;
        for (size_t i = 0; i < n * CHAT_THREADS_PER_USER && r == 0; i++)
                r = pthread_create(&tids[i], &attr, roles[i % CHAT_THREADS_PER_USER],
                                   &c->users[i / CHAT_THREADS_PER_USER]);
        (void) pthread_attr_destroy(&attr);
        if (r != 0)
                return log_error_errno(r, "Failed to start the chat's threads: %m");
        return 0;
}

/* Releases the threads and waits until all are done or one failed. */
static int release_and_wait(Chat *c) {
        int r;

        pthread_mutex_lock(&c->lock);
        while (c->ready < c->threads)
                pthread_cond_wait(&c->main_wake, &c->lock);
        c->start_usec = now_usec();
        c->go = true;
        pthread_cond_broadcast(&c->go_wake);
        while (c->done < c->threads && c->error == 0)
                pthread_cond_wait(&c->main_wake, &c->lock);
        r = c->error;
        if (r < 0)
                log_error_errno(r, "chat: %s failed: %m", c->error_what);
        pthread_mutex_unlock(&c->lock);
        return r;
}

/*
 * The BenchFn: one run of p in this process. On a failure it returns at once, without joining or
 * freeing: threads may still be blocked on the sockets and queues, and the process ends with
 * this function anyway, taking them along.
 */
static int chat_fn(void *userdata, void *out) {
        const ChatParams *p = userdata;
        ChatResult *res = out;
        Chat *c;
        pthread_t *tids;
        uint64_t received = 0;
        size_t n = (size_t) p->rooms * p->users;
        int r;

        c = calloc(1, sizeof *c);
        tids = calloc(n * CHAT_THREADS_PER_USER, sizeof *tids);
        if (!c || !tids)
                return -ENOMEM;
        *c = (Chat){ .p = p, .threads = (unsigned) (n * CHAT_THREADS_PER_USER) };
        pthread_mutex_init(&c->lock, NULL);
        pthread_cond_init(&c->main_wake, NULL);
        pthread_cond_init(&c->go_wake, NULL);
        r = chat_setup(c, &res->port);
        if (r < 0)
                return r;
        r = start_threads(c, tids);
        if (r < 0)
                return r;
        r = release_and_wait(c);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n * CHAT_THREADS_PER_USER; i++)
                (void) pthread_join(tids[i], NULL);
        for (size_t i = 0; i < n; i++)
                received += c->users[i].received;
        res->elapsed_usec = c->end_usec - c->start_usec;
        res->delivered = received;
        chat_free(c);
        free(c);
        free(tids);
        if (received != chat_delivered(p))
                return log_error_errno(EIO,
                                       "chat: %" PRIu64 " messages received, %" PRIu64 " sent.",
                                       received, chat_delivered(p));
        return 0;
}

/* ---- the command */

typedef struct Args {
        unsigned *rooms, *messages;
        size_t n_rooms, n_messages;
        unsigned users, size;
        const char *label, *json;
} Args;

static void args_done(Args *a) {
        a->rooms = mfree(a->rooms);
        a->messages = mfree(a->messages);
}

static void help(void) {
        printf("Usage: loadgen chat [OPTIONS]\n"
               "\n"
               "The VolanoMark simulator of IBM's Linux Scalability Effort (seed 000): R rooms\n"
               "of U users chat over loopback TCP (127.0.0.1, an ephemeral port). Each user is\n"
               "four threads: on the client, one sends the user's M messages to the server and\n"
               "one receives the room's; on the server, one reads the user's connection and\n"
               "queues each message for the room's other U-1 users (at most %u waiting per\n"
               "connection), and one writes the user's queue to its client. Sockets use\n"
               "TCP_NODELAY: a message is a segment. All threads start together; the figure is\n"
               "delivered messages per second: the R x U x M x (U-1) messages the clients\n"
               "received, over the wall time from the release to the last one. Higher is\n"
               "better. Each combination runs in a process of its own in the run's job cgroup,\n"
               "rooms outer, messages inner:\n"
               "\n"
               "  Configuration Parms default\n"
               "  10 rooms, 100 messages 69465\n"
               "  10 rooms, 200 messages 86868\n"
               "\n"
               "  -r --rooms=AXIS        Rooms (default 10-30:10: 10, 20, 30; 1 to %u).\n"
               "  -M --messages=AXIS     Messages each user sends (default 100-400:100;\n"
               "                         1 to %u).\n"
               "  -u --users=N           Users per room (default 20; 2 to %u).\n"
               "  -s --size=BYTES        Bytes per message (default 100; %u to %u).\n"
               "  -L --label=NAME        The column title (default \"default\").\n"
               "AXIS is a comma-separated list of N, A-B, A-B:STEP or A-BxFACTOR. A run needs\n"
               "4 threads and 2 sockets per user in one process: sizes this machine cannot\n"
               "hold are refused before anything starts.\n" CLI_HELP_CPUS CLI_HELP_NO_SANDBOX
                       CLI_HELP_NO_HOST_RESERVE CLI_HELP_JSON
               "                         Rows: rooms, messages, users, size, delivered,\n"
               "                         elapsed_usec, messages_per_sec, port.\n"
               "  -h --help              Show this help.\n",
               CHAT_QUEUE_DEPTH, ROOMS_MAX, MESSAGES_MAX, USERS_MAX, CHAT_MESSAGE_MIN,
               CHAT_MESSAGE_MAX);
}

/* 1: parsed, run; 0: --help done; -EINVAL: bad arguments (logged). */
static int parse_args(int argc, char *argv[], Args *a, CliCommon *co) {
        static const struct option options[] = {
                { "rooms", required_argument, NULL, 'r' },
                { "messages", required_argument, NULL, 'M' },
                { "users", required_argument, NULL, 'u' },
                { "size", required_argument, NULL, 's' },
                CLI_OPT_LABEL,
                CLI_OPT_JSON,
                CLI_OPT_CPUS,
                CLI_OPT_NO_SANDBOX,
                CLI_OPT_NO_HOST_RESERVE,
                CLI_OPT_HELP,
                {},
        };
        int c, r;

        while ((c = getopt_long(argc, argv, "r:M:u:s:L:j::c:h", options, NULL)) >= 0) {
                r = cli_parse_common(c, optarg, co);
                if (r < 0)
                        return -EINVAL;
                if (r > 0)
                        continue;
                switch (c) {
                case 'r':
                        a->rooms = mfree(a->rooms);
                        if (bench_parse_axis("rooms", optarg, 1, ROOMS_MAX, &a->rooms,
                                             &a->n_rooms) < 0)
                                return -EINVAL;
                        break;
                case 'M':
                        a->messages = mfree(a->messages);
                        if (bench_parse_axis("messages", optarg, 1, MESSAGES_MAX, &a->messages,
                                             &a->n_messages) < 0)
                                return -EINVAL;
                        break;
                case 'u':
                        if (cli_parse_unsigned("users", optarg, 2, USERS_MAX, &a->users) < 0)
                                return -EINVAL;
                        break;
                case 's':
                        if (cli_parse_unsigned("size", optarg, CHAT_MESSAGE_MIN, CHAT_MESSAGE_MAX,
                                               &a->size) < 0)
                                return -EINVAL;
                        break;
                case 'h': help(); return 0;
                default: return -EINVAL; /* getopt said why */
                }
        }
        cli_take_report(co, &a->label, &a->json);
        if (optind < argc) {
                log_error("Unexpected argument \"%s\"; see loadgen chat --help.", argv[optind]);
                return -EINVAL;
        }
        if (!a->rooms &&
            bench_parse_axis("rooms", "10-30:10", 1, ROOMS_MAX, &a->rooms, &a->n_rooms) < 0)
                return -EINVAL;
        if (!a->messages && bench_parse_axis("messages", "100-400:100", 1, MESSAGES_MAX,
                                             &a->messages, &a->n_messages) < 0)
                return -EINVAL;
        return 1;
}

/*
 * Whether the largest room count can run here: its threads and sockets (bench_check_tasks), and
 * the memory maps its thread stacks take (two each: the stack and its guard page), which
 * vm.max_map_count bounds before kernel.pid_max does on a large machine.
 */
static int check_limits(const Args *a) {
        ChatParams p = { .rooms = axis_max(a->rooms, a->n_rooms), .users = a->users };
        _cleanup_free_ char *s = NULL;
        uint64_t tasks, fds, maps = 0;
        char what[96];

        chat_needs(&p, &tasks, &fds);
        (void) snprintf(what, sizeof what, "chat --rooms %u of %u users", p.rooms, p.users);
        if (bench_check_tasks(what, tasks, fds) < 0)
                return -E2BIG;
        if (read_full_at(AT_FDCWD, "/proc/sys/vm/max_map_count", 64, &s, NULL) >= 0 &&
            sscanf(s, "%" SCNu64, &maps) == 1 && 2 * tasks + 4096 > maps) {
                log_error("%s needs %" PRIu64 " threads in one process: their stacks need more "
                          "memory maps than vm.max_map_count (%" PRIu64 ").",
                          what, tasks, maps);
                return -E2BIG;
        }
        return 0;
}

static void json_parameters(Json *j, const Args *a) {
        json_key(j, "parameters");
        json_begin(j, '{');
        json_string(j, "label", a->label);
        bench_json_axis(j, "rooms", a->rooms, a->n_rooms);
        bench_json_axis(j, "messages", a->messages, a->n_messages);
        json_u64(j, "users", a->users);
        json_u64(j, "size", a->size);
        json_u64(j, "threads_per_user", CHAT_THREADS_PER_USER);
        json_u64(j, "queue_depth", CHAT_QUEUE_DEPTH);
        json_bool(j, "tcp_nodelay", true);
        json_string(j, "metric", "delivered messages per second");
        json_end(j, '}');
}

static void json_row(Json *j, const ChatParams *p, const ChatResult *res, double rate) {
        json_begin(j, '{');
        json_u64(j, "rooms", p->rooms);
        json_u64(j, "messages", p->messages);
        json_u64(j, "users", p->users);
        json_u64(j, "size", p->size);
        json_u64(j, "delivered", res->delivered);
        json_u64(j, "elapsed_usec", res->elapsed_usec);
        json_double(j, "messages_per_sec", rate, 3);
        json_u64(j, "port", res->port);
        json_end(j, '}');
}

static int run_rows(const Sandbox *sb, BenchReport *rep, const Args *a) {
        char line[128];
        int r;

        for (size_t ri = 0; ri < a->n_rooms; ri++)
                for (size_t mi = 0; mi < a->n_messages; mi++) {
                        ChatParams p = { .rooms = a->rooms[ri],
                                         .users = a->users,
                                         .messages = a->messages[mi],
                                         .size = a->size };
                        ChatResult res = { 0 };
                        double rate;

                        if (cli_stop)
                                return -EINTR;
                        r = bench_run(sb, chat_fn, &p, &res, sizeof res);
                        if (r == -EINTR)
                                return r;
                        if (r < 0)
                                return log_error_errno(r,
                                                       "Failed to run chat with %u rooms, %u "
                                                       "messages: %m",
                                                       p.rooms, p.messages);
                        rate = chat_rate(res.delivered, res.elapsed_usec);
                        (void) chat_format_row(line, sizeof line, p.rooms, p.messages, rate);
                        bench_printf(rep, "%s", line);
                        if (rep->json.f)
                                json_row(&rep->json, &p, &res, rate);
                }
        return 0;
}

static int run(const Args *a, const CliCommon *co) {
        _cleanup_sandbox_ Sandbox *sb = NULL;
        BenchReport rep;
        char line[256];
        int r;

        if (cli_make_sandbox(co, &sb) < 0)
                return 1;
        if (bench_report_open(&rep, a->json, "chat", sb) < 0)
                return 1;
        if (rep.json.f) {
                json_parameters(&rep.json, a);
                json_key(&rep.json, "rows");
                json_begin(&rep.json, '[');
        }
        (void) chat_format_header(line, sizeof line, a->label);
        bench_printf(&rep, "%s", line);
        r = run_rows(sb, &rep, a);
        if (rep.json.f) {
                json_end(&rep.json, ']');
                json_bool(&rep.json, "interrupted", cli_stop != 0);
        }
        if (bench_report_close(&rep) < 0 && r >= 0)
                r = -EIO;
        if (cli_stop)
                return cli_interrupted();
        return r < 0 ? 1 : 0;
}

int chat_main(int argc, char *argv[]) {
        _cleanup_(cli_common_done) CliCommon co = CLI_COMMON_INIT;
        _cleanup_(args_done) Args a = { .users = 20, .size = 100, .label = "default" };
        int r;

        r = parse_args(argc, argv, &a, &co);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : 0;
        if (check_limits(&a) < 0)
                return EXIT_USAGE;
        r = cli_install_stop_handlers();
        if (r < 0)
                return log_error_errno(r, "Failed to install signal handlers: %m"), 1;
        return run(&a, &co);
}
