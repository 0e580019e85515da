#pragma once
// Measurement files as `stepcast` reads them: read_measurement_file (validation/measurement_json.h)
// with its errors turned into InputError diagnostics (file:line:column, key path), so a corrupt or
// mismatched file ends `stepcast calibrate` with exit code 1 and a clear message.

#include <filesystem>

#include "validation/measurement.h"

namespace stepcast {

MeasurementFile load_measurement_file(const std::filesystem::path& path);

}  // namespace stepcast
