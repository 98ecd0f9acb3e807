#include "CLonglinkBenchUring.h"

#include <errno.h>
#include <poll.h>
#include <linux/io_uring.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

// Newer than Debian 12's <linux/io_uring.h> (6.1): the minimum-wait feature bit of Linux 6.12, whose value goes in
// io_uring_getevents_arg's `pad` (named min_wait_usec since).
#ifndef IORING_FEAT_MIN_TIMEOUT
#define IORING_FEAT_MIN_TIMEOUT (1U << 15)
#endif
_Static_assert(sizeof(struct io_uring_sqe) == 64, "an SQE is 64 bytes");
_Static_assert(sizeof(struct io_uring_cqe) == 16, "a CQE is 16 bytes (no CQE32)");
_Static_assert(sizeof(struct io_uring_buf) == 16, "a provided-buffer ring entry is 16 bytes");

struct CLonglinkBenchUring {
    int fd;
    unsigned features;
    // Submission queue (the kernel's head, our tail).
    unsigned *sqHead, *sqTail, *sqFlags, *sqArray;
    unsigned sqMask, sqEntries;
    unsigned sqLocalTail;  // queued by us, not yet published to the kernel
    struct io_uring_sqe *sqes;
    // Completion queue (our head, the kernel's tail).
    unsigned *cqHead, *cqTail;
    unsigned cqMask;
    struct io_uring_cqe *cqes;
    // The mappings.
    void *ringMemory;
    size_t ringSize;
    size_t sqesSize;
    // Provided buffers: the ring the kernel takes buffers from, and the buffers.
    struct io_uring_buf_ring *bufferRing;
    size_t bufferRingSize;
    unsigned bufferMask;
    uint16_t bufferTail;
    unsigned char *buffers;
    size_t buffersSize;
    unsigned bufferSize;
};

static int uringSetup(unsigned entries, struct io_uring_params *params) {
    return (int)syscall(__NR_io_uring_setup, entries, params);
}

static int uringEnter(int fd, unsigned toSubmit, unsigned minComplete, unsigned flags, const void *arg, size_t argSize) {
    return (int)syscall(__NR_io_uring_enter, fd, toSubmit, minComplete, flags, arg, argSize);
}

static int uringRegister(int fd, unsigned opcode, const void *arg, unsigned count) {
    return (int)syscall(__NR_io_uring_register, fd, opcode, arg, count);
}

static CLonglinkBenchUring *fail(CLonglinkBenchUring *ring, int *error, const char **step, const char *name) {
    *error = errno;
    *step = name;
    CLonglinkBenchUring_close(ring);
    return NULL;
}

CLonglinkBenchUring *CLonglinkBenchUring_open(unsigned entries, unsigned bufferCount, unsigned bufferSize, int *error, const char **step) {
    CLonglinkBenchUring *ring = calloc(1, sizeof(*ring));
    if (!ring) {
        *error = ENOMEM;
        *step = "calloc";
        return NULL;
    }
    ring->fd = -1;
    struct io_uring_params params;
    memset(&params, 0, sizeof(params));
    // One thread submits and reaps (SINGLE_ISSUER); received data is processed only when that thread enters
    // (DEFER_TASKRUN), which is what lets a wait for k completions sleep through the first k - 1 arrivals;
    // TASKRUN_FLAG tells it without a system call that such work waits. The completion queue is 4 × the
    // submission queue: every subscriber's multishot receive can post several completions per wait.
    params.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG
        | IORING_SETUP_SUBMIT_ALL | IORING_SETUP_CQSIZE;
    params.cq_entries = 4 * entries;
    ring->fd = uringSetup(entries, &params);
    if (ring->fd < 0) return fail(ring, error, step, "io_uring_setup");
    ring->features = params.features;
    if (!(params.features & IORING_FEAT_SINGLE_MMAP) || !(params.features & IORING_FEAT_EXT_ARG)
        || !(params.features & IORING_FEAT_NODROP)) {
        errno = ENOTSUP;
        return fail(ring, error, step, "io_uring features (single mmap, ext arg, nodrop)");
    }
    size_t sqSize = params.sq_off.array + params.sq_entries * sizeof(unsigned);
    size_t cqSize = params.cq_off.cqes + params.cq_entries * sizeof(struct io_uring_cqe);
    ring->ringSize = sqSize > cqSize ? sqSize : cqSize;
    ring->ringMemory = mmap(NULL, ring->ringSize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring->fd, IORING_OFF_SQ_RING);
    if (ring->ringMemory == MAP_FAILED) {
        ring->ringMemory = NULL;
        return fail(ring, error, step, "mmap (rings)");
    }
    ring->sqesSize = params.sq_entries * sizeof(struct io_uring_sqe);
    ring->sqes = mmap(NULL, ring->sqesSize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring->fd, IORING_OFF_SQES);
    if (ring->sqes == MAP_FAILED) {
        ring->sqes = NULL;
        return fail(ring, error, step, "mmap (sqes)");
    }
    unsigned char *base = ring->ringMemory;
    ring->sqHead = (unsigned *)(base + params.sq_off.head);
    ring->sqTail = (unsigned *)(base + params.sq_off.tail);
    ring->sqFlags = (unsigned *)(base + params.sq_off.flags);
    ring->sqArray = (unsigned *)(base + params.sq_off.array);
    ring->sqMask = *(unsigned *)(base + params.sq_off.ring_mask);
    ring->sqEntries = params.sq_entries;
    ring->sqLocalTail = *ring->sqTail;
    ring->cqHead = (unsigned *)(base + params.cq_off.head);
    ring->cqTail = (unsigned *)(base + params.cq_off.tail);
    ring->cqMask = *(unsigned *)(base + params.cq_off.ring_mask);
    ring->cqes = (struct io_uring_cqe *)(base + params.cq_off.cqes);

    // The provided-buffer ring: page-aligned memory we own, registered as group 0, filled with every buffer.
    if (bufferCount == 0 || (bufferCount & (bufferCount - 1)) != 0 || bufferCount > 32768) {
        errno = EINVAL;
        return fail(ring, error, step, "buffer count (a power of two up to 32768)");
    }
    ring->bufferRingSize = bufferCount * sizeof(struct io_uring_buf);
    ring->bufferRing = mmap(NULL, ring->bufferRingSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ring->bufferRing == MAP_FAILED) {
        ring->bufferRing = NULL;
        return fail(ring, error, step, "mmap (buffer ring)");
    }
    ring->buffersSize = (size_t)bufferCount * bufferSize;
    ring->buffers = mmap(NULL, ring->buffersSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ring->buffers == MAP_FAILED) {
        ring->buffers = NULL;
        return fail(ring, error, step, "mmap (buffers)");
    }
    ring->bufferMask = bufferCount - 1;
    ring->bufferSize = bufferSize;
    struct io_uring_buf_reg registration;
    memset(&registration, 0, sizeof(registration));
    registration.ring_addr = (uint64_t)(uintptr_t)ring->bufferRing;
    registration.ring_entries = bufferCount;
    registration.bgid = 0;
    if (uringRegister(ring->fd, IORING_REGISTER_PBUF_RING, &registration, 1) < 0) {
        return fail(ring, error, step, "io_uring_register (PBUF_RING)");
    }
    for (unsigned id = 0; id < bufferCount; id++) CLonglinkBenchUring_recycle(ring, id);
    CLonglinkBenchUring_publishBuffers(ring);
    return ring;
}

void CLonglinkBenchUring_close(CLonglinkBenchUring *ring) {
    if (!ring) return;
    if (ring->fd >= 0) close(ring->fd);
    if (ring->sqes) munmap(ring->sqes, ring->sqesSize);
    if (ring->ringMemory) munmap(ring->ringMemory, ring->ringSize);
    if (ring->bufferRing) munmap(ring->bufferRing, ring->bufferRingSize);
    if (ring->buffers) munmap(ring->buffers, ring->buffersSize);
    free(ring);
}

int CLonglinkBenchUring_hasMinWait(const CLonglinkBenchUring *ring) {
    return (ring->features & IORING_FEAT_MIN_TIMEOUT) != 0;
}

static struct io_uring_sqe *nextSQE(CLonglinkBenchUring *ring) {
    unsigned head = __atomic_load_n(ring->sqHead, __ATOMIC_ACQUIRE);
    if (ring->sqLocalTail - head >= ring->sqEntries) return NULL;
    unsigned index = ring->sqLocalTail & ring->sqMask;
    struct io_uring_sqe *sqe = &ring->sqes[index];
    memset(sqe, 0, sizeof(*sqe));
    ring->sqArray[index] = index;
    ring->sqLocalTail++;
    return sqe;
}

int CLonglinkBenchUring_queueReceive(CLonglinkBenchUring *ring, int fd, uint64_t userData) {
    struct io_uring_sqe *sqe = nextSQE(ring);
    if (!sqe) return -EBUSY;
    sqe->opcode = IORING_OP_RECV;
    sqe->fd = fd;
    // Multishot: one request keeps receiving until an error, EOF or no buffer is left. Poll first: the socket
    // was just drained by the epoll path, so trying a receive at once would only return EAGAIN.
    sqe->ioprio = IORING_RECV_MULTISHOT | IORING_RECVSEND_POLL_FIRST;
    sqe->flags = IOSQE_BUFFER_SELECT;
    sqe->buf_group = 0;
    sqe->len = 0;
    sqe->user_data = userData;
    return 0;
}

int CLonglinkBenchUring_queuePoll(CLonglinkBenchUring *ring, int fd, uint64_t userData) {
    struct io_uring_sqe *sqe = nextSQE(ring);
    if (!sqe) return -EBUSY;
    sqe->opcode = IORING_OP_POLL_ADD;
    sqe->fd = fd;
    sqe->poll32_events = POLLIN;  // one-shot: re-armed by the caller after each completion
    sqe->user_data = userData;
    return 0;
}

int CLonglinkBenchUring_queueCancel(CLonglinkBenchUring *ring, uint64_t target, uint64_t userData) {
    struct io_uring_sqe *sqe = nextSQE(ring);
    if (!sqe) return -EBUSY;
    // Matched by user data, not by fd: the caller closes the fd right away, before this is submitted.
    sqe->opcode = IORING_OP_ASYNC_CANCEL;
    sqe->fd = -1;
    sqe->addr = target;
    sqe->user_data = userData;
    return 0;
}

unsigned CLonglinkBenchUring_queued(const CLonglinkBenchUring *ring) {
    return ring->sqLocalTail - *ring->sqTail;
}

int CLonglinkBenchUring_hasTaskWork(const CLonglinkBenchUring *ring) {
    unsigned flags = __atomic_load_n(ring->sqFlags, __ATOMIC_RELAXED);
    if (flags & IORING_SQ_TASKRUN) return 1;
    return __atomic_load_n(ring->cqTail, __ATOMIC_ACQUIRE) != *ring->cqHead;
}

int CLonglinkBenchUring_enter(CLonglinkBenchUring *ring, unsigned minComplete, unsigned minWaitMicroseconds,
                              int64_t timeoutNanoseconds) {
    unsigned toSubmit = ring->sqLocalTail - *ring->sqTail;
    __atomic_store_n(ring->sqTail, ring->sqLocalTail, __ATOMIC_RELEASE);
    struct __kernel_timespec timeout = {
        .tv_sec = timeoutNanoseconds / 1000000000,
        .tv_nsec = timeoutNanoseconds % 1000000000,
    };
    struct io_uring_getevents_arg arg;
    memset(&arg, 0, sizeof(arg));
    arg.sigmask = 0;
    arg.sigmask_sz = _NSIG / 8;
    arg.ts = (uint64_t)(uintptr_t)&timeout;
    // min_wait_usec (the `pad` of older headers): after this long, return as soon as one completion is ready. A
    // kernel without the feature rejects a non-zero value (EINVAL), so it is sent only when the ring has it.
    if (minComplete > 1 && (ring->features & IORING_FEAT_MIN_TIMEOUT)) arg.pad = minWaitMicroseconds;
    unsigned flags = IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG;
    int result = uringEnter(ring->fd, toSubmit, minComplete, flags, &arg, sizeof(arg));
    return result < 0 ? -errno : result;
}

unsigned CLonglinkBenchUring_reap(CLonglinkBenchUring *ring, CLonglinkBenchUringCompletion *out, unsigned capacity) {
    unsigned head = *ring->cqHead;
    unsigned tail = __atomic_load_n(ring->cqTail, __ATOMIC_ACQUIRE);
    unsigned count = 0;
    while (head != tail && count < capacity) {
        const struct io_uring_cqe *cqe = &ring->cqes[head & ring->cqMask];
        out[count].userData = cqe->user_data;
        out[count].result = cqe->res;
        out[count].flags = cqe->flags;
        count++;
        head++;
    }
    __atomic_store_n(ring->cqHead, head, __ATOMIC_RELEASE);
    return count;
}

const void *CLonglinkBenchUring_buffer(const CLonglinkBenchUring *ring, unsigned bufferID) {
    return ring->buffers + (size_t)(bufferID & ring->bufferMask) * ring->bufferSize;
}

void CLonglinkBenchUring_recycle(CLonglinkBenchUring *ring, unsigned bufferID) {
    struct io_uring_buf *entry = &ring->bufferRing->bufs[ring->bufferTail & ring->bufferMask];
    entry->addr = (uint64_t)(uintptr_t)(ring->buffers + (size_t)bufferID * ring->bufferSize);
    entry->len = ring->bufferSize;
    entry->bid = (uint16_t)bufferID;
    ring->bufferTail++;
}

void CLonglinkBenchUring_publishBuffers(CLonglinkBenchUring *ring) {
    __atomic_store_n(&ring->bufferRing->tail, ring->bufferTail, __ATOMIC_RELEASE);
}
