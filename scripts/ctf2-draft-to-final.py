#!/usr/bin/env python3
"""Rewrites the CTF 2 metadata of a trace written in the specification's
draft form (LTTng 2.14 pre-releases; the Trace Compass CTF2-7.0-* test
traces) in the form of the final specification, which babeltrace2 2.1
reads; babeltrace2 2.1 refuses the draft ("Unknown object property
`uuid`"). The stream files are copied unchanged.

    scripts/ctf2-draft-to-final.py TRACE_DIR OUT_DIR

What changes: the trace class `uuid` moves to the preamble; a clock
class `name` is also its `id`, with origin the Unix epoch (LTTng's
clocks), its `uuid` its `uid`; `default-clock-class-name` becomes `default-clock-class-id`;
enumeration types become integer types with mappings; array field
locations become {origin, path}; `user-attributes` become `attributes`.
Used by scripts/ctf2-oracle.sh to produce babeltrace2 2.1's expected
output for those traces."""

import json
import os
import shutil
import sys
import uuid as uuidlib

RS = b"\x1e"


def fix_fc(v):
    if isinstance(v, list):
        return [fix_fc(x) for x in v]
    if not isinstance(v, dict):
        return v
    out = {}
    for k, x in v.items():
        if k == "type" and isinstance(x, str) and x.endswith("-enumeration"):
            x = x[: -len("-enumeration")] + "-integer"
        if k in ("selector-field-location", "length-field-location") and isinstance(x, list):
            x = {"origin": x[0], "path": x[1:]}
        if k == "user-attributes":
            k = "attributes"
        out[k] = fix_fc(x)
    return out


def main(src, dst):
    os.makedirs(dst, exist_ok=True)
    for name in os.listdir(src):
        p = os.path.join(src, name)
        if os.path.isfile(p) and name != "metadata":
            shutil.copy(p, os.path.join(dst, name))
        elif os.path.isdir(p):
            shutil.copytree(p, os.path.join(dst, name), dirs_exist_ok=True)
    frags = [json.loads(f) for f in open(os.path.join(src, "metadata"), "rb").read().split(RS) if f.strip()]
    uuid = None
    for f in frags:
        if f.get("type") == "trace-class" and "uuid" in f:
            uuid = f.pop("uuid")
    out = []
    for f in frags:
        t = f.get("type")
        if t == "preamble" and uuid is not None:
            f.setdefault("uuid", uuid)
        if t == "clock-class" and "id" not in f:
            f["id"] = f["name"]
            f.setdefault("origin", "unix-epoch")
            if "uuid" in f:
                f["uid"] = str(uuidlib.UUID(bytes=bytes(f.pop("uuid"))))
        if t == "data-stream-class" and "default-clock-class-name" in f:
            f["default-clock-class-id"] = f.pop("default-clock-class-name")
        out.append(fix_fc(f))
    with open(os.path.join(dst, "metadata"), "wb") as m:
        for f in out:
            m.write(RS + json.dumps(f, indent=2).encode() + b"\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
