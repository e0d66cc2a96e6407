// PyTorch operators `torch.ops.muh.*` over the C interface of muh/ops/ops.h (docs/ops.md, "PyTorch
// operators"). CUDA implementations, and autograd's: none is differentiable (inference kernels), so
// each gets PyTorch's not-implemented autograd kernel (backward raises; in-place outputs included).
// The schemas (with their mutation annotations) and the fake implementations are registered from
// Python (muh/runtime/operators.py, one table for both the extension and the ctypes fallback). Compiled
// by the host compiler against PyTorch's headers and linked to libmuh_ops.so, which the spec's toolchain
// builds; needs no CUDA header.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include "ops_torch_dtypes.h"  // generated beside this file: the element types this build's ops serve

#include <initializer_list>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "muh/ops/ops.h"

extern "C" const char* muh_last_error(void);

namespace {

// Refusal messages are built with std::to_string and string concatenation, never by streaming a
// number: on the lab H200 (torch 2.11) TORCH_CHECK's ostringstream, fed an integer from this
// extension, crashed inside std::basic_ostream::_M_insert<long> (the extension's own instance of it,
// mixed with PyTorch's libstdc++ runtime; backtrace in bench/results/final-wave-2026-12-01/README.md). A single
// string reaches c10::str unstreamed.
std::string txt(const char* s) { return s; }
std::string txt(const std::string& s) { return s; }
std::string txt(int v) { return std::to_string(v); }
std::string txt(long v) { return std::to_string(v); }
std::string txt(long long v) { return std::to_string(v); }
std::string txt(unsigned long v) { return std::to_string(v); }
std::string txt(double v) { return std::to_string(v); }
std::string txt(c10::IntArrayRef a) {
  std::string s = "[";
  for (size_t i = 0; i < a.size(); ++i) s += (i ? ", " : "") + std::to_string(a[i]);
  return s + "]";
}
std::string txt(at::ScalarType t) { return c10::toString(t); }
std::string txt(const c10::Device& d) { return d.str(); }
template <class... A>
std::string msg(const A&... a) {
  std::string s;
  (void)std::initializer_list<int>{(s += txt(a), 0)...};
  return s;
}
#define MUH_CHECK(cond, ...) TORCH_CHECK(cond, msg(__VA_ARGS__))

int code_of(const at::Tensor& t, const char* op) {
  MUH_CHECK(t.is_cuda(), "muh::", op, ": expected CUDA tensors, got one on ", t.device());
  switch (t.scalar_type()) {
#define MUH_CASE(aten, code) \
  case at::ScalarType::aten: return MUH_OP_##code;
    MUH_OPS_TORCH_DTYPES(MUH_CASE)
#undef MUH_CASE
    default:
      MUH_CHECK(false, "muh::", op, ": dtype ", t.scalar_type(), " is not supported (" MUH_OPS_TORCH_DTYPE_NAMES ")");
  }
  return -1;
}

void* stream_of(const at::Tensor& t) {
  return c10::impl::getDeviceGuardImpl(t.device().type())->getStream(t.device()).native_handle();
}

void ok(int rc) { MUH_CHECK(rc == 0, muh_last_error()); }

void same(const char* op, const at::Tensor& a, const at::Tensor& b, const char* what) {
  MUH_CHECK(a.scalar_type() == b.scalar_type(), "muh::", op, ": ", what, " is ", b.scalar_type(), ", input ",
            a.scalar_type());
  MUH_CHECK(a.device() == b.device(), "muh::", op, ": ", what, " is on ", b.device(), ", input on ", a.device());
}

// The rows of `t` (every dimension but the last) as (tokens, heads) with one stride each, when two
// levels of strides address them (size-1 dimensions dropped, collapsible neighbours merged).
struct Split {
  int64_t tokens = 0, heads = 1;
  bool ok = false;
};

Split split_rows(const at::Tensor& t) {
  Split s;
  std::vector<std::pair<int64_t, int64_t>> d;  // (size, stride)
  for (int64_t i = 0; i + 1 < t.dim(); ++i) {
    if (t.size(i) == 1) continue;
    if (!d.empty() && d.back().second == t.stride(i) * t.size(i))
      d.back() = {d.back().first * t.size(i), t.stride(i)};
    else
      d.push_back({t.size(i), t.stride(i)});
  }
  if (d.size() > 2) {
    int64_t rows = 1;
    for (auto& x : d) rows *= x.first;
    s.tokens = rows;
    return s;
  }
  s.ok = t.size(-1) <= 1 || t.stride(-1) == 1;
  s.tokens = d.empty() ? 1 : d[0].first;
  s.heads = d.size() == 2 ? d[1].first : 1;
  if (!s.ok) {
    s.tokens *= s.heads;
    s.heads = 1;
  }
  return s;
}

// `t` as [tokens, heads, hidden] with a unit last stride: a view when one exists, else a contiguous copy.
at::Tensor rows3(const at::Tensor& t, int64_t tokens, int64_t heads, int64_t hidden) {
  at::Tensor v = t.reshape({tokens, heads, hidden});
  if (hidden > 1 && v.stride(2) != 1) v = v.contiguous();
  return v;
}

// Writes `v` back into `t` when `v` is a copy rather than a view of it.
void write_back(const at::Tensor& t, const at::Tensor& v) {
  if (!v.is_alias_of(t)) t.copy_(v.view(t.sizes()));
}

muh_op_norm_args norm_args(const at::Tensor& out, const at::Tensor& in, const at::Tensor& weight, double eps) {
  muh_op_norm_args a = {};
  a.out = out.data_ptr();
  a.in = in.data_ptr();
  a.weight = weight.data_ptr();
  a.tokens = in.size(0);
  a.heads = (int)in.size(1);
  a.hidden = (int)in.size(2);
  a.in_stride = in.stride(0);
  a.in_head_stride = in.stride(1);
  a.out_stride = out.stride(0);
  a.out_head_stride = out.stride(1);
  a.eps = (float)eps;
  a.residual_alpha = 1.f;
  return a;
}

void check_weight(const char* op, const at::Tensor& x, const at::Tensor& w) {
  same(op, x, w, "weight");
  MUH_CHECK(w.numel() == x.size(-1), "muh::", op, ": weight has ", w.numel(), " elements, the last dimension ",
            x.size(-1));
}

// One norm over the last dimension of `input` into `out` (same shape); gate: the gated form.
void norm_into(const char* op, const at::Tensor& out, const at::Tensor& input, const at::Tensor& weight,
               const at::Tensor* gate, double eps, float weight_offset, int single_rounding) {
  const int dtype = code_of(input, op);
  MUH_CHECK(input.dim() >= 1, "muh::", op, ": input must have at least one dimension");
  check_weight(op, input, weight);
  same(op, input, out, "out");
  MUH_CHECK(out.sizes() == input.sizes(), "muh::", op, ": out ", out.sizes(), " is not input ", input.sizes());
  if (input.numel() == 0) return;
  const int64_t hidden = input.size(-1);
  Split s = split_rows(input);
  if (!s.ok) s.heads = 1;
  const at::Tensor in3 = rows3(input, s.tokens, s.heads, hidden);
  const at::Tensor out3 = rows3(out, s.tokens, s.heads, hidden);
  const at::Tensor w = weight.contiguous();
  c10::DeviceGuard guard(input.device());
  muh_op_norm_args a = norm_args(out3, in3, w, eps);
  a.weight_offset = weight_offset;
  a.single_rounding = single_rounding;
  at::Tensor g3;
  if (gate) {
    same(op, input, *gate, "gate");
    MUH_CHECK(gate->sizes() == input.sizes(), "muh::", op, ": gate ", gate->sizes(), " is not input ", input.sizes());
    g3 = rows3(*gate, s.tokens, s.heads, hidden);
    a.gate = g3.data_ptr();
    a.gate_stride = g3.stride(0);
    a.gate_head_stride = g3.stride(1);
  }
  ok(muh_op_norm(dtype, &a, stream_of(input)));
  write_back(out, out3);
}

void fused_norm(const char* op, const at::Tensor& input, const at::Tensor& residual, const at::Tensor& weight,
                double eps, double residual_alpha, float weight_offset, int single_rounding) {
  const int dtype = code_of(input, op);
  MUH_CHECK(input.dim() >= 1, "muh::", op, ": input must have at least one dimension");
  check_weight(op, input, weight);
  same(op, input, residual, "residual");
  MUH_CHECK(residual.sizes() == input.sizes(), "muh::", op, ": residual ", residual.sizes(), " is not input ",
            input.sizes());
  if (input.numel() == 0) return;
  const int64_t hidden = input.size(-1), rows = input.numel() / hidden;
  const at::Tensor x3 = rows3(input, rows, 1, hidden), r3 = rows3(residual, rows, 1, hidden);
  const at::Tensor w = weight.contiguous();
  c10::DeviceGuard guard(input.device());
  muh_op_norm_args a = norm_args(x3, x3, w, eps);
  a.residual = r3.data_ptr();
  a.residual_stride = r3.stride(0);
  a.residual_alpha = (float)residual_alpha;
  a.weight_offset = weight_offset;
  a.single_rounding = single_rounding;
  ok(muh_op_norm(dtype, &a, stream_of(input)));
  write_back(input, x3);
  write_back(residual, r3);
}

// ---- the operators -----------------------------------------------------------------------------

void rms_norm(at::Tensor& out, const at::Tensor& input, const at::Tensor& weight, double epsilon) {
  norm_into("rms_norm", out, input, weight, nullptr, epsilon, 0.f, 0);
}

void fused_add_rms_norm(at::Tensor& input, at::Tensor& residual, const at::Tensor& weight, double epsilon,
                        double residual_alpha) {
  fused_norm("fused_add_rms_norm", input, residual, weight, epsilon, residual_alpha, 0.f, 0);
}

at::Tensor gemma_rms_norm(const at::Tensor& input, const at::Tensor& weight, double epsilon) {
  at::Tensor out = at::empty(input.sizes(), input.options());
  norm_into("gemma_rms_norm", out, input, weight, nullptr, epsilon, 1.f, 1);
  return out;
}

void gemma_fused_add_rms_norm(at::Tensor& input, at::Tensor& residual, const at::Tensor& weight, double epsilon,
                              double residual_alpha) {
  fused_norm("gemma_fused_add_rms_norm", input, residual, weight, epsilon, residual_alpha, 1.f, 1);
}

at::Tensor gated_rms_norm(const at::Tensor& input, const at::Tensor& gate, const at::Tensor& weight, double epsilon) {
  at::Tensor out = at::empty(input.sizes(), input.options());
  norm_into("gated_rms_norm", out, input, weight, &gate, epsilon, 0.f, 0);
  return out;
}

void silu_and_mul(at::Tensor& out, const at::Tensor& x) {
  const int dtype = code_of(x, "silu_and_mul");
  same("silu_and_mul", x, out, "out");
  MUH_CHECK(x.dim() >= 1 && x.size(-1) % 2 == 0, "muh::silu_and_mul: the last dimension of x (",
            x.dim() ? x.size(-1) : 0, ") must be even");
  const int64_t d = x.size(-1) / 2;
  MUH_CHECK(out.dim() == x.dim() && out.size(-1) == d && out.numel() * 2 == x.numel(), "muh::silu_and_mul: out ",
            out.sizes(), " is not x ", x.sizes(), " with half the last dimension");
  if (x.numel() == 0) return;
  const int64_t rows = x.numel() / x.size(-1);
  const at::Tensor x2 = rows3(x, rows, 1, 2 * d), o2 = rows3(out, rows, 1, d);
  c10::DeviceGuard guard(x.device());
  ok(muh_op_silu_and_mul(dtype, o2.data_ptr(), x2.data_ptr(), rows, (int)d, x2.stride(0), o2.stride(0), stream_of(x)));
  write_back(out, o2);
}

at::Tensor shared_expert_combine(const at::Tensor& routed, const at::Tensor& shared, const at::Tensor& gate) {
  const int dtype = code_of(routed, "shared_expert_combine");
  same("shared_expert_combine", routed, shared, "shared");
  same("shared_expert_combine", routed, gate, "gate");
  MUH_CHECK(routed.dim() >= 1 && shared.sizes() == routed.sizes(), "muh::shared_expert_combine: shared ",
            shared.sizes(), " is not routed ", routed.sizes());
  at::Tensor out = at::empty(routed.sizes(), routed.options());
  if (routed.numel() == 0) return out;
  const int64_t d = routed.size(-1), rows = routed.numel() / d;
  MUH_CHECK(gate.numel() == rows, "muh::shared_expert_combine: gate has ", gate.numel(), " elements, one per row (",
            rows, ") expected");
  const at::Tensor r2 = rows3(routed, rows, 1, d), s2 = rows3(shared, rows, 1, d), g2 = gate.reshape({rows});
  c10::DeviceGuard guard(routed.device());
  muh_op_gate_add_args a = {out.data_ptr(), r2.data_ptr(), s2.data_ptr(), g2.data_ptr(), rows, (int)d, d,
                            r2.stride(0),   s2.stride(0),  g2.stride(0)};
  ok(muh_op_gate_add(dtype, &a, stream_of(routed)));
  return out;
}

void route_into(const char* op, const at::Tensor& w, const at::Tensor& ids, const at::Tensor* src,
                const at::Tensor& gating, bool renormalize) {
  const int dtype = code_of(gating, op);
  MUH_CHECK(gating.dim() >= 1, "muh::", op, ": gating_output must have at least one dimension");
  const int64_t experts = gating.size(-1), rows = experts ? gating.numel() / experts : 0, k = w.size(-1);
  MUH_CHECK(w.scalar_type() == at::kFloat, "muh::", op, ": topk_weights must be float32, got ", w.scalar_type());
  MUH_CHECK(ids.scalar_type() == at::kInt || ids.scalar_type() == at::kLong, "muh::", op,
            ": topk_ids must be int32 or int64, got ", ids.scalar_type());
  for (const at::Tensor* t : {&w, &ids, src}) {
    if (!t) continue;
    MUH_CHECK(t->is_contiguous() && t->numel() == rows * k && t->device() == gating.device(), "muh::", op,
              ": outputs must be contiguous [", rows, ", ", k, "] tensors on ", gating.device(), ", got ", t->sizes());
  }
  MUH_CHECK(!src || src->scalar_type() == at::kInt, "muh::", op, ": token_expert_indicies must be int32");
  if (rows == 0) return;
  const at::Tensor g2 = rows3(gating, rows, 1, experts);
  c10::DeviceGuard guard(gating.device());
  ok(muh_op_moe_route(dtype, w.data_ptr<float>(), ids.data_ptr(), ids.scalar_type() == at::kLong ? 1 : 0,
                      src ? src->data_ptr<int>() : nullptr, g2.data_ptr(), rows, (int)experts, g2.stride(0), (int)k,
                      renormalize ? 1 : 0, stream_of(gating)));
}

void topk_softmax(at::Tensor& topk_weights, at::Tensor& topk_ids, at::Tensor& token_expert_indicies,
                  const at::Tensor& gating_output) {
  route_into("topk_softmax", topk_weights, topk_ids, &token_expert_indicies, gating_output, false);
}

std::tuple<at::Tensor, at::Tensor> moe_topk_softmax(const at::Tensor& gating_output, int64_t topk, bool renormalize,
                                                    std::optional<at::ScalarType> id_dtype) {
  const int64_t experts = gating_output.dim() ? gating_output.size(-1) : 0;
  const int64_t rows = experts ? gating_output.numel() / experts : 0;
  const at::ScalarType idt = id_dtype.value_or(at::kInt);
  at::Tensor w = at::empty({rows, topk}, gating_output.options().dtype(at::kFloat));
  at::Tensor ids = at::empty({rows, topk}, gating_output.options().dtype(idt));
  route_into("moe_topk_softmax", w, ids, nullptr, gating_output, renormalize);
  return {w, ids};
}

void softmax(at::Tensor& out, const at::Tensor& x) {
  const int dtype = code_of(x, "softmax");
  same("softmax", x, out, "out");
  MUH_CHECK(x.dim() >= 1 && out.sizes() == x.sizes(), "muh::softmax: out ", out.sizes(), " is not x ", x.sizes());
  if (x.numel() == 0) return;
  const int64_t cols = x.size(-1), rows = x.numel() / cols;
  const at::Tensor x2 = rows3(x, rows, 1, cols), o2 = rows3(out, rows, 1, cols);
  c10::DeviceGuard guard(x.device());
  ok(muh_op_softmax(dtype, o2.data_ptr(), x2.data_ptr(), rows, (int)cols, x2.stride(0), o2.stride(0), stream_of(x)));
  write_back(out, o2);
}

}  // namespace

TORCH_LIBRARY_IMPL(muh, CUDA, m) {
  m.impl("rms_norm", &rms_norm);
  m.impl("fused_add_rms_norm", &fused_add_rms_norm);
  m.impl("gemma_rms_norm", &gemma_rms_norm);
  m.impl("gemma_fused_add_rms_norm", &gemma_fused_add_rms_norm);
  m.impl("gated_rms_norm", &gated_rms_norm);
  m.impl("silu_and_mul", &silu_and_mul);
  m.impl("shared_expert_combine", &shared_expert_combine);
  m.impl("topk_softmax", &topk_softmax);
  m.impl("moe_topk_softmax", &moe_topk_softmax);
  m.impl("softmax", &softmax);
}

// Backward through any of them raises "the derivative for 'muh::<op>' is not implemented" (PyTorch's rule
// for an operator that is not differentiable; without it autograd warns and gives no gradient).
// The operators are muh/runtime/operators.py's SCHEMAS, listed by the generated ops_torch_dtypes.h.
#define MUH_NOT_DIFFERENTIABLE(name) m.impl(#name, torch::autograd::autogradNotImplementedFallback());
TORCH_LIBRARY_IMPL(muh, Autograd, m) { MUH_OPS_TORCH_OPERATORS(MUH_NOT_DIFFERENTIABLE) }
#undef MUH_NOT_DIFFERENTIABLE
