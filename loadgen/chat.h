/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * chat, the VolanoMark simulator of IBM's Linux Scalability Effort (seed 000): the arithmetic,
 * the messages' framing and the table rows, apart from the threads and sockets, so the tests can
 * check them with numbers they choose.
 */

#include <stddef.h>
#include <stdint.h>

/* Smallest message: the header chat_message_encode() writes (magic, room, sender, sequence). */
#define CHAT_MESSAGE_MIN 16u
/* Largest message: chat lines, not bulk data; it also bounds the server's queues' memory. */
#define CHAT_MESSAGE_MAX 1024u
/* Messages the server holds for one connection's writer before a reader must wait. */
#define CHAT_QUEUE_DEPTH 32u
/* Threads per user: client send, client receive, server receive, server send. */
#define CHAT_THREADS_PER_USER 4u

typedef struct ChatParams {
        unsigned rooms;
        unsigned users; /* per room */
        unsigned messages; /* each user sends */
        unsigned size; /* bytes per message */
} ChatParams;

/* Messages the clients receive in one run: every message goes to the room's other users,
 * rooms x users x messages x (users - 1). */
uint64_t chat_delivered(const ChatParams *p);

/* Threads and open descriptors (in the one process) a run needs: 4 threads and 2 sockets a user,
 * plus the listening socket. */
void chat_needs(const ChatParams *p, uint64_t *ret_tasks, uint64_t *ret_fds);

/* Delivered messages per second of elapsed time; 0 when elapsed_usec is 0. */
double chat_rate(uint64_t delivered, uint64_t elapsed_usec);

/*
 * Fills the size bytes (>= CHAT_MESSAGE_MIN) of a message that user `sender` of `room` sends as
 * its message number seq: a magic number, room, sender and seq (little-endian 32-bit words),
 * then a filler derived from them.
 */
void chat_message_encode(void *buf, size_t size, unsigned room, unsigned sender, unsigned seq);

/*
 * Checks a message that user `self` of `room` (with `users` users) received: the magic, the room,
 * a sender in the room other than self, and the filler. Returns 0 with the sender and its seq, or
 * -EBADMSG.
 */
int chat_message_check(const void *buf, size_t size, unsigned room, unsigned self, unsigned users,
                       unsigned *ret_sender, unsigned *ret_seq);

/* The seed's header "Configuration Parms LABEL\n". Returns what snprintf returns. */
int chat_format_header(char *buf, size_t size, const char *label);

/* One row, "10 rooms, 100 messages 69465\n": the rate rounded to a whole number. Returns what
 * snprintf returns. */
int chat_format_row(char *buf, size_t size, unsigned rooms, unsigned messages, double rate);
