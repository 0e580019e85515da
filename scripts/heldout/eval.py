#!/usr/bin/env python3
"""Held-out evaluation for issue #8: predicts every mapped row of a held-out directory (*.yaml in the
TRANSCRIBE.md schema, kept OUTSIDE the repository) with a stepcast binary and reports the error of
the step time against the published figure.

    python3 scripts/heldout/eval.py build/bin/stepcast --rows DIR [--only SUBSTR] [--csv OUT] [--quiet]

DIR defaults to $STEPCAST_HELDOUT_ROWS. Rows are mapped to scenarios by rules.py (rules, never
per-row tweaks); the scenarios are written to --scenarios DIR (default: a temporary directory). The
reference step time is the row's measured step_time_s, else global_batch x seq_len /
(tokens/s/GPU x GPUs), else the publisher's FLOPs per step (flops.py) / (TFLOP/s/GPU x GPUs).
$STEPCAST_EVAL_ARGS is appended to every `predict` (e.g. "--calibration probe.json --force" to try
other constants).
"""
import argparse
import concurrent.futures
import glob
import json
import os
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rules  # noqa: E402
import flops  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def num(v):
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    try:
        return float(str(v).replace(",", "").strip())
    except (TypeError, ValueError):
        return None


def reference_step(row):
    m = row.get("measured") or {}
    st = num(m.get("step_time_s"))
    if st:
        return st, "step_time_s"
    tps = num(m.get("tokens_per_sec_per_gpu"))
    tf = num(m.get("model_tflops_per_gpu")) or num(m.get("tflops_per_gpu"))
    together = "together" in str((row.get("source") or {}).get("repo") or "").lower()
    if not tps and tf and not together:  # Together's fork states no FLOP formula for its TFLOP/s
        try:
            fl = flops.flops_per_step(row)
        except Exception:
            fl = None
        if fl:
            return fl / (tf * 1e12 * int(row["gpus"])), "TFLOP/s/GPU by the publisher's formula (flops.py)"
    try:
        if tps:
            return int(row["global_batch"]) * int(row["seq_len"]) / (tps * int(row["gpus"])), "tokens/s/GPU"
    except (TypeError, ValueError):
        return None, None
    return None, None


def dedup_key(row):
    m = row.get("measured") or {}
    ref, _ = reference_step(row)
    return (str(row.get("gpu")), str(row.get("model")).lower(), row.get("gpus"), str(row.get("precision")).upper(),
            row.get("seq_len"), row.get("global_batch"), row.get("micro_batch"), row.get("tp") or 1, row.get("pp") or 1,
            row.get("cp") or 1, row.get("ep") or 1, row.get("vpp") or 1, round(ref, 3) if ref else None)


def families(row):
    out = []
    gpu = str(row.get("gpu", ""))
    prec = str(row.get("precision", "")).upper()
    cp = row.get("cp") or 1
    if cp > 1:
        out.append("cp_long" if row["seq_len"] >= 32768 else "cp_short")
    rec = rules.clean_recipe(row)
    if row.get("fsdp") is True or rec.get("fsdp"):
        out.append("fsdp")
    if any(k in prec for k in ("FP8", "MX", "NVFP4", "FP4")):
        out.append("fp8_blackwell" if "B200" in gpu or "GB" in gpu or "B300" in gpu else "fp8_hopper")
    if (row.get("ep") or 1) > 1:
        out.append("moe_ep")
    if (row.get("vpp") or 1) > 1:
        out.append("interleaved")
        if row["gpus"] >= 1024:
            out.append("interleaved_1k")
    return out


def predict(binary, path):
    extra = os.environ.get("STEPCAST_EVAL_ARGS", "").split()
    r = subprocess.run([binary, "predict", path, "--format", "json"] + extra, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"rc {r.returncode}"
    j = json.loads(r.stdout)
    return j, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--rows", default=os.environ.get("STEPCAST_HELDOUT_ROWS"))
    ap.add_argument("--scenarios", default=None)
    ap.add_argument("--only", default=None)
    ap.add_argument("--csv", default=None)
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()
    if not a.rows or not os.path.isdir(a.rows):
        ap.error("name the held-out rows directory with --rows DIR or STEPCAST_HELDOUT_ROWS (kept outside the repository)")
    rows = []
    for f in sorted(glob.glob(os.path.join(a.rows, "*.yaml"))):
        doc = yaml.safe_load(open(f)) or {}
        fam = doc.get("source_family") or os.path.basename(f)[:-5]
        for r in doc.get("rows") or []:
            r["_file"] = os.path.basename(f)
            r["_family"] = fam
            rows.append(r)
    seen = {}
    unique = []
    dups = 0
    for r in rows:
        k = dedup_key(r)
        if k in seen:
            dups += 1
            continue
        seen[k] = r["id"]
        unique.append(r)
    rows = unique
    print(f"rows read {len(rows) + dups}, duplicates dropped {dups}")
    if a.only:
        rows = [r for r in rows if a.only in r["id"]]
    scen_dir = a.scenarios or tempfile.mkdtemp(prefix="stepcast-heldout-")
    os.makedirs(scen_dir, exist_ok=True)
    jobs = []
    skipped = []
    for r in rows:
        ref, how = reference_step(r)
        if ref is None:
            skipped.append((r["id"], "no measured step time or tokens/s/GPU"))
            continue
        text, why = rules.scenario(r)
        if text is None:
            skipped.append((r["id"], why))
            continue
        path = os.path.join(scen_dir, r["id"] + ".yaml")
        with open(path, "w") as f:
            f.write(text)
        jobs.append((r, ref, path))
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        futs = {ex.submit(predict, a.binary, p): (r, ref, p) for r, ref, p in jobs}
        for fu in concurrent.futures.as_completed(futs):
            r, ref, p = futs[fu]
            j, err = fu.result()
            results.append((r, ref, j, err))
    results.sort(key=lambda t: t[0]["id"])
    errs = []
    by_fam = {}
    nofit = 0
    failed = []
    lines = []
    for r, ref, j, err in results:
        if j is None:
            failed.append((r["id"], err))
            continue
        pred = j["step_time_s"]
        e = (pred - ref) / ref
        fits = j.get("fits", True)
        nofit += 0 if fits else 1
        errs.append(e)
        for fam in families(r) + ["src:" + r["_family"]]:
            by_fam.setdefault(fam, []).append(e)
        lines.append(f"{r['id']:<60} meas {ref:9.3f} pred {pred:9.3f} err {e*100:+7.1f}%{'' if fits else '  NOFIT'}")
    if not a.quiet:
        print("\n".join(lines))
    for i, w in skipped:
        print(f"SKIP {i}: {w}")
    for i, w in failed:
        print(f"FAIL {i}: {w}")
    if errs:
        mae = sum(abs(e) for e in errs) / len(errs)
        within = sum(1 for e in errs if abs(e) <= 0.20)
        print(f"\nrows evaluated {len(errs)} (skipped {len(skipped)}, failed {len(failed)})")
        print(f"MAE {mae*100:.1f}%  bias {sum(errs)/len(errs)*100:+.1f}%  within 20%: {within}/{len(errs)}  NOFIT {nofit}")
        feat = [e for (r, ref, j, err) in results if j for e in [(j["step_time_s"] - ref) / ref] if families(r)]
        if feat:
            print(f"feature rows (cp, fsdp, fp8, moe_ep, interleaved): n={len(feat)} MAE {sum(abs(x) for x in feat)/len(feat)*100:.1f}%"
                  f"  within 20%: {sum(1 for x in feat if abs(x) <= 0.2)}/{len(feat)}")
        for fam in sorted(by_fam):
            v = by_fam[fam]
            print(f"  {fam:<18} n={len(v):3d} MAE {sum(abs(x) for x in v)/len(v)*100:5.1f}%  bias {sum(v)/len(v)*100:+6.1f}%"
                  f"  >20%: {sum(1 for x in v if abs(x) > 0.2)}")
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("id,measured_s,predicted_s,error,fits\n")
            for r, ref, j, err in results:
                if j:
                    f.write(f"{r['id']},{ref},{j['step_time_s']},{(j['step_time_s']-ref)/ref},{int(j.get('fits', True))}\n")


if __name__ == "__main__":
    main()
