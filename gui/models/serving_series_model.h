#pragma once
// A serving run over time (InferencePrediction::time_series): one row per sample with the requests
// waiting for admission, the sequences in running batches and the KV-cache occupancy.

#include <vector>

#include "gui/models/table_model.h"
#include "model/prediction.h"

namespace stepcast::gui {

class ServingSeriesModel : public TableModel {
  Q_OBJECT

 public:
  explicit ServingSeriesModel(QObject* parent = nullptr);

  void set_series(std::vector<ServingSample> samples);
  void clear() { set_series({}); }
  [[nodiscard]] const std::vector<ServingSample>& samples() const { return m_samples; }

 private:
  std::vector<ServingSample> m_samples;
};

}  // namespace stepcast::gui
