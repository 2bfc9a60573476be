/*
 * threadpool.c — persistent worker threads for rlx_parallel_for.
 *
 * Dispatch is a generation counter: the caller publishes a job and bumps the
 * generation; workers spin on it briefly (a kernel launch is often followed by
 * another within microseconds, so a sleeping worker would cost a futex wake
 * per launch) and then sleep on a condition variable. Chunks are handed out by
 * an atomic counter, so uneven chunks balance themselves. The calling thread
 * takes part as worker 0 and waits only for chunks other workers claimed: a
 * worker that has not been scheduled yet (other processes on the cores) is
 * not waited for, and the caller does its share of the work instead.
 *
 * A call made while the pool is already running a job (a kernel calling
 * rlx_parallel_for from inside fn) runs inline on the calling thread with that
 * thread's worker index, so per-worker scratch stays unique.
 */
#include "core/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define CPU_RELAX() __asm__ __volatile__("yield")
#else
#define CPU_RELAX() ((void)0)
#endif

/* Spin iterations before a worker sleeps: roughly 50-100 us, longer than the
 * gap between consecutive kernels of one run but short enough that an idle
 * pool does not burn a core. */
#define SPIN_BEFORE_SLEEP 20000
#define SPIN_BEFORE_YIELD 2000

typedef struct worker_arg {
    struct rlx_threadpool *pool;
    int                    index;
} worker_arg;

struct rlx_threadpool {
    int        size;          /* threads including the caller */
    pthread_t *threads;       /* size - 1 workers */
    worker_arg *args;

    pthread_mutex_t lock;
    pthread_cond_t  wake;

    /* The current job; written by the caller before the generation bump. */
    rlx_range_fn fn;
    void        *ctx;
    int64_t      n, chunk;

    _Atomic uint64_t generation;
    _Atomic int64_t  next;       /* next unclaimed item */
    _Atomic int64_t  done;       /* items finished */
    _Atomic int      open;       /* the job accepts workers */
    _Atomic int      active;     /* workers inside the job */
    _Atomic int      sleepers;   /* workers waiting on `wake` */
    _Atomic int      busy;       /* a job is running (guards re-entrant calls) */
    _Atomic bool     stop;
};

/* Worker index of the current thread while it runs a job, -1 otherwise. */
static _Thread_local int tl_worker = -1;

int rlx_cpu_count(void) {
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int c = CPU_COUNT(&set);
        if (c > 0) return c;
    }
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int rlx_threadpool_size(const rlx_threadpool *pool) { return pool ? pool->size : 1; }

static void run_chunks(rlx_threadpool *p, int worker) {
    int saved = tl_worker;
    tl_worker = worker;
    for (;;) {
        int64_t b = atomic_fetch_add_explicit(&p->next, p->chunk, memory_order_relaxed);
        if (b >= p->n) break;
        int64_t e = b + p->chunk < p->n ? b + p->chunk : p->n;
        p->fn(p->ctx, b, e, worker);
        atomic_fetch_add_explicit(&p->done, e - b, memory_order_release);
    }
    tl_worker = saved;
}

/* Waits until the generation differs from seen; returns the new one. */
static uint64_t wait_generation(rlx_threadpool *p, uint64_t seen) {
    for (int i = 0; i < SPIN_BEFORE_SLEEP; i++) {
        uint64_t g = atomic_load_explicit(&p->generation, memory_order_acquire);
        if (g != seen) return g;
        CPU_RELAX();
    }
    pthread_mutex_lock(&p->lock);
    /* seq_cst pairs with the caller's store-then-load of sleepers (see dispatch). */
    atomic_fetch_add(&p->sleepers, 1);
    uint64_t g;
    while ((g = atomic_load(&p->generation)) == seen) pthread_cond_wait(&p->wake, &p->lock);
    atomic_fetch_sub(&p->sleepers, 1);
    pthread_mutex_unlock(&p->lock);
    return g;
}

static void *worker_main(void *arg) {
    worker_arg *wa = arg;
    rlx_threadpool *p = wa->pool;
    uint64_t seen = 0;
    for (;;) {
        seen = wait_generation(p, seen);
        if (atomic_load_explicit(&p->stop, memory_order_acquire)) break;
        /* Join only while the job is open (seq_cst pairs with the caller's
         * close-then-check in rlx_parallel_for). A worker that arrives late,
         * e.g. after being descheduled, finds the job closed and never
         * touches it, so the caller need not wait for it. */
        atomic_fetch_add(&p->active, 1);
        if (atomic_load(&p->open)) run_chunks(p, wa->index);
        atomic_fetch_sub_explicit(&p->active, 1, memory_order_release);
    }
    return NULL;
}

static void publish_generation(rlx_threadpool *p) {
    atomic_fetch_add(&p->generation, 1); /* seq_cst: see wait_generation */
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->lock);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->lock);
    }
}

rlx_threadpool *rlx_threadpool_new(int threads) {
    if (threads <= 0) threads = rlx_cpu_count();
    rlx_threadpool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->size = threads;
    if (pthread_mutex_init(&p->lock, NULL) != 0) { free(p); return NULL; }
    if (pthread_cond_init(&p->wake, NULL) != 0) {
        pthread_mutex_destroy(&p->lock);
        free(p);
        return NULL;
    }
    atomic_init(&p->generation, 0);
    atomic_init(&p->next, 0);
    atomic_init(&p->done, 0);
    atomic_init(&p->open, 0);
    atomic_init(&p->active, 0);
    atomic_init(&p->sleepers, 0);
    atomic_init(&p->busy, 0);
    atomic_init(&p->stop, false);
    if (threads == 1) return p;

    p->threads = calloc((size_t)threads - 1, sizeof *p->threads);
    p->args = calloc((size_t)threads - 1, sizeof *p->args);
    if (!p->threads || !p->args) {
        p->size = 1;
        rlx_threadpool_free(p);
        return NULL;
    }
    int started = 0;
    for (int i = 0; i < threads - 1; i++) {
        p->args[i].pool = p;
        p->args[i].index = i + 1;
        if (pthread_create(&p->threads[i], NULL, worker_main, &p->args[i]) != 0) break;
        started++;
    }
    if (started != threads - 1) {
        p->size = started + 1; /* free joins exactly the started workers */
        rlx_threadpool_free(p);
        return NULL;
    }
    return p;
}

void rlx_threadpool_free(rlx_threadpool *pool) {
    if (!pool) return;
    if (pool->size > 1) {
        atomic_store(&pool->stop, true);
        publish_generation(pool);
        for (int i = 0; i < pool->size - 1; i++) pthread_join(pool->threads[i], NULL);
    }
    pthread_cond_destroy(&pool->wake);
    pthread_mutex_destroy(&pool->lock);
    free(pool->threads);
    free(pool->args);
    free(pool);
}

void rlx_parallel_for(rlx_threadpool *pool, int64_t n, int64_t grain, rlx_range_fn fn, void *ctx) {
    if (n <= 0 || !fn) return;
    if (grain < 1) grain = 1;
    int size = rlx_threadpool_size(pool);
    int expected = 0;
    if (size <= 1 || n <= grain ||
        !atomic_compare_exchange_strong(&pool->busy, &expected, 1)) {
        /* Inline: no pool, nothing to split, or a nested call from inside a job. */
        fn(ctx, 0, n, tl_worker >= 0 ? tl_worker : 0);
        return;
    }
    /* About four chunks per thread lets the atomic counter even out uneven
     * chunk costs, without dropping below the caller's grain. */
    int64_t chunk = (n + (int64_t)size * 4 - 1) / ((int64_t)size * 4);
    if (chunk < grain) chunk = grain;
    /* No worker is inside the previous job (active was 0 when it closed),
     * and none can enter until open is set, so the fields are ours. */
    pool->fn = fn;
    pool->ctx = ctx;
    pool->n = n;
    pool->chunk = chunk;
    atomic_store_explicit(&pool->next, 0, memory_order_relaxed);
    atomic_store_explicit(&pool->done, 0, memory_order_relaxed);
    atomic_store(&pool->open, 1);
    publish_generation(pool);

    run_chunks(pool, 0);

    /* Wait only for chunks that workers claimed, then close the job and wait
     * for workers still inside it (they hold no chunks, so this is short). */
    for (int spins = 0; atomic_load_explicit(&pool->done, memory_order_acquire) < n; spins++) {
        if (spins < SPIN_BEFORE_YIELD) CPU_RELAX();
        else sched_yield();
    }
    atomic_store(&pool->open, 0);
    for (int spins = 0; atomic_load(&pool->active) > 0; spins++) {
        if (spins < SPIN_BEFORE_YIELD) CPU_RELAX();
        else sched_yield();
    }
    atomic_store_explicit(&pool->busy, 0, memory_order_release);
}
