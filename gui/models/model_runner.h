#pragma once
// Runs the simulator's predictors for one model variant (datasheet or calibrated): the training
// step predictor and the inference predictor, each with the variant's cost constants and its NCCL
// constants in the "nccl" collective model (simulator/collective_models.h builds the same model
// with NCCL's defaults). Plain C++; one runner per thread.

#include "model/prediction.h"
#include "model/scenario.h"
#include "simulator/calibration_profile.h"
#include "simulator/training_predictor.h"

namespace stepcast::gui {

class ModelRunner {
 public:
  explicit ModelRunner(ModelVariant variant);

  TrainingPrediction training(const Scenario& scenario, const TrainingPredictorOptions& options);
  InferencePrediction inference(const Scenario& scenario, bool time_series);

  [[nodiscard]] const ModelVariant& variant() const { return m_variant; }

 private:
  ModelVariant m_variant;
  TrainingPredictor m_training;
};

}  // namespace stepcast::gui
