#include "validation/measurement_input.h"

#include "simulator/diagnostics.h"
#include "validation/measurement_json.h"

namespace stepcast {

MeasurementFile load_measurement_file(const std::filesystem::path& path) {
  try {
    return read_measurement_file(path);
  } catch (const MeasurementFileError& e) {
    Diagnostic d;
    d.file = e.source();
    d.line = e.line();
    d.column = e.column();
    d.key_path = e.key_path();
    d.message = e.message();
    throw InputError(std::vector<Diagnostic>{d});
  }
}

}  // namespace stepcast
