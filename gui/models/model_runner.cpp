#include "gui/models/model_runner.h"

#include "model/fabric.h"
#include "model/nccl_model.h"
#include "simulator/inference/inference_predictor.h"

namespace stepcast::gui {

ModelRunner::ModelRunner(ModelVariant variant) : m_variant(std::move(variant)), m_training(m_variant.cost) {}

TrainingPrediction ModelRunner::training(const Scenario& scenario, const TrainingPredictorOptions& options) {
  const NcclCollectiveModel collectives(scenario.system, fabric_figures(scenario.system), m_variant.nccl);
  return m_training.predict(scenario, collectives, options);
}

InferencePrediction ModelRunner::inference(const Scenario& scenario, bool time_series) {
  const NcclCollectiveModel collectives(scenario.system, fabric_figures(scenario.system), m_variant.nccl);
  InferencePredictorOptions options;
  options.cost = m_variant.cost;
  options.collectives = &collectives;
  options.time_series = time_series;
  return predict_inference(scenario, options);
}

}  // namespace stepcast::gui
