#pragma once
// User-input errors: what was wrong, where, and what was expected.
//
// A Diagnostic points at file:line:column (1-based) and the key path in the document
// ("parallel.tp"), says what was found and what was expected, and suggests a fix for typos.
// Loaders collect every diagnostic of a file and throw one InputError holding them all, so a user
// fixes a file in one pass. Only main() turns errors into exit codes:
//   InputError -> 1 (bad input), UsageError -> 2 (bad command line), InfeasibleError -> 3.

#include <stdexcept>
#include <string>
#include <vector>

namespace stepcast {

struct Diagnostic {
  std::string file;        // as given by the user, or "<builtin>/catalog/gpus.yaml"
  int line = 0;            // 1-based; 0 when unknown
  int column = 0;          // 1-based; 0 when unknown
  std::string key_path;    // "parallel.tp"; empty for whole-file problems
  std::string message;     // what is wrong, e.g. "unknown key 'tpp'"
  std::string suggestion;  // e.g. "did you mean 'tp'?"; may be empty
  // True for a cross-field consistency check (tp*pp*dp*cp == gpus, heads % tp, ...) made after
  // every field was read; false for a problem with one value (type, unit, range, unknown key).
  // A sweep uses it to tell a bad axis value from a point that is merely inconsistent.
  bool consistency = false;

  // "file:line:col: error: key.path: message; suggestion"
  [[nodiscard]] std::string to_string() const;
};

class InputError : public std::runtime_error {
 public:
  explicit InputError(std::vector<Diagnostic> diagnostics);
  explicit InputError(const std::string& message);
  [[nodiscard]] const std::vector<Diagnostic>& diagnostics() const { return m_diagnostics; }

 private:
  std::vector<Diagnostic> m_diagnostics;
};

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class InfeasibleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The closest candidate to `word` by edit distance, or empty when none is close enough to be a
// plausible typo (distance > max(2, |word|/3)).
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace stepcast
