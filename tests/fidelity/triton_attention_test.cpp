// llm-foundry's Triton FlashAttention (training.attention_kernel: triton; model/triton_attention.h)
// against the published statements it comes from (tests/fixtures/reference/triton_attention.yaml):
//   - the FlashAttention-2 paper (Dao 2023, Sec. 4.1, A100): FlashAttention-2 is "around 1.3-1.5x
//     faster than FlashAttention in Triton in the forward pass and around 2x faster in the backward
//     pass". The constants are that range's geometric middle (1 / sqrt(1.3 x 1.5) = 0.716) and 1/2,
//     to 0.005 (scripts/derive_triton_attention.py); the forward must stay inside the stated range
//     and the backward within 10% of the stated "around 2x";
//   - the kernel's own header (HazyResearch flash_attn_triton.py, which llm-foundry vendors): against
//     CUDA FlashAttention-1 its forward is "generally faster", its backward "generally slower", and
//     forward + backward "slightly slower". With FlashAttention-1 at 30-50% of the A100's peak forward
//     and 25-35% backward (FA2 paper Sec. 1) and FlashAttention-2 "around 2x faster" than it
//     (Sec. 4.1), the A100 etas CostParameters gives triton must put its forward in the upper half of
//     FlashAttention-1's range (0.40-0.50, +10%), its backward in the lower half (0.25-0.30, -10%),
//     and its forward + backward within 10% of FlashAttention-1's (FlashAttention-2's over 2): when
//     written 0.444, 0.250 and +7.9%;
//   - the model: a compute-bound attention op with triton takes FlashAttention-2's time over the
//     ratio on an A100 and on an H100 (where triton also takes FlashAttention-2's CTA split).
// The paper's Fig. 4-6 bars are not checked one by one: they were not available to us as numbers.

#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>

#include "model/cost_parameters.h"
#include "model/op_time.h"
#include "model/triton_attention.h"
#include "simulator/catalog.h"
#include "tests/support/flash_op.h"

using namespace stepcast;

namespace {

const YAML::Node& fixture() {
  static const YAML::Node root = YAML::LoadFile("tests/fixtures/reference/triton_attention.yaml");
  return root;
}

// Forward plus backward speed over peak from the two passes' (FLOPs 1 : 2.5, the paper's count).
double forward_backward_eta(double forward, double backward) { return 3.5 / (1.0 / forward + 2.5 / backward); }

}  // namespace

TEST_CASE("llm-foundry's Triton FlashAttention runs at the FlashAttention-2 paper's stated fraction of FlashAttention-2") {
  const YAML::Node stated = fixture()["fa2_paper"]["triton_vs_flash2"];
  const double low = stated["flash2_over_triton_forward"]["low"].as<double>();
  const double high = stated["flash2_over_triton_forward"]["high"].as<double>();
  const double around = stated["flash2_over_triton_backward"]["around"].as<double>();
  // Pinned so an edited fixture fails here.
  CHECK(low == 1.3);
  CHECK(high == 1.5);
  CHECK(around == 2.0);
  CHECK(kTritonForwardOverFlash2 == doctest::Approx(1.0 / std::sqrt(low * high)).epsilon(0.005));
  CHECK(kTritonBackwardOverFlash2 == doctest::Approx(1.0 / around).epsilon(0.005));
  CHECK(kTritonForwardOverFlash2 >= 1.0 / high);
  CHECK(kTritonForwardOverFlash2 <= 1.0 / low);
  CHECK(kTritonBackwardOverFlash2 == doctest::Approx(1.0 / around).epsilon(0.10));
}

TEST_CASE("Triton FlashAttention on an A100 sits where its own header puts it against FlashAttention-1") {
  const CostParameters p;
  const YAML::Node fa1 = fixture()["fa2_paper"]["flash1_fraction_of_peak"];
  const double fa1_fwd_low = fa1["forward"]["low"].as<double>();
  const double fa1_fwd_high = fa1["forward"]["high"].as<double>();
  const double fa1_bwd_low = fa1["backward"]["low"].as<double>();
  const double fa1_bwd_high = fa1["backward"]["high"].as<double>();
  const double forward = p.flash_forward_eta(GpuArchitecture::ampere, AttentionKernel::triton);
  const double backward = p.flash_backward_eta(GpuArchitecture::ampere, AttentionKernel::triton);
  CAPTURE(forward);
  CAPTURE(backward);
  // "Triton forward is generally faster than CUDA forward": the upper half of FA1's 30-50%.
  CHECK(forward >= 0.5 * (fa1_fwd_low + fa1_fwd_high));
  CHECK(forward <= 1.10 * fa1_fwd_high);
  // "Triton backward is generally slower than CUDA backward": the lower half of FA1's 25-35%.
  CHECK(backward <= 0.5 * (fa1_bwd_low + fa1_bwd_high));
  CHECK(backward >= 0.90 * fa1_bwd_low);
  // "Overall Triton forward + backward is slightly slower than CUDA forward + backward" (and
  // llm-foundry's "slightly faster"): within 10% of FlashAttention-1, FlashAttention-2 over ~2.
  const double flash2 = forward_backward_eta(p.flash_forward_eta(GpuArchitecture::ampere, AttentionKernel::flash2),
                                             p.flash_backward_eta(GpuArchitecture::ampere, AttentionKernel::flash2));
  const double flash1 = flash2 / fixture()["fa2_paper"]["flash1_vs_flash2"]["flash2_over_flash1"]["around"].as<double>();
  CHECK(forward_backward_eta(forward, backward) == doctest::Approx(flash1).epsilon(0.10));
}

TEST_CASE("a compute-bound attention op with triton takes FlashAttention-2's time over the Triton ratio") {
  const CostParameters params;
  for (const char* name : {"a100-sxm-80gb", "h100-sxm-80gb"}) {
    CAPTURE(name);
    const GpuSpec* gpu = Catalog::builtin().find_gpu(name);
    REQUIRE(gpu != nullptr);
    for (bool backward : {false, true}) {
      // MPT-30B's attention at 8K tokens on one rank: 64 heads of 128, causal; the CTA split known
      // (batch_heads 64), so on the H100 both kernels take FlashAttention-2's split.
      Op op = test::causal_bf16_flash_op(64.0, 8192.0, 128.0, backward, /*known_split=*/true);
      op.attention.kernel = AttentionKernel::flash2;
      const double flash2 = op_time(op, *gpu, params).value() - params.kernel_gap_s;
      op.attention.kernel = AttentionKernel::triton;
      const double triton = op_time(op, *gpu, params).value() - params.kernel_gap_s;
      const double ratio = backward ? kTritonBackwardOverFlash2 : kTritonForwardOverFlash2;
      CHECK(flash2 / triton == doctest::Approx(ratio).epsilon(1e-9));
    }
  }
}
