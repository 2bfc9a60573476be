"""The model front ends from Python: a GGUF Llama (tokenizer, eval,
streaming generation, against the CLI), a BERT folder (against the float64
reference of tests/ref/encoder_ref.py) and an ONNX export (against PyTorch)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import rlx

from conftest import ROOT, cli_path


def test_gguf_model_info_tokenizer_eval(tiny_gguf):
    with rlx.Model(tiny_gguf, backend="cpu", threads=2) as m:
        info = m.info
        assert info["arch"] == "llama" and info["name"] == "rlx-py-tiny" and info["n_layer"] == 2
        assert info["bos"] == 1 and info["eos"] == 2 and info["backend"] == "cpu"
        ids = m.tokenize("the cat said")
        assert ids[0] == 1 and m.detokenize(ids) == "the cat said"
        assert m.tokenize("the", add_special=False)[0] != 1
        logits = m.eval(ids)
        assert logits.shape == (info["n_vocab"],) and logits.dtype == np.float32 and np.isfinite(logits).all()
        # the cache: evaluating the last token again after a reset of the prefix gives the same logits
        m.reset()
        m.eval(ids[:-1])
        np.testing.assert_allclose(m.eval(ids[-1:]), logits, rtol=1e-4, atol=1e-5)
        assert "rms" in m.report() or "matmul" in m.report()
        with pytest.raises(rlx.InvalidArgumentError) as e:
            m.eval([5] * 200)   # past n_ctx
        assert "context" in str(e.value)


def test_generate_streams_and_matches_the_cli(tiny_gguf):
    m = rlx.Model(tiny_gguf, backend="cpu", threads=2)
    gen = m.generate("And God said", max_tokens=12, temperature=0)
    assert isinstance(gen, rlx.Generation)
    pieces = list(gen)
    assert len(pieces) >= 1 and gen.stats["generated_tokens"] == 12 and gen.stats["prompt_tokens"] > 1
    text = "".join(pieces)
    assert m.complete("And God said", 12, temperature=0) == text
    cli = cli_path()
    if cli:
        r = subprocess.run([cli, "generate", "-m", tiny_gguf, "-p", "And God said", "-n", "12", "--temp", "0",
                            "--device", "cpu"], capture_output=True, text=True, errors="replace")
        assert r.returncode == 0, r.stderr
        assert text in r.stdout
    # leaving early stops the worker; the model is usable at once
    g2 = m.generate("the", max_tokens=100, seed=3)
    next(g2)
    g2.close()
    assert m.complete("the", 3, seed=3)
    # two generations at once are refused, with a message
    g3 = m.generate("the", max_tokens=50)
    with pytest.raises(rlx.InvalidArgumentError):
        m.generate("the")
    g3.close()
    with pytest.raises(rlx.InvalidArgumentError) as e:
        list(m.generate("the", 4, top_p=-1.0))
    assert "top_p" in str(e.value)
    m.close()


def test_encoder_matches_the_float64_reference(tiny_bert, tmp_path):
    e = rlx.Encoder(tiny_bert, pooling="mean", backend="cpu")
    info = e.info
    assert info["model_type"] == "bert" and info["hidden"] == 32 and info["has_tokenizer"] == 1
    assert e.labels == []
    ids, types = e.tokenize("the cats sat on the mat")
    assert ids[0] == 2 and ids[-1] == 3 and types == [0] * len(ids)
    ids2, types2 = e.tokenize("hello", "world")
    assert 1 in types2
    B, S = 2, len(ids)
    batch = np.array([ids, ids[:3] + [0] * (S - 3)], np.int32)
    mask = (np.arange(S)[None, :] < np.array([[S], [3]])).astype(np.int32)
    out = e.run_ids(batch, None, mask, outputs=("hidden", "embedding", "pooler"))
    raw = tmp_path / "ids.bin"
    np.stack([batch, np.zeros_like(batch), mask]).astype(np.int32).tofile(raw)
    ref_out = tmp_path / "ref.bin"
    subprocess.run([sys.executable, os.path.join(ROOT, "tests", "ref", "encoder_ref.py"), tiny_bert, str(raw),
                    str(ref_out), str(B), str(S)], check=True)
    ref = np.fromfile(ref_out, np.float64)
    H = 32
    hidden = ref[:B * S * H].reshape(B, S, H)
    mean = ref[B * S * H:B * S * H + B * H].reshape(B, H)
    np.testing.assert_allclose(out["hidden"][0], hidden[0], rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(out["hidden"][1, :3], hidden[1, :3], rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(out["embedding"], mean, rtol=1e-3, atol=1e-4)
    emb = e.embed(["the cats sat on the mat", "the dog ran"])
    assert emb.shape == (2, H)
    np.testing.assert_allclose(emb[0], out["embedding"][0], rtol=1e-4, atol=1e-5)
    with pytest.raises(TypeError):
        e.embed("one string")
    with pytest.raises(ValueError):
        e.run_ids(batch, outputs=("nope",))
    with pytest.raises(ValueError):
        e.run_ids(batch, mask=mask[:, :2])
    with pytest.raises(ValueError):
        e.run_ids(batch[0])
    with pytest.raises(rlx.UnsupportedError):
        e.classify(["no head"])
    e.close()
    n = rlx.Encoder(tiny_bert, pooling="cls", normalize=True, max_length=8, backend="cpu")
    v = n.embed(["the cat"])
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    with pytest.raises(ValueError):
        rlx.Encoder(tiny_bert, pooling="median")


def test_onnx_load_and_run_matches_torch(tmp_path, rng):
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
            self.fc = torch.nn.Linear(4 * 4 * 4, 5)

        def forward(self, x):
            return torch.softmax(self.fc(torch.relu(self.conv(x)).flatten(1)), -1)
    torch.manual_seed(0)
    net = Net().eval()
    x = torch.tensor(rng.standard_normal((2, 3, 4, 4)).astype(np.float32))
    path = str(tmp_path / "net.onnx")
    torch.onnx.export(net, (x,), path, input_names=["x"], output_names=["probs"], opset_version=13,
                      dynamic_axes={"x": {0: "batch"}, "probs": {0: "batch"}})
    with rlx.Onnx(path) as model:
        assert isinstance(model.graph, rlx.Graph) and len(model.graph) > 3
        exe = model.compile(backend="cpu")
        assert [i.name for i in exe.inputs] == ["x"]
        for b in (2, 3):
            xb = torch.tensor(rng.standard_normal((b, 3, 4, 4)).astype(np.float32))
            got = exe.run(x=xb.numpy())["probs"]
            np.testing.assert_allclose(got, net(xb).detach().numpy(), rtol=1e-4, atol=1e-6)
        # the graph extends: a new output over the last node, then set_params
        g = model.graph
        loss = rlx.reduce_sum(rlx.Node(g, len(g) - 1))
        g.output("loss", loss)
        grad_exe = g.compile(backend="cpu")
        model.set_params(grad_exe)
        assert grad_exe.run(x=x.numpy())["loss"].shape == ()
    with pytest.raises(ValueError):
        model.graph
