#!/usr/bin/env python3
"""Independent safetensors reference (the spec written out with struct + json + torch, no safetensors package).
usage: py_safetensors.py CHECK_PATH WRITE_PATH
  checks that CHECK_PATH holds exactly tensors a (F32 3x4: arange*0.5-1), b (BF16 5: arange/3) and
  c (I64: [-7, 2**40]) (exit 1 otherwise), then writes those tensors to WRITE_PATH."""
import json, struct, sys
import torch

def expected():
    return {"a": torch.arange(12, dtype=torch.float32).reshape(3, 4) * 0.5 - 1,
            "b": (torch.arange(5, dtype=torch.float32) / 3).to(torch.bfloat16),
            "c": torch.tensor([-7, 2 ** 40], dtype=torch.int64)}

NAMES = {torch.float32: "F32", torch.bfloat16: "BF16", torch.int64: "I64", torch.float16: "F16"}

def tensor_bytes(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return t.numpy().tobytes()

def write(path):
    header, data, off = {}, b"", 0
    for name, t in expected().items():
        b = tensor_bytes(t)
        header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        data += b
        off += len(b)
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)

def check(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    inv = {v: k for k, v in NAMES.items()}
    if set(k for k in header if k != "__metadata__") != set(expected()):
        print(f"tensors {sorted(header)} differ from {sorted(expected())}")
        sys.exit(1)
    for name, want in expected().items():
        meta = header[name]
        lo, hi = meta["data_offsets"]
        dt = inv[meta["dtype"]]
        buf = bytearray(data[lo:hi])
        if dt == torch.bfloat16:
            got = torch.frombuffer(buf, dtype=torch.int16).view(torch.bfloat16)
        else:
            got = torch.frombuffer(buf, dtype=dt)
        got = got.reshape(meta["shape"])
        if got.dtype != want.dtype or not torch.equal(got, want):
            print(f"{name}: got {got} want {want}")
            sys.exit(1)
    print("ok")

if __name__ == "__main__":
    check(sys.argv[1])
    write(sys.argv[2])
