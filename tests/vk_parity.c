/*
 * vk_parity.c — CPU <-> Vulkan comparison for the parity tests.
 */
#include "vk_parity.h"
#include "core/core.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool vkp_available(void) {
    static int cached = -1;
    static char reason[512];
    if (cached < 0) {
        int n = rlx_vulkan_device_count();
        cached = n > 0;
        if (!cached) snprintf(reason, sizeof reason, "%s", rlx_last_error());
    }
    if (cached) return true;
    const char *req = getenv("RLX_REQUIRE_VULKAN");
    if (req && strcmp(req, "1") == 0) {
        harness_fail(__FILE__, __LINE__, "no Vulkan device (RLX_REQUIRE_VULKAN=1): %s", reason);
        return false;
    }
    harness_skip(__FILE__, __LINE__, "no Vulkan device: %s", reason);
    return false;
}

void vkp_options(rlx_compile_options *o) {
    rlx_compile_options_init(o);
    o->backend = RLX_BACKEND_VULKAN;
    const char *dev = getenv("RLX_TEST_VK_DEVICE");
    if (dev && *dev) o->device_name = dev;
}

static void set_params(rlx_exec *e) {
    for (int i = 0; i < rlx_exec_param_count(e); i++) {
        rlx_tensor info;
        rlx_exec_param_info(e, i, &info);
        unsigned char *p = malloc(info.bytes ? info.bytes : 1);
        uint64_t h = rlx_hash_str(info.name);
        size_t es = rlx_dtype_size(info.dtype), n = es ? info.bytes / es : 0;
        for (size_t j = 0; j < n; j++) {
            h = h * 6364136223846793005ull + 1442695040888963407ull;
            double v = (double)(h >> 40) / 16777216.0 * 2 - 1;
            switch (info.dtype) {
            case RLX_F32: ((float *)p)[j] = (float)v; break;
            case RLX_F64: ((double *)p)[j] = v; break;
            case RLX_I32: ((int32_t *)p)[j] = (int32_t)(v * 100); break;
            case RLX_I64: ((int64_t *)p)[j] = (int64_t)(v * 100); break;
            default: p[j * es] = (unsigned char)(h >> 56); for (size_t b = 1; b < es; b++) p[j * es + b] = 0; break;
            }
        }
        rlx_exec_set_param(e, info.name, info.dtype, p, info.bytes);
        free(p);
    }
}

static bool is_float(rlx_dtype dt) { return dt == RLX_F32 || dt == RLX_F64 || dt == RLX_F16 || dt == RLX_BF16; }

static double as_double(const void *d, rlx_dtype dt, size_t i) {
    switch (dt) {
    case RLX_F32: return ((const float *)d)[i];
    case RLX_F64: return ((const double *)d)[i];
    case RLX_I32: return ((const int32_t *)d)[i];
    case RLX_I64: return (double)((const int64_t *)d)[i];
    case RLX_F16: case RLX_BF16: return ((const uint16_t *)d)[i];
    default: return ((const unsigned char *)d)[i];
    }
}

bool vkp_compare(const rlx_graph *g, const rlx_tensor *in, int n_in, double tol, bool require_gpu) {
    return vkp_compare_quant(g, in, n_in, tol, require_gpu, 0);
}

bool vkp_compare_quant(const rlx_graph *g, const rlx_tensor *in, int n_in, double tol, bool require_gpu, int exact_quant) {
    rlx_compile_options oc, ov;
    rlx_compile_options_init(&oc);
    oc.backend = RLX_BACKEND_CPU;
    vkp_options(&ov);
    oc.exact_quant = ov.exact_quant = exact_quant;
    rlx_exec *ec = NULL, *ev = NULL;
    bool ok = false;
    if (rlx_compile(g, &oc, &ec) != RLX_OK) { printf("    cpu compile: %s\n", rlx_last_error()); goto done; }
    if (rlx_compile(g, &ov, &ev) != RLX_OK) { printf("    vulkan compile: %s\n", rlx_last_error()); goto done; }
    set_params(ec);
    set_params(ev);
    if (rlx_exec_run(ec, in, n_in) != RLX_OK) { printf("    cpu run: %s\n", rlx_last_error()); goto done; }
    if (rlx_exec_run(ev, in, n_in) != RLX_OK) { printf("    vulkan run: %s\n", rlx_last_error()); goto done; }
    rlx_exec_stats st;
    rlx_exec_get_stats(ev, &st);
    if (require_gpu && st.host_steps) {
        char *rep = rlx_exec_report(ev);
        printf("    %d host steps where none were expected:\n%s", st.host_steps, rep ? rep : "");
        free(rep);
        goto done;
    }
    ok = true;
    for (int i = 0; i < rlx_exec_output_count(ec) && ok; i++) {
        rlx_tensor info, a, b;
        rlx_exec_output_info(ec, i, &info);
        if (rlx_exec_output(ec, info.name, &a) != RLX_OK || rlx_exec_output(ev, info.name, &b) != RLX_OK) {
            printf("    output %s: %s\n", info.name, rlx_last_error());
            ok = false;
            break;
        }
        if (a.bytes != b.bytes || a.dtype != b.dtype || a.rank != b.rank) {
            printf("    output %s: cpu and vulkan differ in shape/dtype\n", info.name);
            ok = false;
            break;
        }
        size_t es = rlx_dtype_size(a.dtype), n = es ? a.bytes / es : 0;
        if (is_float(a.dtype) && a.dtype != RLX_F16 && a.dtype != RLX_BF16) {
            double num = 0, den = 0;
            size_t worst = 0;
            double wd = -1;
            for (size_t j = 0; j < n; j++) {
                double x = as_double(a.data, a.dtype, j), y = as_double(b.data, b.dtype, j);
                if (isnan(x) != isnan(y) || (isinf(x) && x != y)) { wd = INFINITY; worst = j; break; }
                if (isnan(x) || isinf(x)) continue;
                num += (x - y) * (x - y);
                den += x * x;
                if (fabs(x - y) > wd) { wd = fabs(x - y); worst = j; }
            }
            double rel = isinf(wd) ? INFINITY : sqrt(num) / (den > 0 ? sqrt(den) : 1);
            if (!(rel <= tol)) {
                printf("    output %s: rel error %.3g > %.3g; worst [%zu] cpu %.9g vulkan %.9g\n", info.name, rel, tol,
                       worst, as_double(a.data, a.dtype, worst), as_double(b.data, b.dtype, worst));
                ok = false;
            }
        } else if (memcmp(a.data, b.data, a.bytes) != 0) {
            for (size_t j = 0; j < n; j++)
                if (memcmp((char *)a.data + j * es, (char *)b.data + j * es, es)) {
                    printf("    output %s: element %zu differs: cpu %g vulkan %g\n", info.name, j,
                           as_double(a.data, a.dtype, j), as_double(b.data, b.dtype, j));
                    break;
                }
            ok = false;
        }
    }
done:
    rlx_exec_free(ec);
    rlx_exec_free(ev);
    return ok;
}

rlx_exec *vkp_compile(const rlx_graph *g, bool vulkan) { return vkp_compile_quant(g, vulkan, 0); }

rlx_exec *vkp_compile_quant(const rlx_graph *g, bool vulkan, int exact_quant) {
    rlx_compile_options o;
    if (vulkan) vkp_options(&o);
    else {
        rlx_compile_options_init(&o);
        o.backend = RLX_BACKEND_CPU;
    }
    o.exact_quant = exact_quant;
    rlx_exec *e = NULL;
    if (rlx_compile(g, &o, &e) != RLX_OK) printf("    compile (%s): %s\n", vulkan ? "vulkan" : "cpu", rlx_last_error());
    return e;
}

int vkp_devices_int_dot(void) {
    int n = rlx_device_count(), vulkan = 0, yes = 0;
    for (int i = 0; i < n; i++) {
        rlx_device_info d;
        if (rlx_device_get_info(i, &d) != RLX_OK || d.backend != RLX_BACKEND_VULKAN) continue;
        vulkan++;
        yes += d.integer_dot_used;
    }
    return yes == vulkan ? 1 : yes == 0 ? 0 : -1;
}

bool vkp_require_int_dot(void) {
    if (!vkp_available()) return false;
    if (vkp_devices_int_dot() == 1) return true;
    harness_skip(__FILE__, __LINE__, "the i8 matvec needs integer dot products on every Vulkan device");
    return false;
}

/* 1 when the device the Vulkan side compiles for has the cooperative-matrix
 * tier, 0 when it has not, -1 when that device is not known (several devices
 * and no RLX_TEST_VK_DEVICE). */
int vkp_device_has_coopmat(void) {
    const char *no = getenv("RLX_VK_NO_COOPMAT");
    if (no && *no && strcmp(no, "0") != 0) return 0;
    const char *want = getenv("RLX_TEST_VK_DEVICE");
    int n = rlx_device_count(), found = -1;
    for (int i = 0; i < n && found < 0; i++) {
        rlx_device_info d;
        if (rlx_device_get_info(i, &d) != RLX_OK || d.backend != RLX_BACKEND_VULKAN) continue;
        bool match = want && *want ? strstr(d.name, want) != NULL : n == 2;   /* the CPU and one Vulkan device */
        if (match) found = d.cooperative_matrix_nv && d.subgroup_size == 32 && d.fp16;
    }
    return found;
}

/* The tier of the n-th node in the report whose line names `op`, or "". */
void vkp_tier_of(const char *report, const char *op, int nth, char *out, size_t cap) {
    out[0] = 0;
    const char *s = report;
    for (int seen = 0; s && (s = strstr(s, op)); s++) {
        if (seen++ < nth) continue;
        const char *eol = strchr(s, '\n');
        if (!eol) eol = s + strlen(s);
        const char *b = eol;
        while (b > s && b[-1] == ' ') b--;
        const char *e = b;
        while (b > s && b[-1] != ' ') b--;
        size_t len = (size_t)(e - b) < cap - 1 ? (size_t)(e - b) : cap - 1;
        memcpy(out, b, len);
        out[len] = 0;
        return;
    }
}

