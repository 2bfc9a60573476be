"""The README's Python example runs as written (like its C examples)."""
import os
import re
import subprocess
import sys

from conftest import ROOT


def test_readme_python_example_runs():
    text = open(os.path.join(ROOT, "README.md")).read()
    m = re.search(r"<!-- python-example:begin -->\s*```python\n(.*?)```\s*<!-- python-example:end -->", text, re.S)
    assert m, "README.md has no python-example block"
    r = subprocess.run([sys.executable, "-c", m.group(1)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "RLX_STATUS_SHAPE" in r.stdout and "inner dims differ" in r.stdout
