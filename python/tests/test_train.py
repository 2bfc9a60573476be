"""Training from Python: gradients against finite differences, optimizer
steps against torch.optim, checkpoints of weights and optimizer state."""
import numpy as np
import pytest

import rlx


def loss_graph():
    g = rlx.Graph()
    x = g.input("x", "f32", (6, 4))
    y = g.input("y", "i32", (6,))
    w = g.param("w", "f32", (4, 3))
    b = g.param("b", "f32", (3,))
    loss = rlx.softmax_cross_entropy(rlx.tanh(x @ w) + b, y)
    return g, x, y, w, b, loss


def test_gradients_match_finite_differences(rng):
    g, x, y, w, b, loss = loss_graph()
    gw, gb = g.gradients(loss, [w, b])
    assert gw.shape == (4, 3) and gb.shape == (3,)
    g.output("loss", loss)
    g.output("gw", gw)
    g.output("gb", gb)
    exe = g.compile(backend="cpu")
    W = rng.standard_normal((4, 3)).astype(np.float32)
    B = rng.standard_normal(3).astype(np.float32)
    X = rng.standard_normal((6, 4)).astype(np.float32)
    Y = rng.integers(0, 3, 6).astype(np.int32)

    def f(Wv, Bv):   # float64 reference of the loss
        z = np.tanh(X.astype(np.float64) @ Wv) + Bv
        z = z - z.max(1, keepdims=True)
        return float(np.mean(np.log(np.exp(z).sum(1)) - z[np.arange(6), Y]))
    exe.set_params({"w": W, "b": B})
    out = exe.run(x=X, y=Y)
    assert abs(float(out["loss"]) - f(W.astype(np.float64), B.astype(np.float64))) < 1e-5
    h = 1e-5
    num = np.zeros((4, 3))
    for i in range(4):
        for j in range(3):
            d = np.zeros((4, 3))
            d[i, j] = h
            num[i, j] = (f(W + d, B) - f(W - d, B)) / (2 * h)
    np.testing.assert_allclose(out["gw"], num, rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("kind", ["sgd", "adamw"])
def test_optimizer_steps_match_torch(kind, rng, tmp_path):
    torch = pytest.importorskip("torch")
    g, x, y, w, b, loss = loss_graph()
    grads = g.gradients(loss, [w, b])
    lr = g.input("lr", "f32", (1,))
    opts = {"momentum": 0.9} if kind == "sgd" else {"weight_decay": 0.01}
    norm = g.optimizer_step([w, b], grads, lr, kind, **opts)
    g.output("loss", loss)
    g.output("norm", norm)
    exe = g.compile(backend="cpu")
    W = rng.standard_normal((4, 3)).astype(np.float32)
    B = rng.standard_normal(3).astype(np.float32)
    exe.set_params({"w": W, "b": B})
    tw = torch.tensor(W, requires_grad=True)
    tb = torch.tensor(B, requires_grad=True)
    opt = torch.optim.SGD([tw, tb], lr=0.1, momentum=0.9) if kind == "sgd" else \
        torch.optim.AdamW([tw, tb], lr=0.1, weight_decay=0.01)
    for step in range(4):
        X = rng.standard_normal((6, 4)).astype(np.float32)
        Y = rng.integers(0, 3, 6).astype(np.int32)
        out = exe.run(x=X, y=Y, lr=np.array([0.1], np.float32))
        opt.zero_grad()
        tl = torch.nn.functional.cross_entropy(torch.tanh(torch.tensor(X) @ tw) + tb, torch.tensor(Y, dtype=torch.long))
        tl.backward()
        gn = torch.sqrt(tw.grad.pow(2).sum() + tb.grad.pow(2).sum()).item()
        opt.step()
        assert abs(float(out["loss"]) - tl.item()) < 1e-4
        assert abs(float(out["norm"]) - gn) < 1e-4
    np.testing.assert_allclose(exe.read_param("w"), tw.detach().numpy(), rtol=1e-4, atol=1e-5)
    # a checkpoint holds weights and optimizer state: a fresh exec resumes exactly
    ckpt = tmp_path / "train.safetensors"
    exe.save_params(ckpt, {"kind": kind})
    names = {p.name for p in exe.params}
    assert ("w.momentum" in names) if kind == "sgd" else ({"w.adam_m", "w.adam_v", "optimizer.step"} <= names)
    resumed = g.compile(backend="cpu")
    resumed.load_params(ckpt)
    X = rng.standard_normal((6, 4)).astype(np.float32)
    Y = rng.integers(0, 3, 6).astype(np.int32)
    feed = dict(x=X, y=Y, lr=np.array([0.1], np.float32))
    a, c = exe.run(feed), resumed.run(feed)
    np.testing.assert_array_equal(a["loss"], c["loss"])
    np.testing.assert_array_equal(exe.read_param("w"), resumed.read_param("w"))


def test_loss_scaling_and_assign(rng):
    g, x, y, w, b, loss = loss_graph()
    scaled = rlx.scale_loss(loss, "adamw", loss_scale=1024.0)
    assert scaled.id != loss.id
    grads = g.gradients(scaled, [w, b])
    g.optimizer_step([w, b], grads, 0.01, "adamw", loss_scale=1024.0)
    g.output("loss", loss)
    exe = g.compile(backend="cpu")
    exe.set_params({"w": np.ones((4, 3), np.float32), "b": np.zeros(3, np.float32)})
    exe.run(x=rng.standard_normal((6, 4)).astype(np.float32), y=np.zeros(6, np.int32))
    assert not np.array_equal(exe.read_param("w"), np.ones((4, 3), np.float32))
    with pytest.raises(TypeError):
        g.optimizer_step([w], [grads[0]], 0.1, "sgd", momentun=0.9)
    with pytest.raises(ValueError):
        g.optimizer_step([w], [], 0.1)
    # assign: a counter param that each run increments
    g2 = rlx.Graph()
    c = g2.param("count", "f32", (1,))
    rlx.assign(c, c + 1.0)
    g2.output("seen", g2.input("x", "f32", (1,)) * 1.0)
    e2 = g2.compile(backend="cpu")
    for _ in range(3):
        e2.run(x=np.zeros(1, np.float32))
    assert e2.read_param("count")[0] == 3.0
