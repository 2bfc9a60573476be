"""The binding against the header: _api.py is current, its structs have C's
layout, every op of the op table and every builder of rlx.h has a Python
function, and every C function is called somewhere in the package."""
import ctypes
import os
import re
import subprocess
import sys

import pytest

import rlx
from rlx import _api

from conftest import ROOT

HEADER = os.path.join(ROOT, "include", "rlx.h")
PKG = os.path.dirname(rlx.__file__)

# ops only the compiler makes (fusion) or autodiff makes (a backward rule),
# with no builder of their own in rlx.h; topk_* come from rlx.topk, const from constant
COMPILER_MADE = {"dequant_matmul_add", "dequant_swiglu", "rms_dequant_matmul", "rms_dequant_swiglu",
                 "attention_dequant_matmul", "dequant_rope_kv", "add_layer_norm", "add_rms_norm", "rope_kv_write",
                 "conv_weight_grad", "pool_grad", "resize_grad", "adaptive_pool_grad"}
VIA = {"topk_values": "topk", "topk_indices": "topk", "const": "constant"}


def test_generated_api_is_current():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "python", "gen_api.py"), "--check", HEADER,
                        os.path.join(PKG, "_api.py")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_struct_layouts_match_the_c_compiler(tmp_path):
    cc = os.environ.get("CC", "cc")
    structs = [n for n in dir(_api) if n.startswith("rlx_") and isinstance(getattr(_api, n), type)
               and issubclass(getattr(_api, n), ctypes.Structure)]
    assert len(structs) >= 15
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "rlx.h"', "int main(void) {"]
    for s in structs:
        lines.append('printf("%s %%zu\\n", sizeof(%s));' % (s, s))
        for f, _ in getattr(_api, s)._fields_:
            lines.append('printf("%s.%s %%zu\\n", offsetof(%s, %s));' % (s, f, s, f))
    lines.append("return 0; }")
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines))
    exe = tmp_path / "layout"
    subprocess.run([cc, "-I" + os.path.join(ROOT, "include"), "-o", str(exe), str(src)], check=True)
    for line in subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split("\n"):
        if not line:
            continue
        key, value = line.split()
        if "." in key:
            s, f = key.split(".")
            got = getattr(getattr(_api, s), f).offset
        else:
            got = ctypes.sizeof(getattr(_api, key))
        assert got == int(value), key


def test_every_op_in_the_table_has_a_function():
    table = rlx.op_table()
    assert len(table) == rlx._lib_handle.rlx_op_count() > 80
    missing = []
    for name, arity, doc in table:
        if name in ("input", "param"):
            assert hasattr(rlx.Graph, name)
            continue
        if name in COMPILER_MADE:   # the exemption holds only while the header has no builder for it
            assert "rlx_" + name not in _api.FUNCTIONS, "%s has a builder now: drop it from COMPILER_MADE" % name
            continue
        if not callable(getattr(rlx, VIA.get(name, name), None)):
            missing.append(name)
    assert not missing, "ops without a Python function: %s" % missing


def test_every_builder_of_the_header_has_a_function():
    builders = [n for n, ret in _api.RETURN_TYPES.items() if ret == "rlx_node" and _api.PARAM_TYPES[n][:1] == ("rlx_graph *",)]
    assert len(builders) > 70
    missing = [b for b in builders if not callable(getattr(rlx, b[4:], None))]
    assert not missing
    # generated ones carry the header's comment
    assert "numpy broadcasting" in rlx.add.__doc__ and "[C: rlx_add]" in rlx.add.__doc__
    assert rlx.ops.GENERATED and set(rlx.ops.GENERATED) <= set(rlx.__all__)


def test_every_c_function_is_used_by_the_package():
    source = ""
    for f in os.listdir(PKG):
        if f.endswith(".py") and f != "_api.py":
            source += open(os.path.join(PKG, f)).read()
    generated = {"rlx_" + n for n in rlx.ops.GENERATED}
    unused = [n for n in _api.FUNCTIONS if n not in generated and not re.search(r"\b%s\b" % n, source)]
    assert not unused, "C functions the package never calls: %s" % unused


def test_every_public_name_is_exercised_by_a_test():
    here = os.path.dirname(os.path.abspath(__file__))
    text = "".join(open(os.path.join(here, f)).read() for f in os.listdir(here) if f.endswith(".py"))
    skip = set(rlx.ops.GENERATED)   # each op is run by test_graph.py's tables or by name below
    untested = [n for n in rlx.__all__ if n not in skip and not re.search(r"\b%s\b" % re.escape(n), text)]
    assert not untested, untested


@pytest.mark.parametrize("name", sorted(set(rlx.ops.GENERATED)))
def test_each_generated_op_builds(name):
    """Every generated op builds a node on fitting inputs (test_graph.py checks the values)."""
    g = rlx.Graph()
    f = getattr(rlx, name)
    x = g.input("x", "f32", (2, 4, 4, 8))
    ids = g.input("ids", "i32", (2,))
    one = g.input("one", "i32", (1,))
    special = {
        "where": lambda: f(x > 0.0, x, x), "fma": lambda: f(x, x, x), "clamp": lambda: f(x, -1, 1),
        "cast": lambda: f(x, "f16"), "dequant_matmul": lambda: f(x, g.input("w", "f32", (3, 8))),
        "matmul_bias_act": lambda: f(x, x, True, None, "relu"), "matmul_ex": lambda: f(x, x, 1, None, "none"),
        "layer_norm": lambda: f(x, g.input("gm", "f32", (8,))), "rms_norm": lambda: f(x, g.input("gm", "f32", (8,))),
        "batch_norm": lambda: f(x, *[g.input("c%d" % i, "f32", (4,)) for i in range(4)], 1e-5),
        "group_norm": lambda: f(x, g.input("a", "f32", (4,)), g.input("b", "f32", (4,)), 2, 1e-5),
        "instance_norm": lambda: f(x, g.input("a", "f32", (4,)), g.input("b", "f32", (4,)), 1e-5),
        "layer_norm_channels": lambda: f(x, g.input("a", "f32", (4,)), g.input("b", "f32", (4,)), 1e-5),
        "narrow": lambda: f(x, 1, 0, 2), "slice": lambda: f(x, 1, 0, 2), "slice_last": lambda: f(x, 1, 2),
        "depth_to_space": lambda: f(x, 2, "dcr"), "space_to_depth": lambda: f(x, 2, "crd"),
        "gather_rows": lambda: f(x, ids), "gather": lambda: f(x, rlx.cast(x, "i32") * 0, 1),
        "cumsum": lambda: f(x, 1),
        "scatter_add_rows": lambda: f(x, ids, x), "scatter_add": lambda: f(x, rlx.cast(x, "i32") * 0, x, 1),
        "attention": lambda: f(x, x, x), "attention_kv": lambda: f(x, x, x, "causal", None, 0.0, one),
        "kv_write": lambda: f(g.param("cache", "f32", (2, 4, 8, 8)), x, one),
        "assign": lambda: f(g.param("p", "f32", (2, 4, 4, 8)), x), "rope": lambda: f(x),
        "rope_scaled": lambda: f(x, None, "neox", 10000.0, 8, g.input("ff", "f32", (4,))),
        "softmax_cross_entropy": lambda: f(g.input("lg", "f32", (2, 5)), ids),
        "softmax_cross_entropy_grad": lambda: f(g.input("lg", "f32", (2, 5)), ids),
        "softmax": lambda: f(x, -1), "log_softmax": lambda: f(x, -1), "argmax": lambda: f(x, -1),
        "argmin": lambda: f(x, -1, True), "flip": lambda: f(x, 1),
        "gelu_grad": lambda: f(x, x), "gelu_tanh_grad": lambda: f(x, x),
    }
    node = special[name]() if name in special else (f(x, x) if f.__code__.co_argcount >= 2 and
                                                     "axis" not in f.__code__.co_varnames[:2] else f(x))
    assert isinstance(node, rlx.Node) and node.graph is g
