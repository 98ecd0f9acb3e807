#define _GNU_SOURCE
#include "CLonglinkAllocationCounter.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

// glibc's allocator under its exported internal names: what the definitions below forward to.
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

// One slot per thread that ever allocated, claimed on its first allocation and never reused (a test process
// starts a few dozen threads). Slot lookups are by the thread-local index, so counting is one relaxed add.
#define SLOTS 4096
static _Atomic int32_t slot_tid[SLOTS];
static _Atomic uint64_t slot_count[SLOTS];
static _Atomic uint32_t slots_used;
static _Atomic uint64_t overflow;

// initial-exec: the executable's own static TLS, readable without an allocation (a dynamic TLS access could call
// malloc, i.e. recurse here). 0 = no slot yet; otherwise the slot index + 1.
static __thread uint32_t my_slot __attribute__((tls_model("initial-exec")));

static inline void count_one(void) {
    uint32_t slot = my_slot;
    if (slot == 0) {
        uint32_t claimed = atomic_fetch_add_explicit(&slots_used, 1, memory_order_relaxed);
        if (claimed >= SLOTS) {
            atomic_fetch_add_explicit(&overflow, 1, memory_order_relaxed);
            return;
        }
        atomic_store_explicit(&slot_tid[claimed], (int32_t)syscall(SYS_gettid), memory_order_relaxed);
        slot = claimed + 1;
        my_slot = slot;
    }
    atomic_fetch_add_explicit(&slot_count[slot - 1], 1, memory_order_relaxed);
}

void *malloc(size_t size) {
    count_one();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    count_one();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    count_one();
    return __libc_realloc(pointer, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    count_one();
    // posix_memalign(3): a power of two that is a multiple of sizeof(void *).
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment % sizeof(void *) != 0) return EINVAL;
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

void *aligned_alloc(size_t alignment, size_t size) {
    count_one();
    return __libc_memalign(alignment, size);
}

static uint32_t used(void) {
    uint32_t n = atomic_load_explicit(&slots_used, memory_order_relaxed);
    return n > SLOTS ? SLOTS : n;
}

uint64_t CLonglinkAllocationCounter_thread(int32_t tid) {
    uint64_t sum = 0;
    for (uint32_t i = 0, n = used(); i < n; i++) {
        if (atomic_load_explicit(&slot_tid[i], memory_order_relaxed) == tid)
            sum += atomic_load_explicit(&slot_count[i], memory_order_relaxed);
    }
    return sum;
}

uint64_t CLonglinkAllocationCounter_total(void) {
    uint64_t sum = 0;
    for (uint32_t i = 0, n = used(); i < n; i++) sum += atomic_load_explicit(&slot_count[i], memory_order_relaxed);
    return sum;
}

int32_t CLonglinkAllocationCounter_threads(int32_t *tids, uint64_t *counts, int32_t capacity) {
    uint32_t n = used();
    for (uint32_t i = 0; i < n && (int32_t)i < capacity; i++) {
        tids[i] = atomic_load_explicit(&slot_tid[i], memory_order_relaxed);
        counts[i] = atomic_load_explicit(&slot_count[i], memory_order_relaxed);
    }
    return (int32_t)n;
}

int32_t CLonglinkAllocationCounter_currentThread(void) { return (int32_t)syscall(SYS_gettid); }

uint64_t CLonglinkAllocationCounter_overflow(void) { return atomic_load_explicit(&overflow, memory_order_relaxed); }
