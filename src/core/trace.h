/*
 * trace.h — a Chrome / Perfetto trace writer (the JSON "Trace Event Format"):
 * complete events ("ph":"X") with a name, category, start, duration, track
 * and optional args, written as they happen. Nothing ML-specific: the
 * runtime and the backends decide what to record.
 *
 * The file is the format's JSON Array form, "[ event, event, ... ]": a run
 * that crashes leaves every flushed event readable (the viewers accept the
 * array without its closing bracket), and rlx_trace_close completes it.
 * Opening the same path twice shares one file (reference-counted), so the
 * several executables of a process (a model's) write one timeline.
 * Timestamps are the rlx_now_seconds() clock (CLOCK_MONOTONIC) in
 * microseconds. Thread-safe: events from different threads are serialized.
 */
#ifndef RLX_CORE_TRACE_H
#define RLX_CORE_TRACE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct rlx_trace rlx_trace;

/* Opens (or shares) the trace file at path, truncating it on first open.
 * NULL, with a warning logged, when it cannot be created: a trace is a
 * diagnostic, so failing to write one never fails the caller. */
rlx_trace *rlx_trace_open(const char *path);
/* Drops one reference; the last completes the JSON and closes the file.
 * NULL is allowed. */
void       rlx_trace_close(rlx_trace *t);
/* A new track (a "thread" in the viewers) named name; its id for events. */
int        rlx_trace_track(rlx_trace *t, const char *name);
/* A complete event on track tid from start_s to end_s (rlx_now_seconds()
 * clock). args_fmt, when not NULL, is printf'ed as the members of the args
 * object (e.g. "\"node\":%d"); strings in it must be JSON-escaped
 * (rlx_json_escape). name and cat are escaped here. */
void       rlx_trace_event(rlx_trace *t, int tid, const char *cat, const char *name, double start_s, double end_s,
                           const char *args_fmt, ...) __attribute__((format(printf, 7, 8)));
/* Writes buffered events to the file (done after every run, so a crash
 * loses at most the run in progress). */
void       rlx_trace_flush(rlx_trace *t);

/* s as the inside of a JSON string (quotes, backslashes, control
 * characters escaped, bytes that are not UTF-8 as U+FFFD) into dst;
 * truncated to fit cap, never inside a character. Returns dst. */
char      *rlx_json_escape(const char *s, char *dst, size_t cap);

#endif
