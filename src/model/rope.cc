#include "model/rope.h"

#include <ATen/ATen.h>

#include <cmath>

namespace realign::model {

at::Tensor rope_inv_freq(const ModelSpec& s) {
  const int64_t half = s.head_dim / 2;
  at::Tensor inv = at::empty({half}, at::kFloat);
  auto a = inv.accessor<float, 1>();
  const RopeScaling& r = s.rope_scaling;
  for (int64_t i = 0; i < half; ++i) {
    // As HF: 1 / theta^(2i / d), the exponent formed in fp32.
    const float exponent = float(2 * i) / float(s.head_dim);
    double f = 1.0 / std::pow(s.rope_theta, double(exponent));
    if (r.type == "llama3") {
      // Long wavelengths are slowed by `factor`, short ones kept, the band between blended smoothly.
      const double low_wavelen = double(r.original_max_position) / r.low_freq_factor;
      const double high_wavelen = double(r.original_max_position) / r.high_freq_factor;
      const double wavelen = 2.0 * M_PI / f;
      if (wavelen > low_wavelen) {
        f = f / r.factor;
      } else if (wavelen >= high_wavelen) {
        const double smooth = (double(r.original_max_position) / wavelen - r.low_freq_factor) /
                              (r.high_freq_factor - r.low_freq_factor);
        f = (1.0 - smooth) * f / r.factor + smooth * f;
      }
    }
    a[i] = float(f);
  }
  return inv;
}

RopeTables rope_tables(const at::Tensor& positions, const at::Tensor& inv_freq, at::ScalarType dtype) {
  // freqs (B, T, d/2) -> emb (B, 1, T, d) so it broadcasts over heads.
  at::Tensor freqs = positions.to(at::kFloat).unsqueeze(-1) * inv_freq;
  at::Tensor emb = at::cat({freqs, freqs}, -1).unsqueeze(1);
  return {emb.cos().to(dtype), emb.sin().to(dtype)};
}

at::Tensor apply_rope(const at::Tensor& x, const RopeTables& t) {
  const int64_t half = x.size(-1) / 2;
  at::Tensor rotated = at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * t.cos + rotated * t.sin;
}

}  // namespace realign::model
