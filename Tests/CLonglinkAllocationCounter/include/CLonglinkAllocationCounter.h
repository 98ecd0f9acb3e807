#ifndef CLONGLINK_ALLOCATION_COUNTER_H
#define CLONGLINK_ALLOCATION_COUNTER_H

// A heap-allocation counter for test programs only (issue 19's allocation budget). Linking this module defines
// malloc, calloc, realloc, posix_memalign and aligned_alloc in the executable: every call in the process, from
// Swift, Foundation, Dispatch or C libraries alike, goes through them (ELF symbol interposition), is counted
// for the calling thread and forwarded to glibc's allocator (__libc_malloc and friends; free stays glibc's).
// Never link it into the longlink executable or a library product.

#include <stdint.h>

/// Calls counted so far on thread `tid` (a kernel thread id; 0 when that thread never allocated). Counts only
/// grow: measure a window as the difference of two readings.
uint64_t CLonglinkAllocationCounter_thread(int32_t tid);

/// Calls counted so far on every thread together.
uint64_t CLonglinkAllocationCounter_total(void);

/// Fills up to `capacity` (thread id, count) pairs, one per thread that allocated; returns how many there are.
int32_t CLonglinkAllocationCounter_threads(int32_t *tids, uint64_t *counts, int32_t capacity);

/// The calling thread's kernel id (gettid).
int32_t CLonglinkAllocationCounter_currentThread(void);

/// Threads that allocated after the table of threads was full (their calls are in no thread's count).
uint64_t CLonglinkAllocationCounter_overflow(void);

#endif
