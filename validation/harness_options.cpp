#include "validation/harness_options.h"

#include <algorithm>
#include <charconv>
#include <sstream>

namespace stepcast {

namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator)) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

double parse_double(const std::string& option, const std::string& text) {
  double value = 0.0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    throw HarnessUsageError(option + " expects a number, not '" + text + "'");
  }
  return value;
}

std::int64_t parse_integer(const std::string& option, const std::string& text) {
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    throw HarnessUsageError(option + " expects an integer, not '" + text + "'");
  }
  return value;
}

void check_choices(const std::string& option, const std::vector<std::string>& values,
                   const std::vector<std::string>& choices) {
  for (const auto& v : values) {
    if (std::find(choices.begin(), choices.end(), v) == choices.end()) {
      std::string list;
      for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
      throw HarnessUsageError(option + ": '" + v + "' is not one of: " + list);
    }
  }
}

}  // namespace

std::int64_t parse_size(const std::string& text) {
  if (text.empty()) throw HarnessUsageError("empty size");
  std::int64_t multiplier = 1;
  std::string digits = text;
  switch (text.back()) {
    case 'K': case 'k': multiplier = std::int64_t{1} << 10; digits.pop_back(); break;
    case 'M': case 'm': multiplier = std::int64_t{1} << 20; digits.pop_back(); break;
    case 'G': case 'g': multiplier = std::int64_t{1} << 30; digits.pop_back(); break;
    default: break;
  }
  const std::int64_t value = parse_integer("size", digits);
  if (value <= 0) throw HarnessUsageError("size must be positive, not '" + text + "'");
  return value * multiplier;
}

std::string default_output_path(const HarnessOptions& options) { return "harness-" + options.command + ".json"; }

HarnessOptions parse_harness_options(std::span<const std::string> args) {
  HarnessOptions o;
  o.argv.assign(args.begin(), args.end());
  std::size_t i = 1;
  const auto value_of = [&](const std::string& option) -> std::string {
    if (i + 1 >= args.size()) throw HarnessUsageError(option + " needs a value");
    return args[++i];
  };
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--version") {
      o.version = true;
    } else if (a == "--out" || a == "-o") {
      o.out = value_of(a);
    } else if (a == "--device") {
      o.device = static_cast<int>(parse_integer(a, value_of(a)));
      if (o.device < 0) throw HarnessUsageError("--device must be >= 0");
    } else if (a == "--scenario") {
      o.scenario = value_of(a);
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--list") {
      o.list = true;
    } else if (a == "--precisions") {
      o.precisions = split(value_of(a), ',');
      check_choices(a, o.precisions, {"fp32", "tf32", "fp16", "bf16", "fp8", "int8"});
    } else if (a == "--ops") {
      o.ops = split(value_of(a), ',');
    } else if (a == "--sizes") {
      const auto parts = split(value_of(a), ':');
      if (parts.size() < 2 || parts.size() > 3) throw HarnessUsageError("--sizes expects MIN:MAX[:FACTOR], e.g. 8:1G:2");
      o.min_bytes = parse_size(parts[0]);
      o.max_bytes = parse_size(parts[1]);
      o.size_factor = parts.size() == 3 ? parse_integer(a, parts[2]) : 2;
      if (o.min_bytes > o.max_bytes) throw HarnessUsageError("--sizes: MIN is larger than MAX");
      if (o.size_factor < 2) throw HarnessUsageError("--sizes: FACTOR must be at least 2");
    } else if (a == "--ranks") {
      for (const auto& part : split(value_of(a), ',')) {
        const auto r = parse_integer(a, part);
        if (r < 1) throw HarnessUsageError("--ranks: group sizes must be >= 1");
        o.ranks.push_back(static_cast<int>(r));
      }
    } else if (a == "--max-noise") {
      o.stopping.max_noise = parse_double(a, value_of(a)) / 100.0;  // given in percent, like nvbench
      if (o.stopping.max_noise <= 0.0) throw HarnessUsageError("--max-noise must be positive (percent)");
    } else if (a == "--min-time") {
      o.stopping.min_time = units::seconds(parse_double(a, value_of(a)));
    } else if (a == "--min-samples") {
      o.stopping.min_samples = static_cast<int>(parse_integer(a, value_of(a)));
      if (o.stopping.min_samples < 1) throw HarnessUsageError("--min-samples must be >= 1");
    } else if (a == "--max-samples") {
      o.stopping.max_samples = static_cast<int>(parse_integer(a, value_of(a)));
      if (o.stopping.max_samples < 1) throw HarnessUsageError("--max-samples must be >= 1");
    } else if (a == "--timeout") {
      o.stopping.timeout = units::seconds(parse_double(a, value_of(a)));
    } else if (a == "--throttle-threshold") {
      o.throttle.threshold = parse_double(a, value_of(a));
    } else if (a == "--max-wall") {
      o.max_wall_s = parse_double(a, value_of(a));
      if (o.max_wall_s < 0.0) throw HarnessUsageError("--max-wall must be >= 0");
    } else if (a == "--no-l2-flush") {
      o.l2_flush = false;
    } else if (!a.empty() && a[0] == '-') {
      throw HarnessUsageError("unknown option '" + a + "'");
    } else if (o.command.empty()) {
      o.command = a;
      check_choices("command", {a}, kHarnessCommands);
    } else {
      throw HarnessUsageError("unexpected argument '" + a + "' (one command only)");
    }
  }
  if (o.command.empty() && !o.help && !o.version) throw HarnessUsageError("no command given");
  return o;
}

std::string harness_usage() {
  return R"(usage: stepcast-harness COMMAND [options]

Measures kernels and collectives on this machine's GPUs and writes a versioned JSON file
(validation/SCHEMA.md) for `stepcast calibrate` and `stepcast validate`.

commands:
  selftest      spin kernels of known duration and a device copy check the harness itself
  gemm          cuBLASLt GEMMs: fp32 tf32 fp16 bf16 fp8 int8, transformer shapes, MoE grouped
  attention     fused attention forward/backward, paged-KV decode
  elementwise   rmsnorm layernorm softmax swiglu gelu rope bias_dropout_add
  memory        copy and triad kernels, device-to-device memcpy
  collectives   NCCL all_reduce all_gather reduce_scatter all_to_all broadcast send_recv
                (one process on all local GPUs, or one rank per process under mpirun)
  all           selftest, then every suite above

options:
  -o, --out FILE          output file (default harness-COMMAND.json)
  --device N              GPU to measure (default 0; collectives use all local GPUs)
  --scenario FILE         measure exactly the ops one GPU runs in this scenario
  --quick                 small grids: a smoke test in seconds
  --list                  print the points that would be measured, measure nothing
  --precisions LIST       gemm precisions, e.g. bf16,fp8 (default: all the GPU supports)
  --ops LIST              collectives or elementwise ops to run; attention: forward,backward,decode
  --sizes MIN:MAX[:F]     collective sizes, nccl-tests style (default 8:1G:2)
  --ranks LIST            collective group sizes (default 2,4,8,... up to all GPUs)
  --max-noise PCT         stop when the relative stdev is below PCT percent (default 0.5)
  --min-time S            measured time before convergence may be declared (default 0.5)
  --min-samples N         samples before convergence may be declared (default 10)
  --timeout S             wall-clock limit per point (default 15)
  --max-samples N         stop a point after N samples (default 100000)
  --throttle-threshold X  discard samples below X times the default SM clock (default 0.75)
  --max-wall S            start no new point after S seconds; the file then says complete=false
  --no-l2-flush           do not flush L2 before cold samples
  --version, -h/--help

exit codes: 0 all measured and checked, 1 a check or the selftest failed, 2 bad usage,
            3 CUDA/NCCL error, 77 nothing to measure here (no GPU, or built without CUDA)
)";
}

}  // namespace stepcast
