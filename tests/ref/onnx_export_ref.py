#!/usr/bin/env python3
"""PyTorch models exported to ONNX for tests/test_onnx_import.c, with inputs
and PyTorch's outputs as .npy files (float32; the reference is PyTorch's own
float64 run of the same weights, rounded to float32).

usage: onnx_export_ref.py OUT_DIR
Writes OUT_DIR/NAME.onnx, NAME.in.B.npy and NAME.outK.B.npy for batch sizes
B = 2 and 3 (the batch is a dynamic axis), for NAME in mlp, attn13, attn17, pads, norms13, norms17, group_norm21, group_norm18, resnet18_bn,
cnn, pools, resnet18, mobilenet_v2, vit (whose nn.MultiheadAttention computes batch * heads
from the shape) and clip_init; and OUT_DIR/unsupported.onnx (operators rlx does not import yet).
"""
import math
import os
import sys

import numpy as np
import torch


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 8)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = torch.clamp(h, max=2.0) * 0.5 + torch.sigmoid(h) + torch.nn.functional.gelu(h)   # GELU: Erf at opset 13
        return torch.softmax(self.fc2(h), dim=-1)


class Attention(torch.nn.Module):
    """A pre-LN self-attention block, its shapes computed from x as exports do."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads = heads
        self.ln = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.fc = torch.nn.Linear(d, 2 * d)
        self.fc2 = torch.nn.Linear(2 * d, d)

    def forward(self, x):
        b, s, d = x.shape
        h = self.ln(x)
        q, k, v = self.qkv(h).split(d, dim=-1)
        hd = d // self.heads
        q = q.reshape(b, s, self.heads, hd).transpose(1, 2)
        k = k.reshape(b, s, self.heads, hd).transpose(1, 2)
        v = v.reshape(b, s, self.heads, hd).transpose(1, 2)
        att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(hd), dim=-1)
        o = (att @ v).transpose(1, 2).reshape(b, s, d)
        x = x + self.proj(o)
        y = self.fc2(torch.nn.functional.leaky_relu(self.fc(self.ln2(x)), 0.1))
        return x + y, y.mean(dim=1)


def export(model, example, path, opset, inputs, outputs, dyn):
    torch.onnx.export(model, example, path, input_names=inputs, output_names=outputs, dynamic_axes=dyn,
                      opset_version=opset, do_constant_folding=True)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    class SmallCNN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.bn_folded = torch.nn.BatchNorm2d(8)       # after a conv: the exporter folds it
            self.dw = torch.nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8)
            self.bn = torch.nn.BatchNorm2d(8)              # after a ReLU: exported as BatchNormalization
            self.pw = torch.nn.Conv2d(8, 12, 1)
            self.dil = torch.nn.Conv1d(12, 6, 3, dilation=2, padding=2)
            self.fc = torch.nn.Linear(6, 5)
            for bn in (self.bn_folded, self.bn):
                bn.running_mean.uniform_(-0.5, 0.5)
                bn.running_var.uniform_(0.5, 2.0)
                bn.weight.data.uniform_(0.5, 1.5)
                bn.bias.data.uniform_(-0.2, 0.2)

        def forward(self, x):
            h = torch.relu(self.bn_folded(self.stem(x)))
            h = self.bn(torch.relu(self.dw(h)))
            h = self.pw(h)                                 # [b, 12, 4, 5]
            h = self.dil(h.flatten(2))                     # conv1d over the 20 positions
            return self.fc(torch.nn.functional.adaptive_avg_pool1d(h, 1).flatten(1))


    class PoolNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = torch.nn.Conv2d(3, 6, 7, stride=2, padding=3)

        def forward(self, x):
            h = torch.nn.functional.max_pool2d(torch.relu(self.stem(x)), 3, 2, 1)          # resnet's stem
            a = torch.nn.functional.avg_pool2d(h, 3, 2, 1, ceil_mode=True, count_include_pad=False)
            b = torch.nn.functional.avg_pool2d(h, 2, 2, 0, ceil_mode=True)
            m = torch.nn.functional.max_pool1d(h.flatten(2), 4, 3, 1, ceil_mode=True)
            return a.flatten(1).sum(1, keepdim=True) + b.mean((2, 3)) + m.amax(2)

    class Pads(torch.nn.Module):
        def forward(self, x):
            F = torch.nn.functional
            return (F.pad(x, (1, 2, 2, 1), mode="reflect"), F.pad(x, (2, 0, 1, 1), mode="replicate"),
                    F.pad(x, (0, 3, 1, 0), value=0.5))

    class ConvT(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.up = torch.nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1)
            self.up1 = torch.nn.ConvTranspose1d(4, 6, 3, stride=3, padding=2, dilation=2, groups=2)

        def forward(self, x):
            h = torch.relu(self.up(x))                     # [b, 4, 2H, 2W]
            return self.up1(h.flatten(2))

    class Upsample(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.near = torch.nn.Upsample(scale_factor=2, mode="nearest")
            self.bil = torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
            self.bil_ac = torch.nn.Upsample(size=(11, 9), mode="bilinear", align_corners=True)

        def forward(self, x):
            F = torch.nn.functional
            return (self.near(x), self.bil(x), self.bil_ac(x),
                    F.interpolate(x, scale_factor=1.5, mode="bicubic", align_corners=False),
                    F.interpolate(x, size=(7, 4), mode="bicubic", align_corners=True),
                    F.interpolate(x, size=(3, 4), mode="nearest"),
                    F.interpolate(x[:, :, 0], scale_factor=3, mode="linear"),
                    F.interpolate(x.unsqueeze(2), size=(3, 7, 4), mode="trilinear"))

    class Norms(torch.nn.Module):
        """GroupNorm (exported as Reshape, InstanceNormalization, Reshape, Mul, Add), InstanceNorm2d
        with affine parameters, and ConvNeXt's LayerNorm2d (Transpose, LayerNormalization, Transpose
        at opset 17; decomposed at 13)."""
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.gn = torch.nn.GroupNorm(4, 8)
            self.inorm = torch.nn.InstanceNorm2d(8, affine=True)
            self.ln = torch.nn.LayerNorm(8)
            for m in (self.gn, self.inorm, self.ln):
                m.weight.data.uniform_(0.5, 1.5)
                m.bias.data.uniform_(-0.5, 0.5)

        def forward(self, x):
            h = self.gn(self.conv(x))
            h = self.inorm(torch.relu(h)) + 3.0
            return self.ln(h.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)

    cases = [
        ("upsample", Upsample().eval(), lambda b: torch.randn(b, 3, 5, 6), 13, ["x"],
         ["near", "bilinear", "bilinear_ac", "bicubic", "bicubic_ac", "near_down", "linear1d", "trilinear"]),
        ("norms13", Norms().eval(), lambda b: torch.randn(b, 3, 6, 7), 13, ["x"], ["y"]),
        ("norms17", Norms().eval(), lambda b: torch.randn(b, 3, 6, 7), 17, ["x"], ["y"]),
        ("convt", ConvT().eval(), lambda b: torch.randn(b, 3, 4, 5), 13, ["x"], ["y"]),
        ("pads", Pads().eval(), lambda b: torch.randn(b, 3, 6, 7), 13, ["x"], ["reflect", "edge", "constant"]),
        ("cnn", SmallCNN().eval(), lambda b: torch.randn(b, 3, 8, 10), 13, ["image"], ["logits"]),
        ("pools", PoolNet().eval(), lambda b: torch.randn(b, 3, 29, 23), 13, ["image"], ["out"]),
        ("mlp", MLP().eval(), lambda b: torch.randn(b, 16), 13, ["x"], ["probs"]),
        ("attn13", Attention().eval(), lambda b: torch.randn(b, 5, 32), 13, ["x"], ["y", "pooled"]),
        ("attn17", Attention().eval(), lambda b: torch.randn(b, 5, 32), 17, ["x"], ["y", "pooled"]),
    ]
    for name, model, make, opset, ins, outs in cases:
        dyn = {n: {0: "batch"} for n in ins + outs}
        export(model, make(2), os.path.join(out, name + ".onnx"), opset, ins, outs, dyn)
        ref = model.double()
        for b in (2, 3):
            x = make(b)
            np.save(os.path.join(out, "%s.in.%d.npy" % (name, b)), x.numpy().astype(np.float32))
            with torch.no_grad():
                ys = ref(x.double())
            ys = ys if isinstance(ys, tuple) else (ys,)
            for i, y in enumerate(ys):
                np.save(os.path.join(out, "%s.out%d.%d.npy" % (name, i, b)), y.numpy().astype(np.float32))
        model.float()

    # torchvision's resnet18 and mobilenet_v2 (random weights, 64x64 images, dynamic batch) and a
    # small ViT (static batch: its attention computes batch * heads from the shape)
    import torchvision
    from torchvision.models.vision_transformer import VisionTransformer
    for name in ("resnet18", "mobilenet_v2"):
        torch.manual_seed(1)
        net = getattr(torchvision.models, name)(weights=None).eval()
        export(net, torch.randn(2, 3, 64, 64), os.path.join(out, name + ".onnx"), 13, ["image"], ["logits"],
               {"image": {0: "batch"}, "logits": {0: "batch"}})
        ref = net.double()
        for b in (2, 3):
            x = torch.randn(b, 3, 64, 64)
            np.save(os.path.join(out, "%s.in.%d.npy" % (name, b)), x.numpy().astype(np.float32))
            with torch.no_grad():
                np.save(os.path.join(out, "%s.out0.%d.npy" % (name, b)), ref(x.double()).numpy().astype(np.float32))
        if name == "resnet18":   # again with its BatchNormalization nodes kept (rlx folds them into the convs)
            net.float()
            torch.onnx.export(net, torch.randn(2, 3, 64, 64), os.path.join(out, "resnet18_bn.onnx"),
                              input_names=["image"], output_names=["logits"],
                              dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}}, opset_version=13,
                              training=torch.onnx.TrainingMode.PRESERVE)
            for b in (2, 3):
                for k in ("in", "out0"):
                    src = os.path.join(out, "%s.%s.%d.npy" % (name, k, b))
                    np.save(os.path.join(out, "resnet18_bn.%s.%d.npy" % (k, b)), np.load(src))
    torch.manual_seed(2)
    vit = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64,
                            num_classes=10).eval()
    torch.nn.init.normal_(vit.heads.head.weight, std=0.5)   # torchvision starts the head at zero
    export(vit, torch.randn(2, 3, 32, 32), os.path.join(out, "vit.onnx"), 17, ["image"], ["logits"],
           {"image": {0: "batch"}, "logits": {0: "batch"}})
    vit = vit.double()
    for b in (2, 3):
        x = torch.randn(b, 3, 32, 32)
        np.save(os.path.join(out, "vit.in.%d.npy" % b), x.numpy())
        with torch.no_grad():
            np.save(os.path.join(out, "vit.out0.%d.npy" % b), vit(x.double()).numpy().astype(np.float32))

    # auto_pad as other exporters write it: Conv SAME_UPPER and MaxPool SAME_LOWER, stride 2 over
    # 8 x 9 (odd padding totals), against PyTorch on explicitly padded input
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    wc = torch.randn(4, 3, 3, 3, dtype=torch.float64)
    nodes = [helper.make_node("Conv", ["x", "wc"], ["c"], auto_pad="SAME_UPPER", strides=[2, 2]),
             helper.make_node("MaxPool", ["c"], ["y"], auto_pad="SAME_LOWER", kernel_shape=[2, 3], strides=[2, 2])]
    g = helper.make_graph(nodes, "auto_pad", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 8, 9])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          initializer=[numpy_helper.from_array(wc.numpy().astype(np.float32), "wc")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(out, "auto_pad.onnx"))
    F = torch.nn.functional
    wc32 = wc.float().double()
    for b in (2, 3):
        x = torch.randn(b, 3, 8, 9)
        np.save(os.path.join(out, "auto_pad.in.%d.npy" % b), x.numpy())
        # conv: out 4 x 5; totals 1 (h) and 2 (w): UPPER puts the odd one after
        cv = F.conv2d(F.pad(x.double(), (1, 1, 0, 1)), wc32, stride=2)
        # pool 2x3 stride 2 over 4 x 5: out 2 x 3; totals 0 (h) and 2 (w)
        y = F.max_pool2d(F.pad(cv, (1, 1, 0, 0), value=-float("inf")), (2, 3), 2)
        np.save(os.path.join(out, "auto_pad.out0.%d.npy" % b), y.numpy().astype(np.float32))

    # shape arithmetic newer exporters write, folded at import: GatherND on a shape, Mod (the
    # divisor's sign, not C's), Max; the result is a Reshape's target, [-1, 4, 2]
    ints = lambda name, v: helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(v, np.int64)))
    nodes = [helper.make_node("Shape", ["x"], ["s"]), ints("idx", [[1], [2]]), helper.make_node("GatherND", ["s", "idx"], ["hw"]),
             ints("m43", [4, 3]), helper.make_node("Mod", ["hw", "m43"], ["m"]),                  # [6, 4] % [4, 3] = [2, 1]
             ints("neg", [-1, 7]), ints("div", [4, 4]), helper.make_node("Mod", ["neg", "div"], ["pm"]),   # [3, 3] (C's: [-1, 3])
             ints("one2", [1, 2]), helper.make_node("Sub", ["pm", "one2"], ["pm2"]),             # [2, 1]
             helper.make_node("Add", ["m", "pm2"], ["t"]), ints("lo", [1, 1]), helper.make_node("Max", ["t", "lo"], ["tm"]),
             ints("minus1", [-1]), helper.make_node("Concat", ["minus1", "tm"], ["shape"], axis=0),
             helper.make_node("Reshape", ["x", "shape"], ["y"])]
    g = helper.make_graph(nodes, "shape_fold", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 6, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(out, "shape_fold.onnx"))
    for b in (2, 3):
        x = np.random.default_rng(b).standard_normal((b, 6, 4)).astype(np.float32)
        np.save(os.path.join(out, "shape_fold.in.%d.npy" % b), x)
        np.save(os.path.join(out, "shape_fold.out0.%d.npy" % b), x.reshape(-1, 4, 2))

    # GatherND of a tensor by constant index tuples (q = 2 and q = 1), against numpy indexing
    nodes = [ints("pairs", [[0, 1], [2, -1], [1, 0]]), helper.make_node("GatherND", ["x", "pairs"], ["y2"]),
             ints("ones", [[2], [0]]), helper.make_node("GatherND", ["x", "ones"], ["y1"])]
    g = helper.make_graph(nodes, "gather_nd", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4, 5])],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("y2", "y1")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(out, "gather_nd.onnx"))
    x = np.random.default_rng(7).standard_normal((3, 4, 5)).astype(np.float32)
    np.save(os.path.join(out, "gather_nd.in.2.npy"), x)
    np.save(os.path.join(out, "gather_nd.out0.2.npy"), x[[0, 2, 1], [1, 3, 0]])
    np.save(os.path.join(out, "gather_nd.out1.2.npy"), x[[2, 0]])

    # models the importer must refuse, each with a message naming why (test_onnx_import.c)
    xin = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4, 5])]
    yout = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    bad = {
        "bad_gather_nd_index": [ints("far", [[3]]), helper.make_node("GatherND", ["x", "far"], ["y"])],
        "bad_gather_nd_runtime": [helper.make_node("Cast", ["x"], ["xi"], to=TensorProto.INT64),
                                  helper.make_node("GatherND", ["x", "xi"], ["y"])],
        "bad_mod_tensor": [helper.make_node("Mod", ["x", "x"], ["y"], fmod=1)],
        "bad_reshape_count": [helper.make_node("Shape", ["x"], ["s"]), ints("five", [5]),
                              helper.make_node("Reshape", ["s", "five"], ["t"]),
                              helper.make_node("Reshape", ["x", "t"], ["y"])],
        "bad_transpose_perm": [helper.make_node("Shape", ["x"], ["s"]), ints("r", [1, 3]),
                               helper.make_node("Reshape", ["s", "r"], ["t"]),
                               helper.make_node("Transpose", ["t"], ["tt"], perm=[0, 0]),
                               helper.make_node("Reshape", ["x", "tt"], ["y"])],
    }
    # batch * 4 is a dim a Reshape may infer; batch * 4 + 1, or two dims to infer, are not
    scaled = [helper.make_node("Shape", ["x"], ["s"]), ints("zero", [0]), helper.make_node("Gather", ["s", "zero"], ["b"]),
              ints("four", [4]), helper.make_node("Mul", ["b", "four"], ["b4"])]
    bad["bad_scaled_symbol_add"] = scaled + [ints("one", [1]), helper.make_node("Add", ["b4", "one"], ["b41"]),
                                             ints("rest", [-1]), helper.make_node("Concat", ["b41", "rest"], ["t"], axis=0),
                                             helper.make_node("Reshape", ["x", "t"], ["y"])]
    bad["bad_two_inferred"] = scaled + [ints("rest", [-1]), helper.make_node("Concat", ["b4", "rest"], ["t"], axis=0),
                                        helper.make_node("Reshape", ["x", "t"], ["y"])]
    xsym = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4, 5])]
    for name, nodes in bad.items():
        g = helper.make_graph(nodes, name, xsym if name in ("bad_scaled_symbol_add", "bad_two_inferred") else xin, yout)
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(out, name + ".onnx"))

    # DepthToSpace (DCR, CRD) and SpaceToDepth, against numpy transcriptions of the spec
    nodes = [helper.make_node("DepthToSpace", ["x"], ["dcr"], blocksize=2),
             helper.make_node("DepthToSpace", ["x"], ["crd"], blocksize=2, mode="CRD"),
             helper.make_node("SpaceToDepth", ["x"], ["s2d"], blocksize=2)]
    g = helper.make_graph(nodes, "depth_space", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8, 4, 6])],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("dcr", "crd", "s2d")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(out, "depth_space.onnx"))
    for b in (2, 3):
        x = np.random.default_rng(b).standard_normal((b, 8, 4, 6)).astype(np.float32)
        np.save(os.path.join(out, "depth_space.in.%d.npy" % b), x)
        dcr = x.reshape(b, 2, 2, 2, 4, 6).transpose(0, 3, 4, 1, 5, 2).reshape(b, 2, 8, 12)
        crd = x.reshape(b, 2, 2, 2, 4, 6).transpose(0, 1, 4, 2, 5, 3).reshape(b, 2, 8, 12)
        s2d = x.reshape(b, 8, 2, 2, 3, 2).transpose(0, 3, 5, 1, 2, 4).reshape(b, 32, 2, 3)
        for k, y in enumerate((dcr, crd, s2d)):
            np.save(os.path.join(out, "depth_space.out%d.%d.npy" % (k, b)), y)

    # Resize as opset 19 writes it, against the spec's formulas in numpy float64: round_prefer_ceil
    # ties (8 -> 4 half_pixel), cubic half_pixel_symmetric with exclude_outside and a = -0.5 by
    # scales over axes [2, 3], keep_aspect_ratio_policy not_larger by sizes, one axis asymmetric
    # floor; and a tf_crop_and_resize node, which rlx refuses
    def axis_weights(n_in, n_out, scale, mode, coord, nearest="floor", a=-0.75, exclude=False):
        W = np.zeros((n_out, n_in))
        for o in range(n_out):
            if coord == "half_pixel":
                x = (o + 0.5) / scale - 0.5
            elif coord == "half_pixel_symmetric":
                adj = n_out / (scale * n_in)
                x = n_in / 2 * (1 - adj) + (o + 0.5) / scale - 0.5
            else:
                x = o / scale
            f = np.floor(x)
            t = x - f
            if mode == "nearest":
                k = int(f) + {"round_prefer_ceil": t >= 0.5, "floor": False}[nearest]
                W[o, min(max(k, 0), n_in - 1)] += 1
                continue
            taps = [(int(f), 1 - t), (int(f) + 1, t)] if mode == "linear" else []
            if mode == "cubic":
                for j in range(int(f) - 1, int(f) + 3):
                    d = abs(x - j)
                    w = ((a + 2) * d - (a + 3)) * d * d + 1 if d <= 1 else ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
                    if exclude and (j < 0 or j >= n_in):
                        w = 0
                    taps.append((j, w))
                if exclude:
                    s_ = sum(w for _, w in taps)
                    taps = [(j, w / s_) for j, w in taps]
            for j, w in taps:
                W[o, min(max(j, 0), n_in - 1)] += w
        return W

    def apply(x, axis, W):
        return np.moveaxis(np.tensordot(W, np.moveaxis(x, axis, 0), axes=1), 0, axis)

    f32 = lambda name, v: numpy_helper.from_array(np.array(v, np.float32), name)
    i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)
    inits = [f32("s_tie", [1, 1, 0.5, 0.5]), f32("s_sym", [1.6, 1.3]), i64("z_keep", [12, 20]), f32("s_one", [3.0])]
    nodes = [helper.make_node("Resize", ["x", "", "s_tie"], ["tie"], mode="nearest", nearest_mode="round_prefer_ceil"),
             helper.make_node("Resize", ["x", "", "s_sym"], ["sym"], mode="cubic", axes=[2, 3], cubic_coeff_a=-0.5,
                              exclude_outside=1, coordinate_transformation_mode="half_pixel_symmetric"),
             helper.make_node("Resize", ["x", "", "", "z_keep"], ["keep"], mode="linear", axes=[2, 3],
                              keep_aspect_ratio_policy="not_larger"),
             helper.make_node("Resize", ["x", "", "s_one"], ["one"], mode="nearest", axes=[-1], nearest_mode="floor",
                              coordinate_transformation_mode="asymmetric")]
    g = helper.make_graph(nodes, "resize19", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 2, 8, 6])],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("tie", "sym", "keep", "one")],
                          initializer=inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)]), os.path.join(out, "resize19.onnx"))
    for b in (2, 3):
        x = np.random.default_rng(10 + b).standard_normal((b, 2, 8, 6)).astype(np.float32)
        np.save(os.path.join(out, "resize19.in.%d.npy" % b), x)
        xd = x.astype(np.float64)
        tie = apply(apply(xd, 2, axis_weights(8, 4, 0.5, "nearest", "half_pixel", "round_prefer_ceil")), 3,
                    axis_weights(6, 3, 0.5, "nearest", "half_pixel", "round_prefer_ceil"))
        sym = apply(apply(xd, 2, axis_weights(8, 12, 1.6, "cubic", "half_pixel_symmetric", a=-0.5, exclude=True)), 3,
                    axis_weights(6, 7, 1.3, "cubic", "half_pixel_symmetric", a=-0.5, exclude=True))
        keep = apply(apply(xd, 2, axis_weights(8, 12, 1.5, "linear", "half_pixel")), 3,
                     axis_weights(6, 9, 1.5, "linear", "half_pixel"))
        one = apply(xd, 3, axis_weights(6, 18, 3.0, "nearest", "asymmetric", "floor"))
        for k, y in enumerate((tie, sym, keep, one)):
            np.save(os.path.join(out, "resize19.out%d.%d.npy" % (k, b)), y.astype(np.float32))
    nodes = [helper.make_node("Resize", ["x", "roi", "s_tie"], ["y"], name="crop", mode="linear",
                              coordinate_transformation_mode="tf_crop_and_resize")]
    g = helper.make_graph(nodes, "resize_crop", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 8, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          initializer=[f32("s_tie", [1, 1, 0.5, 0.5]), f32("roi", [0, 0, 0, 0, 1, 1, 1, 1])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(out, "resize_crop.onnx"))

    # as newer exporters write it: Clip's bounds and a scale as float initializers
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(1)
    w = rng.standard_normal((6, 4)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(-0.5, np.float32), "lo"),
             numpy_helper.from_array(np.array(0.75, np.float32), "hi"),
             numpy_helper.from_array(np.array([2.0], np.float32), "scale")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Clip", ["h", "lo", "hi"], ["c"]),
             helper.make_node("Mul", ["c", "scale"], ["y"])]
    g = helper.make_graph(nodes, "clip_init", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])], initializer=inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), os.path.join(out, "clip_init.onnx"))
    for b in (2, 3):
        x = rng.standard_normal((b, 6)).astype(np.float32)
        np.save(os.path.join(out, "clip_init.in.%d.npy" % b), x)
        y = np.clip(x.astype(np.float64) @ w.astype(np.float64), -0.5, 0.75) * 2.0
        np.save(os.path.join(out, "clip_init.out0.%d.npy" % b), y.astype(np.float32))
        np.save(os.path.join(out, "clip_ext.in.%d.npy" % b), x)
        np.save(os.path.join(out, "clip_ext.out0.%d.npy" % b), y.astype(np.float32))

    # the same model with its initializers in an external file, and two broken copies: a location
    # outside the model's folder, and a length past the end of the file
    from onnx.external_data_helper import convert_model_to_external_data
    ext = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    convert_model_to_external_data(ext, all_tensors_to_one_file=True, location="clip_ext.data", size_threshold=0)
    onnx.save(ext, os.path.join(out, "clip_ext.onnx"))
    for name, key, value in (("ext_escape", "location", "../clip_ext.data"), ("ext_past_end", "length", "100000")):
        bad = onnx.load(os.path.join(out, "clip_ext.onnx"), load_external_data=False)
        for e in bad.graph.initializer[0].external_data:
            if e.key == key:
                e.value = value
        if key == "length" and not any(e.key == "length" for e in bad.graph.initializer[0].external_data):
            bad.graph.initializer[0].external_data.add(key="length", value=value)
        with open(os.path.join(out, name + ".onnx"), "wb") as f:
            f.write(bad.SerializeToString())

    # GroupNormalization: opset 21 (scale and bias per channel) and 18 (per group), against numpy
    rng = np.random.default_rng(3)
    for opset, per in ((21, 6), (18, 3)):
        name = "group_norm%d" % opset
        sc = rng.uniform(0.5, 1.5, per).astype(np.float32)
        bi = rng.uniform(-0.5, 0.5, per).astype(np.float32)
        nodes = [helper.make_node("GroupNormalization", ["x", "scale", "bias"], ["y"], num_groups=3, epsilon=1e-4)]
        g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 6, 4, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              initializer=[numpy_helper.from_array(sc, "scale"), numpy_helper.from_array(bi, "bias")])
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), os.path.join(out, name + ".onnx"))
        scc = np.repeat(sc, 6 // per).astype(np.float64).reshape(1, 6, 1, 1)
        bic = np.repeat(bi, 6 // per).astype(np.float64).reshape(1, 6, 1, 1)
        for b in (2, 3):
            x = (rng.standard_normal((b, 6, 4, 5)) * 2 + 1).astype(np.float32)
            np.save(os.path.join(out, "%s.in.%d.npy" % (name, b)), x)
            xg = x.astype(np.float64).reshape(b, 3, -1)
            y = ((xg - xg.mean(2, keepdims=True)) / np.sqrt(xg.var(2, keepdims=True) + 1e-4)).reshape(b, 6, 4, 5)
            np.save(os.path.join(out, "%s.out0.%d.npy" % (name, b)), (y * scc + bic).astype(np.float32))

    # operators rlx does not import: one error must list them all
    nodes = [helper.make_node("Einsum", ["x", "x"], ["e"], equation="ij,kj->ik"),
             helper.make_node("Einsum", ["e", "x"], ["f"], equation="ik,kj->ij"),
             helper.make_node("NonMaxSuppression", ["boxes", "scores"], ["y"])]
    g = helper.make_graph(nodes, "unsupported", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4]),
                                                 helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, 4, 4]),
                                                 helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 1, 4])],
                          [helper.make_tensor_value_info("f", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("y", TensorProto.INT64, None)])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(out, "unsupported.onnx"))


if __name__ == "__main__":
    main()
