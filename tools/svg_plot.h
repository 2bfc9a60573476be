/*
 * svg_plot.h — a line chart as a standalone SVG file (the loss curve `rlx
 * train` writes): axes with ticks, one polyline, a title. No dependencies.
 */
#ifndef RLX_TOOLS_SVG_PLOT_H
#define RLX_TOOLS_SVG_PLOT_H

/* ys[i] at xs[i] for i < n (n >= 1); non-finite points are skipped. 0 on
 * success, -1 when the file cannot be written. Writes a temporary file and
 * renames it, so a reader never sees half a chart. */
int svg_line_chart(const char *path, const char *title, const char *xlabel, const char *ylabel, const double *xs,
                   const double *ys, int n);

#endif
