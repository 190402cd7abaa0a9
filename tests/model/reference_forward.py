#!/usr/bin/env python3
"""Independent reference forward for realign's model tests, written from the HF modeling code's semantics with
nothing but torch + json + struct (safetensors read by hand). Families: llama, qwen2, mistral, gpt2, and the
mixture-of-experts mixtral, qwen2_moe, qwen3_moe (modeling_mixtral.py / modeling_qwen2_moe.py /
modeling_qwen3_moe.py: softmax router, top-k, renormalised as the family does; Qwen2-MoE's gated shared
expert; Qwen3's q/k RMSNorm).
usage: reference_forward.py MODEL_DIR TOKENS_JSON OUT_JSON
  TOKENS_JSON: {"sequences": [[ids...], ...]}; each sequence is run alone (no padding), in float64.
  OUT_JSON: {"logprobs": [[log p(x[t+1] | x[:t+1]) for t < len-1], ...], "entropy": [[...], ...],
             "logits": [[[...V...] per position], ...]}"""
import json, math, os, struct, sys
import torch

DTYPES = {"F32": (torch.float32, 4), "F16": (torch.float16, 2), "BF16": (torch.bfloat16, 2), "F64": (torch.float64, 8)}

def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        dt, size = DTYPES[info["dtype"]]
        buf = bytearray(raw[base + begin:base + end])
        if dt == torch.bfloat16:
            t = torch.frombuffer(buf, dtype=torch.int16).view(torch.bfloat16)
        else:
            t = torch.frombuffer(buf, dtype=dt)
        out[name] = t.reshape(info["shape"]).to(torch.float64)
    return out

def read_model(d):
    index = os.path.join(d, "model.safetensors.index.json")
    if os.path.exists(index):
        files = sorted(set(json.load(open(index))["weight_map"].values()))
        w = {}
        for f in files:
            w.update(read_safetensors(os.path.join(d, f)))
        return w
    return read_safetensors(os.path.join(d, "model.safetensors"))

def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)

def llama_inv_freq(c, head_dim):
    inv = 1.0 / (c.get("rope_theta", 10000.0) ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
    inv = inv.double()
    rs = c.get("rope_scaling")
    if rs and rs.get("rope_type", rs.get("type")) == "llama3":
        factor, lo, hi = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
        old = rs["original_max_position_embeddings"]
        low_wavelen, high_wavelen = old / lo, old / hi
        wavelen = 2 * math.pi / inv
        scaled = torch.where(wavelen > low_wavelen, inv / factor, inv)
        smooth = (old / wavelen - lo) / (hi - lo)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
        inv = torch.where(medium, smoothed, scaled)
    return inv

def attention(q, k, v, window):
    # q (Hq, T, d), k v (Hkv, T, d)
    rep = q.shape[0] // k.shape[0]
    k = k.repeat_interleave(rep, dim=0)
    v = v.repeat_interleave(rep, dim=0)
    T = q.shape[1]
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    i = torch.arange(T).view(T, 1)
    j = torch.arange(T).view(1, T)
    allowed = j <= i
    if window:
        allowed &= j > i - window
    s = s.masked_fill(~allowed, float("-inf"))
    return torch.softmax(s, -1) @ v

def is_moe_layer(c, i):
    if c["model_type"] == "mixtral":
        return True
    if c["model_type"] not in ("qwen2_moe", "qwen3_moe"):
        return False
    return i not in (c.get("mlp_only_layers") or []) and (i + 1) % c.get("decoder_sparse_step", 1) == 0

def swiglu(h, gate, up, down):
    return (torch.nn.functional.silu(h @ gate.t()) * (h @ up.t())) @ down.t()

def moe_mlp(c, w, p, h):
    # h (T, H): each token's top-k experts by softmax over every expert, weighted sum of their SwiGLUs.
    mixtral = c["model_type"] == "mixtral"
    pre = p + ("block_sparse_moe." if mixtral else "mlp.")
    k = c["num_experts_per_tok"]
    probs = torch.softmax(h @ w[pre + "gate.weight"].t(), -1)
    top_w, top_i = torch.topk(probs, k, -1)
    if mixtral or c.get("norm_topk_prob", False):
        top_w = top_w / top_w.sum(-1, keepdim=True)
    names = ("w1", "w3", "w2") if mixtral else ("gate_proj", "up_proj", "down_proj")
    out = torch.zeros_like(h)
    for t in range(h.shape[0]):
        for j in range(k):
            e = pre + "experts.%d." % int(top_i[t, j])
            out[t] += top_w[t, j] * swiglu(h[t], *(w[e + n + ".weight"] for n in names))
    if c["model_type"] == "qwen2_moe" and c.get("shared_expert_intermediate_size", 0) > 0:
        s = pre + "shared_expert."
        shared = swiglu(h, w[s + "gate_proj.weight"], w[s + "up_proj.weight"], w[s + "down_proj.weight"])
        out = out + torch.sigmoid(h @ w[pre + "shared_expert_gate.weight"].t()) * shared
    return out

def llama_forward(c, w, ids):
    H, nh = c["hidden_size"], c["num_attention_heads"]
    nkv = c.get("num_key_value_heads", nh)
    hd = c.get("head_dim", H // nh)
    eps = c.get("rms_norm_eps", 1e-6)
    window = c.get("sliding_window") or 0
    if c["model_type"] in ("qwen2", "qwen2_moe", "qwen3_moe") and not c.get("use_sliding_window", False):
        window = 0
    def rms(x, g):
        return g * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))
    def lin(x, name):
        y = x @ w[name + ".weight"].t()
        return y + w[name + ".bias"] if name + ".bias" in w else y
    T = len(ids)
    x = w["model.embed_tokens.weight"][torch.tensor(ids)]
    pos = torch.arange(T, dtype=torch.float64)
    freqs = pos.view(T, 1) * llama_inv_freq(c, hd).view(1, -1)
    emb = torch.cat((freqs, freqs), -1)
    cos, sin = emb.cos(), emb.sin()
    for i in range(c["num_hidden_layers"]):
        p = "model.layers.%d." % i
        h = rms(x, w[p + "input_layernorm.weight"])
        q = lin(h, p + "self_attn.q_proj").view(T, nh, hd).transpose(0, 1)
        k = lin(h, p + "self_attn.k_proj").view(T, nkv, hd).transpose(0, 1)
        v = lin(h, p + "self_attn.v_proj").view(T, nkv, hd).transpose(0, 1)
        if p + "self_attn.q_norm.weight" in w:  # Qwen3: RMSNorm over each head's dims, before RoPE
            q = rms(q, w[p + "self_attn.q_norm.weight"])
            k = rms(k, w[p + "self_attn.k_norm.weight"])
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        a = attention(q, k, v, window).transpose(0, 1).reshape(T, nh * hd)
        x = x + lin(a, p + "self_attn.o_proj")
        h = rms(x, w[p + "post_attention_layernorm.weight"])
        if is_moe_layer(c, i):
            x = x + moe_mlp(c, w, p, h)
            continue
        g = lin(h, p + "mlp.gate_proj")
        x = x + lin(torch.nn.functional.silu(g) * lin(h, p + "mlp.up_proj"), p + "mlp.down_proj")
    x = rms(x, w["model.norm.weight"])
    head = w["lm_head.weight"] if "lm_head.weight" in w else w["model.embed_tokens.weight"]
    return x @ head.t()

def gpt2_forward(c, w, ids):
    pre = "transformer." if "transformer.wte.weight" in w else ""
    H, nh = c["n_embd"], c["n_head"]
    hd = H // nh
    eps = c.get("layer_norm_epsilon", 1e-5)
    def ln(x, name):
        return torch.nn.functional.layer_norm(x, (H,), w[name + ".weight"], w[name + ".bias"], eps)
    def conv1d(x, name):  # Conv1D: weight (in, out)
        return x @ w[name + ".weight"] + w[name + ".bias"]
    def gelu_new(x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
    T = len(ids)
    x = w[pre + "wte.weight"][torch.tensor(ids)] + w[pre + "wpe.weight"][:T]
    for i in range(c["n_layer"]):
        p = pre + "h.%d." % i
        h = ln(x, p + "ln_1")
        q, k, v = conv1d(h, p + "attn.c_attn").split(H, dim=-1)
        q, k, v = (t.view(T, nh, hd).transpose(0, 1) for t in (q, k, v))
        a = attention(q, k, v, 0).transpose(0, 1).reshape(T, H)
        x = x + conv1d(a, p + "attn.c_proj")
        h = ln(x, p + "ln_2")
        x = x + conv1d(gelu_new(conv1d(h, p + "mlp.c_fc")), p + "mlp.c_proj")
    x = ln(x, pre + "ln_f")
    return x @ w[pre + "wte.weight"].t()

def main():
    model_dir, tokens_path, out_path = sys.argv[1:4]
    c = json.load(open(os.path.join(model_dir, "config.json")))
    w = read_model(model_dir)
    seqs = json.load(open(tokens_path))["sequences"]
    forward = gpt2_forward if c["model_type"] == "gpt2" else llama_forward
    out = {"logprobs": [], "entropy": [], "logits": []}
    with torch.no_grad():
        for ids in seqs:
            logits = forward(c, w, ids)
            out["logits"].append(logits.tolist())
            logp = torch.log_softmax(logits, -1)
            out["logprobs"].append([logp[t, ids[t + 1]].item() for t in range(len(ids) - 1)])
            out["entropy"].append((-(logp.exp() * logp).sum(-1)).tolist())
    with open(out_path, "w") as f:
        json.dump(out, f)

if __name__ == "__main__":
    main()
