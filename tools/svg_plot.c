/*
 * svg_plot.c — svg_line_chart (svg_plot.h): the data's bounding box padded a
 * little, five "nice" ticks per axis (1, 2 or 5 times a power of ten), the
 * series as one polyline in a 720 x 420 chart.
 */
#include "svg_plot.h"
#include <math.h>
#include <stdio.h>

static double nice_step(double span) {
    if (!(span > 0)) return 1;
    double raw = span / 5, p = pow(10, floor(log10(raw))), f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

int svg_line_chart(const char *path, const char *title, const char *xlabel, const char *ylabel, const double *xs,
                   const double *ys, int n) {
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    for (int i = 0; i < n; i++) {
        if (!isfinite(xs[i]) || !isfinite(ys[i])) continue;
        x0 = fmin(x0, xs[i]), x1 = fmax(x1, xs[i]), y0 = fmin(y0, ys[i]), y1 = fmax(y1, ys[i]);
    }
    if (!(x0 <= x1)) x0 = 0, x1 = 1, y0 = 0, y1 = 1;
    if (x1 == x0) x1 = x0 + 1;
    if (y1 == y0) y1 = y0 + 1;
    double pad = (y1 - y0) * 0.05;
    y0 -= pad, y1 += pad;
    const double W = 720, H = 420, L = 70, R = 20, T = 40, B = 50;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return -1;
#define PX(x) (L + ((x) - x0) / (x1 - x0) * (W - L - R))
#define PY(y) (H - B - ((y) - y0) / (y1 - y0) * (H - T - B))
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
               "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H);
    fprintf(f, "<text x=\"%.0f\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">%s</text>\n", W / 2, title);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", L, H - B, W - R, H - B);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", L, T, L, H - B);
    double sx = nice_step(x1 - x0), sy = nice_step(y1 - y0);
    for (double x = ceil(x0 / sx) * sx; x <= x1 + 1e-9 * sx; x += sx)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/><text x=\"%.1f\" y=\"%.1f\" "
                   "text-anchor=\"middle\">%g</text>\n", PX(x), H - B, PX(x), H - B + 5, PX(x), H - B + 18, x);
    for (double y = ceil(y0 / sy) * sy; y <= y1 + 1e-9 * sy; y += sy)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%.1f\" y=\"%.1f\" "
                   "text-anchor=\"end\">%g</text>\n", L, PY(y), W - R, PY(y), L - 6, PY(y) + 4, y);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n", (L + W - R) / 2, H - 12, xlabel);
    fprintf(f, "<text x=\"16\" y=\"%.0f\" text-anchor=\"middle\" transform=\"rotate(-90 16 %.0f)\">%s</text>\n",
            (T + H - B) / 2, (T + H - B) / 2, ylabel);
    fprintf(f, "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" points=\"");
    for (int i = 0; i < n; i++)
        if (isfinite(xs[i]) && isfinite(ys[i])) fprintf(f, "%.1f,%.1f ", PX(xs[i]), PY(ys[i]));
    fprintf(f, "\"/>\n</svg>\n");
#undef PX
#undef PY
    int bad = ferror(f);
    if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
        remove(tmp);
        return -1;
    }
    return 0;
}
