/*
 * thread_scratch.c — per-thread scratch buffers cached across calls, one per
 * purpose (cpu_scratch_slot): a fresh large allocation per call would be an
 * mmap plus page faults on every matmul or convolution. A key's destructor
 * frees a worker's buffers when the worker exits.
 */
#include "cpu/cpu_kernel.h"
#include <pthread.h>
#include <stdlib.h>

static pthread_key_t scratch_key[CPU_SCRATCH_SLOTS];
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static int scratch_key_ok[CPU_SCRATCH_SLOTS];
static _Thread_local float *tl_scratch[CPU_SCRATCH_SLOTS];
static _Thread_local size_t tl_scratch_floats[CPU_SCRATCH_SLOTS];

static void scratch_destroy(void *p) { free(p); }
static void scratch_key_init(void) {
    for (int s = 0; s < CPU_SCRATCH_SLOTS; s++) scratch_key_ok[s] = pthread_key_create(&scratch_key[s], scratch_destroy) == 0;
}

float *cpu_thread_scratch(cpu_scratch_slot slot, size_t floats) {
    if (tl_scratch_floats[slot] >= floats) return tl_scratch[slot];
    pthread_once(&scratch_once, scratch_key_init);
    void *p = NULL;
    if (posix_memalign(&p, 64, floats * sizeof(float)) != 0) return NULL;
    free(tl_scratch[slot]);
    tl_scratch[slot] = p;
    tl_scratch_floats[slot] = floats;
    if (scratch_key_ok[slot]) pthread_setspecific(scratch_key[slot], p);
    return p;
}
