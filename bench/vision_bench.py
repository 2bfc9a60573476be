#!/usr/bin/env python3
"""vision_bench.py — torchvision models exported to ONNX, run by rlx (`rlx run`)
against PyTorch eager and onnxruntime in the same call: one table of median
times, rlx's speed against each, and rlx's outputs against PyTorch's.

    python3 bench/vision_bench.py [--models resnet18,resnet50,mobilenet_v2,
        efficientnet_b0,convnext_tiny,vit_b_16] [--batch 1] [--device cpu|cuda]
        [--threads 1,2] [--runs 20] [--rlx build/rlx] [--rlx-device cpu]
        [--precision f32|fast] [--opset 17] [--keep DIR]

Each model: random weights (torch.manual_seed(0)), eval mode, one random
224x224 batch of --batch images, exported with a static batch to ONNX in a
temporary folder (--keep DIR keeps the files).
- PyTorch eager under torch.inference_mode: --device cpu at each --threads
  count (torch.set_num_threads); --device cuda in f32 with TF32 off, and in
  f16 with channels_last (model and input), timed with cuda.synchronize.
- onnxruntime, when importable: the CPU EP with intra_op_num_threads = T
  (inter_op 1, sequential) for --device cpu; the CUDA EP for --device cuda
  when the build has it. Its times include its host<->device copies, as rlx's
  do.
- rlx: `RLX run MODEL.onnx --input NAME=x.npy --runs N --threads T
  --precision P --device D`, whose "median Y ms" line is the time (the
  first run compiles and is not counted); on --rlx-device cpu once per
  --threads count, otherwise once on that device.
Warm-up: 3 runs (PyTorch, onnxruntime); the medians are over --runs runs.
"vs rlx" is the other runtime's median over rlx's (> 1: rlx faster), against
the rlx row with the same thread count (CPU) or the one rlx row (GPU).
"rel err" is max |y - y_torch| / max |y_torch| of the model's output against
PyTorch f32 eager (TF32 off) on the same input.
"""
import argparse, os, re, statistics, subprocess, sys, tempfile, time

import numpy as np

MODELS = ["resnet18", "resnet50", "mobilenet_v2", "efficientnet_b0", "convnext_tiny", "vit_b_16"]


def make_model(name, torch, tv):
    torch.manual_seed(0)
    ctor = getattr(tv.models, name)
    try:
        m = ctor(weights=None)
    except TypeError:   # torchvision < 0.13
        m = ctor(pretrained=False)
    return m.eval()


def export(model, x, path, opset, torch):
    kw = dict(input_names=["input"], output_names=["output"], opset_version=opset, do_constant_folding=True)
    try:   # newer PyTorch defaults to the dynamo exporter; the TorchScript one folds BatchNorm into Conv
        torch.onnx.export(model, (x,), path, dynamo=False, **kw)
    except TypeError:   # PyTorch without the dynamo argument (Debian's 1.13)
        torch.onnx.export(model, (x,), path, **kw)
    except Exception as e:   # a PyTorch whose TorchScript exporter is gone: its default one
        print("TorchScript export failed (%s); using the default exporter" % str(e)[:200], file=sys.stderr)
        torch.onnx.export(model, (x,), path, **kw)


def input_name(path):
    try:
        import onnx
        g = onnx.load(path, load_external_data=False).graph
        inits = {i.name for i in g.initializer}
        return [i.name for i in g.input if i.name not in inits][0]
    except ImportError:
        return "input"


def time_ms(fn, runs, sync=lambda: None, warmup=3):
    for _ in range(warmup):
        fn()
    sync()
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


def rel_err(y, ref):
    y, ref = np.asarray(y, np.float64).ravel(), np.asarray(ref, np.float64).ravel()
    if y.shape != ref.shape:
        return float("nan")
    return float(np.max(np.abs(y - ref)) / max(np.max(np.abs(ref)), 1e-30))


def torch_rows(a, model, x, torch):
    """[(setting, threads or None, ms)] for PyTorch eager."""
    rows = []
    with torch.inference_mode():
        if a.device == "cpu":
            for th in a.thread_list:
                torch.set_num_threads(th)
                rows.append(("f32", th, time_ms(lambda: model(x), a.runs)))
        else:
            sync = torch.cuda.synchronize
            m, xc = model.cuda(), x.cuda()
            rows.append(("f32, TF32 off", None, time_ms(lambda: m(xc), a.runs, sync)))
            mh = m.half().to(memory_format=torch.channels_last)
            xh = xc.half().to(memory_format=torch.channels_last)
            rows.append(("f16 channels_last", None, time_ms(lambda: mh(xh), a.runs, sync)))
            model.float().cpu()
    return rows


def ort_rows(a, path, name, xnp, ref):
    """[(setting, threads or None, ms, rel err)] for onnxruntime, or [] if it is not importable."""
    try:
        import onnxruntime as ort
    except ImportError:
        return []
    rows = []
    if a.device == "cpu":
        for th in a.thread_list:
            so = ort.SessionOptions()
            so.intra_op_num_threads, so.inter_op_num_threads = th, 1
            so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
            y = s.run(None, {name: xnp})[0]
            rows.append(("CPU EP", th, time_ms(lambda: s.run(None, {name: xnp}), a.runs), rel_err(y, ref)))
    elif "CUDAExecutionProvider" in ort.get_available_providers():
        s = ort.InferenceSession(path, providers=["CUDAExecutionProvider"])
        y = s.run(None, {name: xnp})[0]
        rows.append(("CUDA EP", None, time_ms(lambda: s.run(None, {name: xnp}), a.runs), rel_err(y, ref)))
    return rows


def rlx_row(a, path, name, xfile, outdir, threads, ref):
    """(ms, rel err) of `rlx run`, or (nan, nan) with its error printed."""
    cmd = [a.rlx, "run", path, "--input", "%s=%s" % (name, xfile), "--out", outdir, "--runs", str(a.runs),
           "--threads", str(threads or 0), "--precision", a.precision, "--device", a.rlx_device]
    r = subprocess.run(cmd, capture_output=True, text=True)
    m = re.search(r"median ([0-9.]+) ms", r.stdout)
    if r.returncode != 0 or not m:
        print("rlx failed (%s): %s" % (" ".join(cmd), (r.stderr or r.stdout).strip()[-800:]), file=sys.stderr)
        return float("nan"), float("nan")
    outs = [f for f in os.listdir(outdir) if f.endswith(".npy")]
    y = np.load(os.path.join(outdir, "output.npy" if "output.npy" in outs else outs[0]))
    return float(m.group(1)), rel_err(y, ref)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", default="resnet18")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--threads", default="1,2")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--rlx", default="build/rlx")
    p.add_argument("--rlx-device", default="cpu")
    p.add_argument("--precision", default="f32", choices=["f32", "fast"])
    p.add_argument("--opset", type=int, default=17)
    p.add_argument("--keep", default=None, help="keep the ONNX and npy files in this folder")
    a = p.parse_args()
    a.thread_list = [int(t) for t in a.threads.split(",")]
    import torch, torchvision as tv
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    tmp = tempfile.TemporaryDirectory() if a.keep is None else None
    work = a.keep or tmp.name
    os.makedirs(work, exist_ok=True)
    table = []
    for mname in a.models.split(","):
        model = make_model(mname, torch, tv)
        x = torch.randn(a.batch, 3, 224, 224, generator=torch.Generator().manual_seed(1))
        path = os.path.join(work, mname + ".onnx")
        export(model, x, path, a.opset, torch)
        name = input_name(path)
        xnp = x.numpy()
        xfile = os.path.join(work, mname + ".x.npy")
        np.save(xfile, xnp)
        with torch.inference_mode():
            if a.device == "cuda":
                ref = model.cuda()(x.cuda()).float().cpu().numpy()
                model.cpu()
            else:
                torch.set_num_threads(max(a.thread_list))
                ref = model(x).numpy()
        outdir = os.path.join(work, mname + ".rlx")
        os.makedirs(outdir, exist_ok=True)
        rlx = {}
        for th in (a.thread_list if a.rlx_device == "cpu" else [None]):
            ms, err = rlx_row(a, path, name, xfile, outdir, th, ref)
            rlx[th] = ms
            setting = a.precision + (", " + a.rlx_device if a.rlx_device != "cpu" else "")
            table.append((mname, "rlx", setting, th, ms, float("nan"), err))
        vs = lambda th, ms: ms / rlx.get(th, rlx.get(None, float("nan"))) if rlx else float("nan")
        for setting, th, ms in torch_rows(a, model, x, torch):
            table.append((mname, "PyTorch " + torch.__version__, setting, th, ms, vs(th, ms), 0.0))
        for setting, th, ms, err in ort_rows(a, path, name, xnp, ref):
            import onnxruntime as ort
            table.append((mname, "onnxruntime " + ort.__version__, setting, th, ms, vs(th, ms), err))
    print("\nvision models, batch %d, 224x224, device %s, rlx %s (%s, %s); median of %d runs" %
          (a.batch, a.device, a.rlx, a.rlx_device, a.precision, a.runs))
    print("| model | runtime | setting | threads | median ms | images/s | vs rlx (> 1: rlx faster) | rel err vs PyTorch |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for mname, rt, setting, th, ms, ratio, err in table:
        print("| %s | %s | %s | %s | %.2f | %.1f | %s | %s |" % (
            mname, rt, setting, "-" if th is None else th, ms, a.batch / ms * 1e3,
            "" if ratio != ratio else "%.2f" % ratio, "" if rt.startswith("PyTorch") else "%.1e" % err))
    return 0


if __name__ == "__main__":
    sys.exit(main())
