#!/usr/bin/env python3
"""The development set's step-time errors under a probe: each row of
tests/fixtures/reference/dev_training_runs.yaml that scripts/dev_scenarios.py maps, predicted by the
CLI with extra arguments (`--constant NAME=VALUE`, `--set key=value`), against the same reference
times the fidelity test uses.

    scripts/dev_eval.py build/bin/stepcast                                  # the model as it is
    scripts/dev_eval.py build/bin/stepcast --constant flash_shape.tile=0  # a probe: attention without its CTA split

The reference step times and the unprobed predictions are read from the table the development-set
test prints (build/bin/training_fidelity_tests -tc="*development-set*" -s), so they are the test's
own: Megatron-Bridge rows' derived iteration times, and the Llama 3 paper rows' TFLOP/s converted
by the model's step FLOPs (tests/fidelity/dev_training_fidelity_test.cpp). The probe is applied to
every row; the table gives base -> probe per row, and the mean absolute error and the rows beyond
20% of both. scripts/heldout/eval.py does the same for the held-out rows (STEPCAST_EVAL_ARGS).
"""

import json
import os
import re
import subprocess
import sys

ROW = re.compile(r"^([a-z0-9_.-]+)\s+([0-9.]+)\s+([0-9.]+)\s+[-+][0-9.]+%")


def reference_rows(tests_binary):
    out = subprocess.run([tests_binary, "-tc=*development-set*", "-s"], capture_output=True, text=True)
    rows = []
    for line in out.stdout.splitlines():
        m = ROW.match(line)
        if m:
            rows.append((m.group(1), float(m.group(2)), float(m.group(3))))
    if not rows:
        raise SystemExit(f"no development-set table in the output of {tests_binary}")
    return rows


def predict(stepcast, scenario, extra):
    out = subprocess.run([stepcast, "predict", scenario, "--format", "json"] + extra, capture_output=True, text=True)
    if out.returncode not in (0, 3):  # 3: --strict's does-not-fit; predictions still print
        raise SystemExit(f"{scenario}: {out.stderr.strip()}")
    return json.loads(out.stdout)["step_time_s"]


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    stepcast = sys.argv[1]
    extra = sys.argv[2:]
    tests_binary = os.path.join(os.path.dirname(stepcast), "training_fidelity_tests")
    rows = reference_rows(tests_binary)
    base_errors, probe_errors = [], []
    for rid, ref, base in rows:
        probe = predict(stepcast, f"tests/fixtures/dev_scenarios/{rid}.yaml", extra)
        base_errors.append(base / ref - 1.0)
        probe_errors.append(probe / ref - 1.0)
        print(f"{rid:50s} ref {ref:8.3f}  {100 * base_errors[-1]:+6.1f}% -> {100 * probe_errors[-1]:+6.1f}%")

    def mae(errors):
        return 100.0 * sum(abs(e) for e in errors) / len(errors)

    def beyond(errors):
        return sum(abs(e) > 0.2 for e in errors)

    print(f"development set, {len(rows)} rows: MAE {mae(base_errors):.1f}% -> {mae(probe_errors):.1f}%, "
          f"beyond 20%: {beyond(base_errors)} -> {beyond(probe_errors)}")


if __name__ == "__main__":
    main()
