#!/usr/bin/env python3
"""Writes a container image as an OCI image layout archive (what `ctr images import` reads), from
files of this machine: no registry, no container engine.

    oci_image.py OUT.tar NAME --file IMAGE_PATH=HOST_FILE… [--link IMAGE_PATH=TARGET…]
                 [--dir IMAGE_PATH…] [--entrypoint JSON] [--cmd JSON] [--env K=V…]
                 [--busybox-applets IMAGE_DIR] [--libraries]

NAME is the image's full name (`localhost/runner/busybox:1`): `ctr images import` names it so.
Every HOST_FILE must be a static executable or a plain file (an image has no libraries); the one
layer is an uncompressed tar with every time 0 and owner root, so the same files make the same
digests (the archive is cached by what it was made from). `--busybox-applets DIR` links each
applet of the busybox at DIR/busybox (`busybox --list`) beside it. `--libraries` allows dynamically
linked executables: the shared libraries each loads (as `ldd` resolves them on this machine, its
program interpreter among them) go into the image at the same paths.
"""

import argparse
import hashlib
import io
import json
import os
import platform
import subprocess
import sys
import tarfile

ARCH = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "ppc64le": "ppc64le", "s390x": "s390x"}


def fail(message):
    print(f"oci_image: {message}", file=sys.stderr)
    sys.exit(1)


def dynamic(path):
    """Whether the ELF file at PATH asks for a program interpreter (a dynamically linked one)."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF":
            return False
        if head[4] != 2:  # only 64-bit ELF here
            return False
        little = head[5] == 1
        order = "little" if little else "big"
        phoff = int.from_bytes(head[32:40], order)
        phentsize = int.from_bytes(head[54:56], order)
        phnum = int.from_bytes(head[56:58], order)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    for i in range(phnum):
        if int.from_bytes(table[i * phentsize : i * phentsize + 4], order) == 3:  # PT_INTERP
            return True
    return False


def libraries(path):
    """The shared libraries the dynamically linked executable at PATH loads, as `ldd` resolves
    them here (absolute paths, its program interpreter among them)."""
    out = subprocess.run(["ldd", path], check=True, capture_output=True, text=True).stdout
    found = []
    for line in out.splitlines():
        words = line.split()
        if "=>" in words:
            target = words[words.index("=>") + 1]
            if target == "not":
                fail(f"{path} needs {words[0]}, which ldd cannot find here")
            found.append(target)
        elif words and words[0].startswith("/"):
            found.append(words[0])
    return found


def info(name, kind, mode):
    t = tarfile.TarInfo(name)
    t.type = kind
    t.mode = mode
    t.mtime = 0
    t.uid = t.gid = 0
    t.uname = t.gname = "root"
    return t


def layer(files, links, dirs):
    """The layer's tar: directories, files and symbolic links, sorted, every time 0."""
    entries = {}
    for d in dirs:
        entries[d.strip("/")] = ("dir", None)
    for path, host in files:
        entries[path.strip("/")] = ("file", host)
    for path, target in links:
        entries[path.strip("/")] = ("link", target)
    # Every parent directory is in the tar too.
    for name in list(entries):
        parent = os.path.dirname(name)
        while parent:
            entries.setdefault(parent, ("dir", None))
            parent = os.path.dirname(parent)
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(entries):
            kind, what = entries[name]
            if kind == "dir":
                tar.addfile(info(name, tarfile.DIRTYPE, 0o1777 if name == "tmp" else 0o755))
            elif kind == "link":
                t = info(name, tarfile.SYMTYPE, 0o777)
                t.linkname = what
                tar.addfile(t)
            else:
                with open(what, "rb") as f:
                    data = f.read()
                mode = 0o755 if os.access(what, os.X_OK) else 0o644
                t = info(name, tarfile.REGTYPE, mode)
                t.size = len(data)
                tar.addfile(t, io.BytesIO(data))
    return out.getvalue()


def blob(tar, data, media_type):
    digest = hashlib.sha256(data).hexdigest()
    t = info(f"blobs/sha256/{digest}", tarfile.REGTYPE, 0o644)
    t.size = len(data)
    tar.addfile(t, io.BytesIO(data))
    return {"mediaType": media_type, "digest": f"sha256:{digest}", "size": len(data)}


def canonical(document):
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()


def pair(value, flag):
    if "=" not in value:
        fail(f"{flag} takes IMAGE_PATH=VALUE, not '{value}'")
    left, right = value.split("=", 1)
    return left, right


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("name")
    p.add_argument("--file", action="append", default=[])
    p.add_argument("--link", action="append", default=[])
    p.add_argument("--dir", action="append", default=[])
    p.add_argument("--entrypoint")
    p.add_argument("--cmd")
    p.add_argument("--env", action="append", default=[])
    p.add_argument("--busybox-applets")
    p.add_argument("--libraries", action="store_true")
    a = p.parse_args()

    files = [pair(v, "--file") for v in a.file]
    links = [pair(v, "--link") for v in a.link]
    for path, host in files:
        if not os.path.isfile(host):
            fail(f"{host} (for {path}) is not a file")
        if dynamic(host) and not a.libraries:
            fail(f"{host} is dynamically linked: an image of files alone needs static executables (or --libraries)")
    if a.libraries:
        given = {path.strip("/") for path, _ in files}
        for _, host in list(files):
            if dynamic(host):
                for lib in libraries(host):
                    if lib.strip("/") not in given:
                        given.add(lib.strip("/"))
                        files.append((lib, os.path.realpath(lib)))
    if a.busybox_applets:
        where = a.busybox_applets.strip("/")
        host = dict(files).get(f"/{where}/busybox") or dict(files).get(f"{where}/busybox")
        if not host:
            fail(f"--busybox-applets {a.busybox_applets}: no --file {a.busybox_applets}/busybox given")
        applets = subprocess.run([host, "--list"], check=True, capture_output=True, text=True).stdout.split()
        given = {path.strip("/") for path, _ in files + links}
        links += [(f"{where}/{x}", "busybox") for x in applets if f"{where}/{x}" not in given]

    arch = ARCH.get(platform.machine(), platform.machine())
    config = {
        "architecture": arch,
        "os": "linux",
        "config": {"Env": a.env or ["PATH=/bin"]},
        "rootfs": {"type": "layers", "diff_ids": []},
        "history": [{"created_by": "scripts/lib/oci_image.py"}],
    }
    if a.entrypoint:
        config["config"]["Entrypoint"] = json.loads(a.entrypoint)
    if a.cmd:
        config["config"]["Cmd"] = json.loads(a.cmd)
    data = layer(files, links, a.dir)
    config["rootfs"]["diff_ids"].append("sha256:" + hashlib.sha256(data).hexdigest())

    tmp = f"{a.out}.tmp"
    with tarfile.open(tmp, mode="w", format=tarfile.PAX_FORMAT) as tar:
        layer_desc = blob(tar, data, "application/vnd.oci.image.layer.v1.tar")
        config_desc = blob(tar, canonical(config), "application/vnd.oci.image.config.v1+json")
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": config_desc,
            "layers": [layer_desc],
        }
        manifest_desc = blob(tar, canonical(manifest), "application/vnd.oci.image.manifest.v1+json")
        manifest_desc["platform"] = {"architecture": arch, "os": "linux"}
        manifest_desc["annotations"] = {
            "io.containerd.image.name": a.name,
            "org.opencontainers.image.ref.name": a.name.rsplit(":", 1)[-1],
        }
        index = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": [manifest_desc],
        }
        for name, document in (("oci-layout", {"imageLayoutVersion": "1.0.0"}), ("index.json", index)):
            body = canonical(document)
            t = info(name, tarfile.REGTYPE, 0o644)
            t.size = len(body)
            tar.addfile(t, io.BytesIO(body))
    os.replace(tmp, a.out)


if __name__ == "__main__":
    main()
