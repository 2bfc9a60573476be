/*
 * threadpool.h — a fixed pool of worker threads running parallel-for loops.
 *
 * rlx_parallel_for splits [0, n) into chunks and calls fn(ctx, begin, end,
 * worker) on the calling thread and the workers; it returns when all chunks are
 * done. A NULL pool, or a pool of one thread, runs everything inline.
 * A pool is used by one caller at a time (one exec runs on one thread).
 */
#ifndef RLX_THREADPOOL_H
#define RLX_THREADPOOL_H

#include <stdint.h>

typedef struct rlx_threadpool rlx_threadpool;

typedef void (*rlx_range_fn)(void *ctx, int64_t begin, int64_t end, int worker);

/* threads <= 0 means the number of online cores. NULL if out of memory or
 * threads cannot be started (the caller may then run inline with NULL). */
rlx_threadpool *rlx_threadpool_new(int threads);
void            rlx_threadpool_free(rlx_threadpool *pool);
int             rlx_threadpool_size(const rlx_threadpool *pool); /* 1 for NULL */
int             rlx_cpu_count(void);

/* Runs fn over [0, n) in chunks of at least grain items. worker is in
 * [0, rlx_threadpool_size(pool)) and unique among concurrently running calls,
 * so it can index per-thread scratch. */
void rlx_parallel_for(rlx_threadpool *pool, int64_t n, int64_t grain, rlx_range_fn fn, void *ctx);

#endif
