/*
 * trace.c — the Chrome / Perfetto trace writer (see trace.h).
 */
#include "core/trace.h"
#include "core/core.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct rlx_trace {
    char      *path;
    FILE      *f;
    int        refs;
    int        next_tid;
    rlx_trace *next;       /* the list of open traces */
};

/* Open traces, shared by path; the lock also serializes writes. */
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static rlx_trace      *open_traces;

/* Length of the well-formed UTF-8 sequence at s (1 to 4 bytes), or 0 when
 * it is not one: JSON readers (Perfetto, Python's json) reject the file over
 * one stray byte, and a cut must not split a character. */
static int utf8_length(const unsigned char *s) {
    int n = s[0] < 0x80 ? 1 : s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||   /* overlong, surrogate */
        (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))     /* overlong, above U+10FFFF */
        return 0;
    return n;
}

char *rlx_json_escape(const char *s, char *dst, size_t cap) {
    size_t n = 0;
    if (cap == 0) return dst;
    while (s && *s && n + 7 < cap) {   /* room for the longest piece: 6 bytes */
        unsigned char c = (unsigned char)*s;
        int len = utf8_length((const unsigned char *)s);
        if (c == '"' || c == '\\') { dst[n++] = '\\'; dst[n++] = (char)c; }
        else if (c < 0x20) n += (size_t)snprintf(dst + n, cap - n, "\\u%04x", c);
        else if (len == 0) { memcpy(dst + n, "\\ufffd", 6); n += 6; }   /* not UTF-8: U+FFFD */
        else { memcpy(dst + n, s, (size_t)len); n += (size_t)len; s += len; continue; }
        s++;
    }
    dst[n] = 0;
    return dst;
}

rlx_trace *rlx_trace_open(const char *path) {
    if (!path || !*path) return NULL;
    pthread_mutex_lock(&trace_lock);
    rlx_trace *t = open_traces;
    while (t && strcmp(t->path, path) != 0) t = t->next;
    if (t) {
        t->refs++;
        pthread_mutex_unlock(&trace_lock);
        return t;
    }
    t = calloc(1, sizeof *t);
    if (t && (t->path = rlx_strdup(path)) && (t->f = fopen(path, "w"))) {
        t->refs = 1;
        t->next_tid = 1;
        t->next = open_traces;
        open_traces = t;
        fputs("[\n", t->f);
        fprintf(t->f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"rlx\"}}",
                (int)getpid());
        pthread_mutex_unlock(&trace_lock);
        return t;
    }
    pthread_mutex_unlock(&trace_lock);
    rlx_log_msg(RLX_LOG_WARN, "trace: cannot create '%s'; tracing is off", path);
    if (t) free(t->path);
    free(t);
    return NULL;
}

void rlx_trace_close(rlx_trace *t) {
    if (!t) return;
    pthread_mutex_lock(&trace_lock);
    if (--t->refs > 0) {
        fflush(t->f);
        pthread_mutex_unlock(&trace_lock);
        return;
    }
    rlx_trace **link = &open_traces;
    while (*link && *link != t) link = &(*link)->next;
    if (*link) *link = t->next;
    fputs("\n]\n", t->f);
    if (fclose(t->f) != 0) rlx_log_msg(RLX_LOG_WARN, "trace: writing '%s' failed", t->path);
    pthread_mutex_unlock(&trace_lock);
    free(t->path);
    free(t);
}

int rlx_trace_track(rlx_trace *t, const char *name) {
    if (!t) return 0;
    char esc[256];
    pthread_mutex_lock(&trace_lock);
    int tid = t->next_tid++;
    fprintf(t->f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
            (int)getpid(), tid, rlx_json_escape(name, esc, sizeof esc));
    fprintf(t->f, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"sort_index\":%d}}",
            (int)getpid(), tid, tid);
    pthread_mutex_unlock(&trace_lock);
    return tid;
}

void rlx_trace_event(rlx_trace *t, int tid, const char *cat, const char *name, double start_s, double end_s,
                     const char *args_fmt, ...) {
    if (!t) return;
    char ename[256], ecat[64];
    /* the monotonic clock itself, so traces of one process (and other
     * CLOCK_MONOTONIC tools' traces) line up, and events may precede the open */
    double ts = start_s * 1e6, dur = (end_s - start_s) * 1e6;
    if (dur < 0) dur = 0;
    pthread_mutex_lock(&trace_lock);
    fprintf(t->f, ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%d,\"tid\":%d",
            rlx_json_escape(name, ename, sizeof ename), rlx_json_escape(cat, ecat, sizeof ecat), ts, dur, (int)getpid(),
            tid);
    if (args_fmt) {
        va_list ap;
        va_start(ap, args_fmt);
        fputs(",\"args\":{", t->f);
        vfprintf(t->f, args_fmt, ap);
        fputc('}', t->f);
        va_end(ap);
    }
    fputc('}', t->f);
    pthread_mutex_unlock(&trace_lock);
}

void rlx_trace_flush(rlx_trace *t) {
    if (!t) return;
    pthread_mutex_lock(&trace_lock);
    fflush(t->f);
    pthread_mutex_unlock(&trace_lock);
}
