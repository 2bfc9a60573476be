"""Graph building from Python: every generated op against a float64 numpy
reference on random inputs, operators, slicing, symbols, dtypes both ways."""
import math

import numpy as np
import pytest

import rlx


def run1(build, inputs, **opts):
    """Builds out = build(g, *nodes) over f32 inputs, runs it on the CPU, returns the output."""
    g = rlx.Graph()
    nodes = [g.input("x%d" % i, rlx.dtypes.name(a.dtype), a.shape) for i, a in enumerate(inputs)]
    g.output("out", build(g, *nodes))
    exe = g.compile(backend=opts.get("backend", "cpu"), threads=1)
    return exe.run({"x%d" % i: a for i, a in enumerate(inputs)})["out"]


def erf(x):
    return np.vectorize(math.erf)(x)


UNARY = {
    "relu": lambda x: np.maximum(x, 0), "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "tanh": np.tanh, "exp": np.exp,
    "log": lambda x: np.log(np.abs(x) + 0.5), "sqrt": lambda x: np.sqrt(np.abs(x)),
    "rsqrt": lambda x: 1 / np.sqrt(np.abs(x) + 0.5), "neg": np.negative, "abs": np.abs,
    "gelu": lambda x: 0.5 * x * (1 + erf(x / np.sqrt(2))),
    "gelu_tanh": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
    "silu": lambda x: x / (1 + np.exp(-x)), "round": np.round, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "atan": np.arctan, "erf": erf,
}
# inputs made positive where the op's domain needs it (the reference above uses the same transform)
PREP = {"log": lambda x: np.abs(x) + 0.5, "sqrt": np.abs, "rsqrt": lambda x: np.abs(x) + 0.5}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_ops_match_float64(op, rng):
    shape = tuple(rng.integers(1, 6, size=rng.integers(1, 4)))
    x = rng.uniform(-2, 2, shape).astype(np.float32)
    x = PREP.get(op, lambda v: v)(x).astype(np.float32)
    got = run1(lambda g, a: getattr(rlx, op)(a), [x])
    ref = {"log": np.log, "sqrt": np.sqrt, "rsqrt": lambda v: 1 / np.sqrt(v)}.get(op, UNARY[op])(x.astype(np.float64))
    np.testing.assert_allclose(got, ref, rtol=2e-5, atol=2e-5)


BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "max": np.maximum,
          "min": np.minimum, "pow": lambda a, b: np.power(np.abs(a) + 0.5, b)}


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_ops_broadcast_like_numpy(op, rng):
    a = rng.uniform(-2, 2, (3, 1, 4)).astype(np.float32)
    b = rng.uniform(0.5, 2, (5, 1)).astype(np.float32)
    if op == "pow":
        a = (np.abs(a) + 0.5).astype(np.float32)
    got = run1(lambda g, x, y: getattr(rlx, op)(x, y), [a, b])
    ref = (np.power if op == "pow" else BINARY[op])(a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(got, ref, rtol=2e-5, atol=1e-5)


def test_operators_and_python_numbers(rng):
    a = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal((3, 5)).astype(np.float32)
    got = run1(lambda g, x, y: -(2.0 * (x @ y) - 1.0) / 4.0 + abs(x @ y) ** 2.0, [a, b])
    p = a.astype(np.float64) @ b
    np.testing.assert_allclose(got, -(2 * p - 1) / 4 + np.abs(p) ** 2, rtol=1e-5, atol=1e-5)
    got = run1(lambda g, x: rlx.where(x > 0.0, x, 0.5 * x), [a])
    np.testing.assert_allclose(got, np.where(a > 0, a, 0.5 * a), rtol=1e-6)
    for op, ref in (("lt", np.less), ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal),
                    ("eq", np.equal), ("ne", np.not_equal)):
        got = run1(lambda g, x, y: getattr(rlx, op)(x, y), [a, np.zeros_like(a)])
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, ref(a, 0))


def test_reductions_softmax_norms(rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(run1(lambda g, a: rlx.reduce_sum(a, axis=(0, 2)), [x]), x64.sum((0, 2)), rtol=1e-5)
    np.testing.assert_allclose(run1(lambda g, a: a.reduce_mean(-1, keepdim=True), [x]), x64.mean(-1, keepdims=True),
                               rtol=1e-5)
    np.testing.assert_allclose(run1(lambda g, a: rlx.reduce_max(a), [x]), x64.max(), rtol=1e-6)
    np.testing.assert_allclose(run1(lambda g, a: rlx.reduce_min(a, 1), [x]), x64.min(1), rtol=1e-6)
    np.testing.assert_allclose(run1(lambda g, a: rlx.reduce_prod(a, 2), [x]), x64.prod(2), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(run1(lambda g, a: rlx.argmax(a, -1), [x]), x.argmax(-1))
    np.testing.assert_array_equal(run1(lambda g, a: rlx.argmin(a, 1, keepdim=True), [x]), x.argmin(1)[:, None])
    e = np.exp(x64 - x64.max(-1, keepdims=True))
    np.testing.assert_allclose(run1(lambda g, a: rlx.softmax(a, -1), [x]), e / e.sum(-1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(run1(lambda g, a: rlx.log_softmax(a, -1), [x]),
                               np.log(e / e.sum(-1, keepdims=True)), rtol=1e-5, atol=1e-6)
    gam = rng.standard_normal(4).astype(np.float32)
    bet = rng.standard_normal(4).astype(np.float32)
    m, v = x64.mean(-1, keepdims=True), x64.var(-1, keepdims=True)
    np.testing.assert_allclose(run1(lambda g, a, gg, bb: rlx.layer_norm(a, gg, bb, 1e-5), [x, gam, bet]),
                               (x64 - m) / np.sqrt(v + 1e-5) * gam + bet, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(run1(lambda g, a, gg: rlx.rms_norm(a, gg), [x, gam]),
                               x64 / np.sqrt((x64 ** 2).mean(-1, keepdims=True) + 1e-5) * gam, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(run1(lambda g, a: rlx.cumsum(a, 1), [x]), np.cumsum(x64, 1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(run1(lambda g, a: rlx.clamp(a, -0.5, 0.5), [x]), np.clip(x, -0.5, 0.5))
    np.testing.assert_allclose(run1(lambda g, a, b, c: rlx.fma(a, b, c), [x, x, x]), x64 * x64 + x64, rtol=1e-5)


def test_movement_ops(rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_array_equal(run1(lambda g, a: a.reshape(6, -1), [x]), x.reshape(6, 4))
    np.testing.assert_array_equal(run1(lambda g, a: rlx.transpose(a, 2, 0, 1), [x]), x.transpose(2, 0, 1))
    np.testing.assert_array_equal(run1(lambda g, a: a.T, [x]), x.swapaxes(-1, -2))
    np.testing.assert_array_equal(run1(lambda g, a: rlx.concat([a, a * 2.0], axis=1), [x]),
                                  np.concatenate([x, 2 * x], 1))
    np.testing.assert_array_equal(run1(lambda g, a: rlx.expand(a[:, :1], 2, 5, 4), [x]),
                                  np.broadcast_to(x[:, :1], (2, 5, 4)))
    np.testing.assert_array_equal(run1(lambda g, a: rlx.flip(a, axis=(0, 2)), [x]), x[::-1, :, ::-1])
    np.testing.assert_array_equal(run1(lambda g, a: rlx.narrow(a, 2, 1, 2), [x]), x[:, :, 1:3])
    np.testing.assert_array_equal(run1(lambda g, a: rlx.slice(a, 1, 0, 3, 2), [x]), x[:, 0:3:2])

    def topk(g, a):
        values, idx = rlx.topk(a, 2)
        g.output("idx", idx)
        return values
    np.testing.assert_array_equal(run1(topk, [x]), -np.sort(-x, -1)[..., :2])
    table = rng.standard_normal((10, 3)).astype(np.float32)
    ids = np.array([[1, 7], [7, 0]], np.int32)
    np.testing.assert_array_equal(run1(lambda g, t, d: rlx.gather_rows(t, d), [table, ids]), table[ids])
    idx = rng.integers(0, 4, (2, 3, 4)).astype(np.int32)
    np.testing.assert_array_equal(run1(lambda g, a, d: rlx.gather(a, d, 2), [x, idx]),
                                  np.take_along_axis(x, idx, 2))
    base = np.zeros((10, 3), np.float32)
    rows = rng.standard_normal((2, 2, 3)).astype(np.float32)
    ref = base.copy()
    np.add.at(ref, ids, rows)
    np.testing.assert_allclose(run1(lambda g, b, d, r: rlx.scatter_add_rows(b, d, r), [base, ids, rows]), ref,
                               rtol=1e-6)
    np.testing.assert_array_equal(run1(lambda g, a: rlx.cast(a, "i32"), [x * 10]), (x * 10).astype(np.int32))


@pytest.mark.parametrize("index", [
    (slice(1, 3),), (slice(None), slice(None, None, 2)), (Ellipsis, -1), (None, 0), (1, slice(None), 2),
    (slice(None, None, -1),), (Ellipsis, slice(3, 0, -2)), (slice(-2, None), None, Ellipsis)])
def test_slicing_matches_numpy(index, rng):
    x = rng.standard_normal((4, 5, 6)).astype(np.float32)
    np.testing.assert_array_equal(run1(lambda g, a: a[index], [x]), x[index])


def test_slicing_errors_are_index_errors():
    g = rlx.Graph()
    x = g.input("x", "f32", (2, 3))
    with pytest.raises(IndexError):
        x[5]
    with pytest.raises(IndexError):
        x[0, 0, 0]
    with pytest.raises(IndexError):
        x[..., ...]


def test_conv_pool_resize_match_torch(rng):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = rng.standard_normal((2, 3, 9, 8)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    got = run1(lambda g, a, ww, bb: rlx.conv(a, ww, bb, stride=2, padding=1, act="relu"), [x, w, b])
    ref = F.relu(F.conv2d(torch.tensor(x, dtype=torch.float64), torch.tensor(w, dtype=torch.float64),
                          torch.tensor(b, dtype=torch.float64), stride=2, padding=1)).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)
    wt = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    got = run1(lambda g, a, ww: rlx.conv_transpose(a, ww, stride=2, padding=1, output_padding=1), [x, wt])
    ref = F.conv_transpose2d(torch.tensor(x, dtype=torch.float64), torch.tensor(wt, dtype=torch.float64), stride=2,
                             padding=1, output_padding=1).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)
    t = torch.tensor(x, dtype=torch.float64)
    np.testing.assert_allclose(run1(lambda g, a: rlx.max_pool(a, 3, 2, 1), [x]), F.max_pool2d(t, 3, 2, 1).numpy(),
                               rtol=1e-6)
    np.testing.assert_allclose(run1(lambda g, a: rlx.avg_pool(a, 2), [x]), F.avg_pool2d(t, 2).numpy(), rtol=1e-5)
    np.testing.assert_allclose(run1(lambda g, a: rlx.adaptive_pool(a, "avg", (3, 2)), [x]),
                               F.adaptive_avg_pool2d(t, (3, 2)).numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(run1(lambda g, a: rlx.resize(a, sizes=(18, 16), mode="linear"), [x]),
                               F.interpolate(t, size=(18, 16), mode="bilinear", align_corners=False).numpy(),
                               rtol=1e-4, atol=1e-5)
    gam = rng.standard_normal(3).astype(np.float32)
    bet = rng.standard_normal(3).astype(np.float32)
    np.testing.assert_allclose(run1(lambda g, a, gg, bb: rlx.group_norm(a, gg, bb, 3, 1e-5), [x, gam, bet]),
                               F.group_norm(t, 3, torch.tensor(gam, dtype=torch.float64),
                                            torch.tensor(bet, dtype=torch.float64)).numpy(), rtol=1e-4, atol=1e-5)


def test_attention_and_rope_match_float64(rng):
    q = rng.standard_normal((1, 2, 3, 8)).astype(np.float32)
    k = rng.standard_normal((1, 2, 5, 8)).astype(np.float32)
    v = rng.standard_normal((1, 2, 5, 8)).astype(np.float32)
    got = run1(lambda g, a, b, c: rlx.attention(a, b, c, "causal"), [q, k, v])
    s = q.astype(np.float64) @ k.transpose(0, 1, 3, 2) / np.sqrt(8)
    pos = 5 - 3 + np.arange(3)[:, None]
    s = np.where(np.arange(5)[None, :] <= pos, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(got, (p / p.sum(-1, keepdims=True)) @ v, rtol=1e-4, atol=1e-5)
    got = run1(lambda g, a: rlx.rope(a, None, "neox", 10000.0), [q])
    half = 4
    ang = np.arange(3)[:, None] * 10000.0 ** (-2 * np.arange(half) / 8)
    x1, x2 = q[..., :half].astype(np.float64), q[..., half:].astype(np.float64)
    ref = np.concatenate([x1 * np.cos(ang) - x2 * np.sin(ang), x1 * np.sin(ang) + x2 * np.cos(ang)], -1)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


def test_symbolic_batch_runs_at_several_sizes(rng):
    g = rlx.Graph()
    x = g.input("x", "f32", ("batch", 4))
    assert x.shape == ("batch", 4)
    g.output("y", (x * 2.0)[..., 1:])
    exe = g.compile(backend="cpu")
    assert exe.inputs[0].shape == (None, 4)
    for b in (1, 3, 7):
        a = rng.standard_normal((b, 4)).astype(np.float32)
        np.testing.assert_allclose(exe.run(x=a)["y"], 2 * a[:, 1:])


def test_dtype_mapping_both_ways(rng):
    for np_dt, name in ((np.float32, "f32"), (np.float16, "f16"), (np.float64, "f64"), (np.int32, "i32"),
                        (np.int64, "i64"), (np.uint8, "u8"), (np.bool_, "bool"), (np.int8, "i8")):
        assert rlx.dtypes.name(np_dt) == name and rlx.dtypes.name(np.dtype(np_dt)) == name
        assert rlx.dtypes.to_numpy(name) == np.dtype(np_dt)
        assert rlx.dtype_name(name) == name
        a = (rng.standard_normal((2, 3)) * 5).astype(np_dt)
        g = rlx.Graph()
        x = g.input("x", name, a.shape)
        assert x.dtype == name
        g.output("y", rlx.reshape(x, 3, 2))
        out = g.compile(backend="cpu").run(x=a)["y"]
        assert out.dtype == np.dtype(np_dt)
        np.testing.assert_array_equal(out, a.reshape(3, 2))
    # bf16: float32 in (rounded), float32 out (exact)
    a = np.array([1.0, 1.00390625, 3.14159, -2.5e-3], np.float32)
    g = rlx.Graph()
    g.output("y", g.input("x", "bf16", (4,)) * 1.0)
    out = g.compile(backend="cpu").run(x=a)["y"]
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, a, rtol=4e-3)
    np.testing.assert_array_equal(rlx.dtypes.bf16_to_f32(rlx.dtypes.bf16_bits(out)), out)
    assert rlx.dtypes.name("float32") == "f32" and rlx.dtypes.code("q4_K") == 16
    with pytest.raises(ValueError):
        rlx.dtypes.code(np.complex64)
    with pytest.raises(ValueError):
        rlx.dtypes.code("f33")
    assert rlx.dtype_size("f16") == 2 and rlx.dtype_size("q4_0") == 0
    assert rlx.dtype_is_quantized("q8_0") and not rlx.dtype_is_quantized("f32")
    assert rlx.tensor_bytes("f32", (3, 4)) == 48 and rlx.tensor_bytes("q8_0", (2, 32)) == 68
    assert rlx.tensor_bytes("f32", ()) == 4


def test_constants_scalars_names_dump(rng):
    g = rlx.Graph()
    c = g.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    s = rlx.scalar(g, 2.0)
    y = (c * s).set_name("doubled")
    g.output("y", y)
    assert len(g) >= 3
    assert "doubled" in g.dump()
    assert g.status() == 0
    np.testing.assert_array_equal(g.compile(backend="cpu").run()["y"], 2 * np.arange(6).reshape(2, 3))
    g2 = rlx.Graph()
    lst = rlx.constant(g2, [[1, 2], [3, 4]])
    assert lst.dtype == "i32" and lst.shape == (2, 2)
    assert rlx.input(g2, "i", "f32", (2,)).shape == (2,)
    assert rlx.param(g2, "p", "f32", ()).shape == ()
    with pytest.raises(TypeError):
        bool(lst)
    with pytest.raises(ValueError):
        rlx.add(lst, g.input("other", "i32", (2, 2)))   # nodes of two graphs


def test_matmul_variants(rng):
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    w = rng.standard_normal((5, 4)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    ref = a.astype(np.float64) @ w.T.astype(np.float64) + b
    np.testing.assert_allclose(run1(lambda g, x, ww: rlx.matmul(x, ww, transpose_b=True), [a, w]), ref - b,
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(run1(lambda g, x, ww, bb: rlx.matmul_bias_act(x, ww, True, bb, "gelu"), [a, w, b]),
                               0.5 * ref * (1 + erf(ref / np.sqrt(2))), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(run1(lambda g, x, ww, bb: rlx.matmul_ex(x, ww, rlx._api.RLX_MATMUL_TRANSPOSE_B, bb),
                                    [a, w, b]), ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(run1(lambda g, x, ww: rlx.dequant_matmul(x, ww), [a, w]), ref - b, rtol=1e-5, atol=1e-5)
