"""Every rlx error raises an exception with the status and rlx's message."""
import numpy as np
import pytest

import rlx


def test_bad_shape_raises_shape_error_with_the_message():
    g = rlx.Graph()
    a = g.input("a", "f32", (4, 64))
    b = g.input("b", "f32", (32, 64))
    with pytest.raises(rlx.ShapeError) as e:
        a @ b
    assert e.value.status == 2 and e.value.status_name == "RLX_STATUS_SHAPE"
    assert "inner dims differ" in e.value.message and "[4,64]" in e.value.message
    assert isinstance(e.value, ValueError) and isinstance(e.value, rlx.RlxError)
    # the graph keeps its first error: compiling it says so
    assert g.status() == 2
    with pytest.raises(rlx.ShapeError):
        g.compile()


def test_run_errors_name_the_input():
    g = rlx.Graph()
    g.output("y", g.input("x", "f32", (2, 3)) * 2.0)
    exe = g.compile(backend="cpu")
    with pytest.raises(rlx.ShapeError) as e:
        exe.run(x=np.zeros((2, 4), np.float32))
    assert "'x'" in str(e.value) and "dim 1" in str(e.value)
    with pytest.raises(rlx.ShapeError) as e:
        exe.run(x=np.zeros((2, 3), np.float64))   # no silent cast
    assert "f64" in str(e.value)
    with pytest.raises(rlx.RlxError) as e:
        exe.run()
    assert "x" in str(e.value)
    with pytest.raises(rlx.NotFoundError):
        exe.run(x=np.zeros((2, 3), np.float32), nope=np.zeros(1, np.float32))
    with pytest.raises(rlx.NotFoundError):
        exe.set_param("missing", np.zeros(1, np.float32))
    with pytest.raises(rlx.NotFoundError):
        exe.output("missing")


def test_status_classes_and_names():
    classes = [rlx.InvalidArgumentError, rlx.ShapeError, rlx.UnsupportedError, rlx.OutOfMemoryError, rlx.DeviceError,
               rlx.IoError, rlx.FormatError, rlx.NotFoundError, rlx.InternalError]
    for i, c in enumerate(classes, start=1):
        assert c.status == i and c.status_name == rlx.status_name(i)
        err = rlx.errors.error_for_status(i, "what went wrong")
        assert type(err) is c and str(err) == "%s: what went wrong" % c.status_name
    other = rlx.errors.error_for_status(42, "odd", name=rlx.status_name(42))
    assert type(other) is rlx.RlxError and "RLX_STATUS_UNKNOWN" in str(other)


def test_file_errors():
    with pytest.raises(rlx.IoError) as e:
        rlx.Model("/nonexistent/model.gguf")
    assert "/nonexistent/model.gguf" in str(e.value)
    with pytest.raises(rlx.RlxError):
        rlx.Encoder("/nonexistent-folder")
    with pytest.raises(rlx.IoError):
        rlx.Onnx("/nonexistent.onnx")


def test_bad_files_are_format_errors(tmp_path):
    p = tmp_path / "bad.gguf"
    p.write_bytes(b"GGUF" + b"\xff" * 40)
    with pytest.raises(rlx.FormatError):
        rlx.Model(str(p))
    q = tmp_path / "bad.onnx"
    q.write_bytes(b"\x0a\xff\xff\xff\xff\x0f")
    with pytest.raises(rlx.FormatError):
        rlx.Onnx(str(q))


def test_bad_arguments():
    g = rlx.Graph()
    x = g.input("x", "f32", (2, 3))
    with pytest.raises(rlx.InvalidArgumentError):
        g.input("x", "f32", (2,))   # duplicate name
    with pytest.raises(ValueError):
        rlx.relu(x).set_name("")
    with pytest.raises(ValueError):
        rlx.matmul_bias_act(x, x, True, None, "swish")   # not an activation
    with pytest.raises(TypeError):
        rlx.relu("x")
    with pytest.raises(ValueError):
        rlx.Graph().gradients(x, [x])   # a node of another graph
    with pytest.raises(rlx.InvalidArgumentError):
        g.gradients(rlx.relu(x), [x])   # the loss must have one element
    assert "gradients" in rlx.last_error()
