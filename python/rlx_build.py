"""rlx_build.py — the PEP 517 build backend of the rlx Python package.

build_wheel runs the repository's `make` for build/librlx.so.0 (one level
up from this folder; make's own setup checks what it needs), copies it
without debug info into the package, and writes the wheel by hand: the
package is pure Python over ctypes, so the wheel is py3-none-<platform>,
one file for every Python 3 version. It needs nothing but the standard
library, so pip installs offline with build isolation on. RLX_MAKE_ARGS adds
arguments to make (say, VULKAN=0 for a CPU-only library).
"""
import base64
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NAME = "rlx"


def _version():
    text = open(os.path.join(ROOT, "include", "rlx.h")).read()
    parts = [re.search(r"#define RLX_VERSION_%s\s+(\d+)" % k, text).group(1) for k in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def _tag():
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "py3-none-%s" % plat


def _build_library():
    jobs = str(os.cpu_count() or 2)
    cmd = ["make", "-C", ROOT, "-j" + jobs, "build/librlx.so.0"] + shlex.split(os.environ.get("RLX_MAKE_ARGS", ""))
    sys.stderr.write("rlx_build: %s\n" % " ".join(cmd))
    r = subprocess.run(cmd, stdout=sys.stderr)
    if r.returncode != 0:
        raise RuntimeError("rlx_build: building librlx failed (%s exited %d); see the make output above"
                           % (" ".join(cmd), r.returncode))
    return os.path.join(ROOT, "build", "librlx.so.0")


def _metadata(version):
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
            "Summary: An embeddable ML compiler and runtime: graphs, models and training on numpy arrays\n"
            "Requires-Python: >=3.9\nRequires-Dist: numpy\n" % (NAME, version))


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arcname, digest, len(data))


def _write_wheel(wheel_directory, files, version):
    tag = _tag()
    dist = "%s-%s.dist-info" % (NAME, version)
    wheel_name = "%s-%s-%s.whl" % (NAME, version, tag)
    meta = {
        dist + "/METADATA": _metadata(version).encode(),
        dist + "/WHEEL": ("Wheel-Version: 1.0\nGenerator: rlx_build\nRoot-Is-Purelib: false\nTag: %s\n" % tag).encode(),
        dist + "/top_level.txt": (NAME + "\n").encode(),
    }
    record = []
    path = os.path.join(wheel_directory, wheel_name)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for arcname, src in files:
            data = open(src, "rb").read()
            info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if arcname.endswith(".so.0") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            record.append(_record_line(arcname, data))
        for arcname, data in meta.items():
            z.writestr(zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0)), data)
            record.append(_record_line(arcname, data))
        record.append(dist + "/RECORD,,")
        z.writestr(zipfile.ZipInfo(dist + "/RECORD", date_time=(2020, 1, 1, 0, 0, 0)), "\n".join(record) + "\n")
    return wheel_name


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    built = _build_library()
    with tempfile.TemporaryDirectory() as tmp:
        so = os.path.join(tmp, "librlx.so.0")
        strip = shutil.which("strip")
        if strip is None or subprocess.run([strip, "--strip-debug", "-o", so, built]).returncode != 0:
            shutil.copyfile(built, so)
        pkg = os.path.join(HERE, NAME)
        files = [("%s/%s" % (NAME, f), os.path.join(pkg, f)) for f in sorted(os.listdir(pkg)) if f.endswith(".py")]
        files.append(("%s/librlx.so.0" % NAME, so))
        return _write_wheel(wheel_directory, files, version)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    version = _version()
    dist = "%s-%s.dist-info" % (NAME, version)
    os.makedirs(os.path.join(metadata_directory, dist), exist_ok=True)
    with open(os.path.join(metadata_directory, dist, "METADATA"), "w") as f:
        f.write(_metadata(version))
    return dist
