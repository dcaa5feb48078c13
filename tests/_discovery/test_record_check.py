"""A pack's RECORD against its files, and the hash cache that keeps that cheap."""

from __future__ import annotations

import base64
import hashlib
import os

from toolreg._discovery.file_hashes import FileHashes
from toolreg._discovery.record_check import read_record, tampered


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def install(site):
    """A site folder with one distribution as pip leaves it."""
    files = {"demo/__init__.py": b"X = 1\n", "demo/tools.py": b"def f(): pass\n"}
    (site / "demo").mkdir()
    (site / "demo" / "__pycache__").mkdir()
    (site / "demo" / "__pycache__" / "tools.cpython-311.pyc").write_bytes(b"\0")
    for path, data in files.items():
        (site / path).write_bytes(data)
    info = site / "demo-1.0.dist-info"
    info.mkdir()
    (info / "INSTALLER").write_text("pip\n")
    (info / "direct_url.json").write_text('{"url": "file:///tmp/a/demo.whl"}')
    rows = [f"{p},{record_hash(d)},{len(d)}" for p, d in files.items()]
    rows += [
        "demo/__pycache__/tools.cpython-311.pyc,,",
        f"demo-1.0.dist-info/INSTALLER,{record_hash(b'pip')},4",
        f"demo-1.0.dist-info/direct_url.json,{record_hash(b'x')},1",
        "demo-1.0.dist-info/RECORD,,",
    ]
    (info / "RECORD").write_text("\n".join(rows) + "\n")
    return str(info)


def test_an_untouched_install_matches_and_reinstalling_from_elsewhere_is_no_change(tmp_path):
    info = install(tmp_path)
    record = read_record(info)
    assert set(record.files) == {"demo/__init__.py", "demo/tools.py"}
    assert tampered(record, FileHashes(use_cache=False)) == []
    before = record.digest
    text = (tmp_path / "demo-1.0.dist-info" / "RECORD").read_text()
    (tmp_path / "demo-1.0.dist-info" / "RECORD").write_text(
        text.replace("direct_url.json," + record_hash(b"x"), "direct_url.json," + record_hash(b"y"))
    )
    assert read_record(info).digest == before


def test_modified_removed_and_added_files_are_each_named(tmp_path):
    info = install(tmp_path)
    record = read_record(info)
    (tmp_path / "demo" / "tools.py").write_bytes(b"import os; os.system('x')\n")
    (tmp_path / "demo" / "__init__.py").unlink()
    (tmp_path / "demo" / "evil.py").write_bytes(b"")
    (tmp_path / "demo" / "__pycache__" / "evil.cpython-311.pyc").write_bytes(b"")
    assert tampered(record, FileHashes(use_cache=False)) == [
        "demo/__init__.py: removed (the RECORD lists it)",
        "demo/evil.py: added (the RECORD does not list it)",
        "demo/tools.py: modified (its content no longer matches its RECORD hash)",
    ]


def test_the_cache_hashes_once_and_sees_an_edit_whose_mtime_was_put_back(tmp_path):
    (tmp_path / "site").mkdir()
    info = install(tmp_path / "site")
    cache = str(tmp_path / "cache" / "hashes.json")
    record = read_record(info)
    first = FileHashes(cache)
    assert tampered(record, first) == [] and first.hashed == 2
    first.save()
    warm = FileHashes(cache)
    assert tampered(record, warm) == [] and warm.hashed == 0
    target = tmp_path / "site" / "demo" / "tools.py"
    st = os.stat(target)
    target.write_bytes(b"def f(): 1\n")  # same size
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # mtime put back
    again = FileHashes(cache)
    assert tampered(record, again) == [
        "demo/tools.py: modified (its content no longer matches its RECORD hash)"
    ]
    assert again.hashed == 1


def test_a_cache_others_can_write_is_not_read(tmp_path):
    (tmp_path / "site").mkdir()
    info = install(tmp_path / "site")
    cache = tmp_path / "cache" / "hashes.json"
    first = FileHashes(str(cache))
    tampered(read_record(info), first)
    first.save()
    os.chmod(cache, 0o666)
    poisoned = FileHashes(str(cache))
    assert poisoned.hash(str(tmp_path / "site" / "demo" / "tools.py"), "sha256") is not None
    assert poisoned.hashed == 1  # hashed again, not believed
