"""Compile options, running, params, checkpoints, reports, devices, logging
and .npy files; the Vulkan backend against the CPU where a device is usable
(lavapipe in CI)."""
import os

import numpy as np
import pytest

import rlx

from conftest import vulkan_available


def mlp():
    g = rlx.Graph()
    x = g.input("x", "f32", ("batch", 8))
    w = g.param("w", "f32", (8, 4))
    b = g.param("b", "f32", (4,))
    g.output("y", rlx.gelu(x @ w + b))
    g.output("sum", rlx.reduce_sum(x))
    return g


def test_compile_run_params_and_infos(rng):
    exe = mlp().compile(backend="cpu", threads=2, fuse=True, optimize=True)
    assert [i.name for i in exe.inputs] == ["x"] and exe.inputs[0].shape == (None, 8)
    assert [o.name for o in exe.outputs] == ["y", "sum"]
    assert sorted(p.name for p in exe.params) == ["b", "w"]
    w = rng.standard_normal((8, 4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    exe.set_params({"w": w, "b": b})
    x = rng.standard_normal((3, 8)).astype(np.float32)
    out = exe.run({"x": x})
    ref = x.astype(np.float64) @ w + b
    from math import erf
    ref = 0.5 * ref * (1 + np.vectorize(erf)(ref / np.sqrt(2)))
    np.testing.assert_allclose(out["y"], ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(exe(x=x)["sum"], x.sum(), rtol=1e-5)
    np.testing.assert_array_equal(exe.output("y"), out["y"])
    dst = np.empty((3, 4), np.float32)
    np.testing.assert_array_equal(exe.read_output("y", dst), out["y"])
    with pytest.raises(ValueError):
        exe.read_output("y", np.empty((4, 6), np.float32)[:, ::2])
    with pytest.raises(rlx.InvalidArgumentError):
        exe.read_output("y", np.empty(2, np.float32))   # too small
    np.testing.assert_array_equal(exe.read_param("w"), w)
    # inputs: lists convert; a non-contiguous view is copied; an output is a fresh array
    np.testing.assert_allclose(exe.run(x=x.tolist())["y"], out["y"], rtol=1e-6)
    big = np.zeros((3, 16), np.float32)
    big[:, ::2] = x
    np.testing.assert_allclose(exe.run(x=big[:, ::2])["y"], out["y"], rtol=1e-6)
    first = exe.run(x=x)["y"]
    exe.run(x=np.zeros((3, 8), np.float32))
    np.testing.assert_array_equal(first, out["y"])
    exe.prepare(x=(5, 8))
    st = exe.stats()
    assert st["backend"] == "cpu" and st["steps"] > 0 and st["specializations"] >= 1
    assert "matmul" in exe.report()
    exe.close()
    with pytest.raises(ValueError):
        exe.run(x=x)


def test_use_param_memory_reads_the_array_itself(rng):
    exe = mlp().compile(backend="cpu")
    w = np.zeros((8, 4), np.float32)
    exe.use_param_memory("w", w)
    exe.set_param("b", np.zeros(4, np.float32))
    x = rng.standard_normal((2, 8)).astype(np.float32)
    assert np.all(exe.run(x=x)["y"] == 0)
    with pytest.raises(ValueError):
        exe.use_param_memory("w", np.zeros((8, 4), np.float32)[:, :2])
    flat = np.zeros(33, np.float32)
    start = next(i for i in range(4) if (flat.ctypes.data + 4 * i) % 16 == 4)
    with pytest.raises(ValueError) as e:   # contiguous but 4 bytes past a 16-byte boundary
        exe.use_param_memory("w", flat[start:start + 32].reshape(8, 4))
    assert "aligned" in str(e.value)


def test_checkpoints_roundtrip(tmp_path, rng):
    exe = mlp().compile(backend="cpu")
    w = rng.standard_normal((8, 4)).astype(np.float32)
    exe.set_params({"w": w, "b": np.ones(4, np.float32)})
    path = tmp_path / "ckpt.safetensors"
    exe.save_params(path, {"step": "7"})
    assert path.exists()
    other = mlp().compile(backend="cpu")
    other.load_params(path)
    np.testing.assert_array_equal(other.read_param("w"), w)
    g = rlx.Graph()
    g.output("y", g.input("x", "f32", (2,)) + g.param("extra", "f32", (2,)))
    third = g.compile(backend="cpu")
    with pytest.raises(rlx.NotFoundError) as e:
        third.load_params(path)
    assert "extra" in str(e.value)
    third.load_params(path, allow_missing=True)


def test_numerics_check_names_the_node(rng):
    g = rlx.Graph()
    x = g.input("x", "f32", (4,))
    g.output("y", rlx.log(x).set_name("the_log") * 2.0)
    exe = g.compile(backend="cpu", check_numerics=True)
    messages = []
    rlx.set_log_callback(lambda level, msg: messages.append((level, msg)), "warn")
    try:
        exe.run(x=np.array([1, 2, -1, 4], np.float32))
    finally:
        rlx.set_log_callback(None)
    r = exe.numerics()
    assert r["found"] and r["name"] == "the_log" and r["element"] == 2
    assert any("the_log" in m for _, m in messages)


def test_trace_file_is_written(tmp_path, rng):
    trace = tmp_path / "trace.json"
    exe = mlp().compile(backend="cpu", trace_path=trace)
    exe.set_params({"w": np.zeros((8, 4), np.float32), "b": np.zeros(4, np.float32)})
    exe.run(x=np.zeros((1, 8), np.float32))
    exe.close()
    assert trace.exists() and trace.read_text().lstrip().startswith("[")


def test_compile_options_validate():
    with pytest.raises(ValueError):
        rlx.compile_options(backend="tpu")
    with pytest.raises(ValueError):
        rlx.compile_options(precision="f8")
    with pytest.raises(rlx.InvalidArgumentError) as e:
        mlp().compile(threads=5000)
    assert "threads" in str(e.value)
    o = rlx.compile_options(backend="cpu", device="llvmpipe", precision="fast", poison=True, exact_quant=True)
    assert o.backend == rlx._api.RLX_BACKEND_CPU and o.device_name == b"llvmpipe" and o.poison == 1


def test_devices_and_version():
    devs = rlx.devices()
    assert devs[0].kind == "cpu" and devs[0].backend == "cpu" and devs[0].usable
    assert len(devs) == 1 + max(0, rlx.vulkan_device_count())
    for d in devs[1:]:
        assert d.backend == "vulkan"
        assert d.name in rlx.vulkan_device_describe(d.backend_index)
        assert repr(d)
    with pytest.raises(rlx.RlxError):
        rlx.vulkan_device_describe(99)
    assert rlx.version() == rlx.__version__ and rlx.version().count(".") == 2
    assert os.path.exists(rlx.library_path)


@pytest.mark.skipif(not vulkan_available(), reason="no usable Vulkan device")
def test_vulkan_matches_cpu(rng):
    g = rlx.Graph()
    x = g.input("x", "f32", (4, 32))
    w = g.param("w", "f32", (32, 16))
    g.output("y", rlx.softmax(rlx.silu(x @ w) * 0.5, -1))
    w_ = rng.standard_normal((32, 16)).astype(np.float32)
    x_ = rng.standard_normal((4, 32)).astype(np.float32)
    outs = []
    for backend in ("cpu", "vulkan"):
        exe = g.compile(backend=backend, device=[d for d in rlx.devices() if d.backend == "vulkan"][0].backend_index
                        if backend == "vulkan" else None)
        assert exe.stats()["backend"] in (backend, "")
        exe.set_param("w", w_)
        outs.append(exe.run(x=x_)["y"])
        if backend == "vulkan":
            assert exe.stats()["backend"] == "vulkan"
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-4, atol=1e-6)


def test_npy_files_roundtrip(tmp_path, rng):
    for dt in (np.float32, np.float16, np.float64, np.int32, np.int64, np.uint8, np.bool_, np.int8):
        a = (rng.standard_normal((3, 2)) * 4).astype(dt)
        p = tmp_path / ("a_%s.npy" % np.dtype(dt).name)
        rlx.npy_save(p, a)
        np.testing.assert_array_equal(np.load(p), a)
        np.testing.assert_array_equal(rlx.npy_load(p), a)
        np.testing.assert_array_equal(rlx.npy_loads(p.read_bytes()), a)
    with pytest.raises(rlx.FormatError):
        rlx.npy_loads(b"not an npy file at all")
    with pytest.raises(rlx.IoError):
        rlx.npy_load(tmp_path / "missing.npy")


def test_public_types_and_tables(rng):
    g = rlx.Graph()
    x = g.input("x", "f32", (1, 2, 4, 4))
    g.output("p", rlx.permute(rlx.pool(x, "max", 2), 0, 2, 3, 1))
    exe = g.compile(backend="cpu")
    assert isinstance(exe, rlx.Exec) and all(isinstance(t, rlx.TensorInfo) for t in exe.outputs)
    assert exe.outputs[0].shape == (1, 2, 2, 2) and "TensorInfo" in repr(exe.outputs[0])
    a = rng.standard_normal((1, 2, 4, 4)).astype(np.float32)
    ref = a.reshape(1, 2, 2, 2, 2, 2).max((3, 5)).transpose(0, 2, 3, 1)
    np.testing.assert_array_equal(exe.run(x=a)["p"], ref)
    assert all(isinstance(d, rlx.Device) for d in rlx.devices())
    assert rlx.DTYPES[:3] == ["f32", "f16", "bf16"] and len(rlx.DTYPES) == rlx._api.RLX_DTYPE_COUNT
    with pytest.raises(ValueError):
        rlx.pool(x, "median", 2)
