#!/usr/bin/env python3
"""ONNX files for tests/test_onnx.c, written with the onnx package, and the
summary of each as the onnx package reads it (the C reader prints the same
summary from its own parse).

usage: onnx_models.py OUT_DIR
Writes OUT_DIR/NAME.onnx (plus NAME.data for external data) and prints, per
model, "== NAME" followed by its summary lines.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.external_data_helper import convert_model_to_external_data


def fmt_f(x):
    return "%.9g" % x


def dims_of(vi):
    t = vi.type
    if not t.HasField("tensor_type"):
        return "none", "-"
    tt = t.tensor_type
    if not tt.HasField("shape"):
        return str(tt.elem_type), "-"
    ds = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            ds.append(str(d.dim_value))
        elif d.HasField("dim_param"):
            ds.append(d.dim_param)
        else:
            ds.append("?")
    return str(tt.elem_type), "[" + ",".join(ds) + "]"


def tensor_line(t):
    ext = ""
    if t.data_location == TensorProto.EXTERNAL:
        kv = {e.key: e.value for e in t.external_data}
        ext = " ext=%s,%s,%s" % (kv.get("location", ""), kv.get("offset", "-1"), kv.get("length", "-1"))
    return "%s %d [%s] raw=%d float=%d int32=%d int64=%d double=%d uint64=%d%s" % (
        t.name, t.data_type, ",".join(str(d) for d in t.dims), len(t.raw_data), len(t.float_data),
        len(t.int32_data), len(t.int64_data), len(t.double_data), len(t.uint64_data), ext)


def attr_text(a):
    parts = ["%s:%d" % (a.name, a.type)]
    if a.type == onnx.AttributeProto.FLOAT:
        parts.append(fmt_f(a.f))
    elif a.type == onnx.AttributeProto.INT:
        parts.append(str(a.i))
    elif a.type == onnx.AttributeProto.STRING:
        parts.append(a.s.decode("latin-1"))
    elif a.type == onnx.AttributeProto.FLOATS:
        parts.append(",".join(fmt_f(x) for x in a.floats))
    elif a.type == onnx.AttributeProto.INTS:
        parts.append(",".join(str(x) for x in a.ints))
    elif a.type == onnx.AttributeProto.STRINGS:
        parts.append(",".join(x.decode("latin-1") for x in a.strings))
    elif a.type == onnx.AttributeProto.TENSOR:
        parts.append("{" + tensor_line(a.t) + "}")
    elif a.type == onnx.AttributeProto.GRAPH:
        parts.append("{graph %s nodes %d}" % (a.g.name, len(a.g.node)))
    return "=".join(parts)


def summary(m, out):
    out.append("ir %d" % m.ir_version)
    for o in m.opset_import:
        out.append("opset %s %d" % (o.domain or "-", o.version))
    g = m.graph
    out.append("graph %s nodes %d inits %d" % (g.name, len(g.node), len(g.initializer)))
    for kind, vis in (("input", g.input), ("output", g.output)):
        for vi in vis:
            et, ds = dims_of(vi)
            out.append("%s %s %s %s" % (kind, vi.name, et, ds))
    for t in g.initializer:
        out.append("init " + tensor_line(t))
    for n in g.node:
        out.append("node %s %s in=%s out=%s" % (n.op_type, n.name or "-", ",".join(n.input), ",".join(n.output)))
        for a in n.attribute:
            out.append("  attr " + attr_text(a))


def hand_model():
    """Every field kind the reader decodes."""
    X = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])
    Y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "conv.w")   # raw_data
    b = helper.make_tensor("conv.b", TensorProto.FLOAT, [4], [0.5, -1.25, 3.0, 1e-7])              # float_data
    shape = helper.make_tensor("shape", TensorProto.INT64, [2], [-1, 64])                          # int64_data
    dd = helper.make_tensor("dd", TensorProto.DOUBLE, [2], [1.5, -2.0])                            # double_data
    fc = numpy_helper.from_array(rng.standard_normal((10, 64)).astype(np.float32), "fc.w")
    nodes = [
        helper.make_node("Conv", ["x", "conv.w", "conv.b"], ["c"], name="conv0", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], strides=[2, 2], group=1, auto_pad="NOTSET"),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["p"]),
        helper.make_node("Reshape", ["p", "shape"], ["f"]),
        helper.make_node("Gemm", ["f", "fc.w", ""], ["y"], alpha=0.75, beta=1.0, transB=1),
        helper.make_node("Constant", [], ["k"], value=helper.make_tensor("kv", TensorProto.FLOAT, [1], [2.5])),
        helper.make_node("Resize", ["x", "", "", ""], ["z"], mode="linear", scales_list=[1.0, 2.5, -0.125],
                         names=["a", "bc", ""]),
    ]
    sub = helper.make_graph([helper.make_node("Identity", ["k"], ["k2"])], "then_body", [],
                            [helper.make_tensor_value_info("k2", TensorProto.FLOAT, [1])])
    nodes.append(helper.make_node("If", ["cond"], ["q"], then_branch=sub, else_branch=sub))
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    g = helper.make_graph(nodes, "hand", [X, cond], [Y], initializer=[w, b, shape, dd, fc])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                             producer_name="rlx-tests")


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    lines = []
    m = hand_model()
    onnx.save(m, os.path.join(out_dir, "hand.onnx"))
    lines.append("== hand")
    summary(onnx.load(os.path.join(out_dir, "hand.onnx")), lines)

    ext = hand_model()
    convert_model_to_external_data(ext, all_tensors_to_one_file=True, location="ext.data", size_threshold=64)
    onnx.save(ext, os.path.join(out_dir, "ext.onnx"))
    lines.append("== ext")
    summary(onnx.load(os.path.join(out_dir, "ext.onnx"), load_external_data=False), lines)

    try:
        import torch
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                                  torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(8 * 4 * 4, 5)).eval()
        path = os.path.join(out_dir, "torch.onnx")
        torch.onnx.export(net, torch.randn(1, 3, 8, 8), path, input_names=["image"], output_names=["logits"],
                          dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}}, opset_version=13)
        lines.append("== torch")
        summary(onnx.load(path, load_external_data=False), lines)   # newer exporters write external data
    except ImportError:
        pass
    print("\n".join(lines))


if __name__ == "__main__":
    main()
