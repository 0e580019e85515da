// Golden tests of the sweep file loader's error messages: every tests/golden/sweeps/broken/*.yaml
// must fail with exactly the text of its *.expected file (file:line:col, key path, message).
//
// To accept new messages, run with STEPCAST_REGENERATE_GOLDEN=1 (it rewrites the .expected files)
// and review the diff in git.

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "simulator/diagnostics.h"
#include "simulator/sweep_file.h"
#include "tests/support/golden.h"

using namespace stepcast;

namespace {

const std::filesystem::path kCases = "tests/golden/sweeps/broken";

std::string message_of(const std::filesystem::path& file) {
  try {
    load_sweep_file(file.generic_string());
  } catch (const InputError& e) {
    return e.what();
  }
  return "<loaded without error>";
}

}  // namespace

TEST_CASE("every broken sweep file fails with exactly its golden message") {
  test::check_golden_messages(kCases, ".yaml", 10, message_of);
}
