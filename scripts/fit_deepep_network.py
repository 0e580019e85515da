#!/usr/bin/env python3
"""Fit the flex dispatcher's network leg (CostParameters::deepep_network_latency_s, deepep_network_eta).

The points are HybridEP's H100 rows of tests/fixtures/reference/hybridep_bandwidth.yaml
(deepseek-ai/DeepEP docs/README_Hybrid-EP.md: 16 / 32 / 64 ranks on 2 / 4 / 8 nodes, 4096 tokens
of hidden 7168 per rank, top 8 of 8 experts per rank, BF16), dispatch and combine. Each row's
time is the bytes its test counts over the bandwidth it reports (the ib convention: every token
once per distinct node its experts reach, the own node included); the bytes on the wire are
(N - 1)/N of those (model/moe_ops.h moe_deepep_bytes). The fit is ordinary least squares of
time = latency + wire_bytes / rate over the six points, once for the "Torch API" columns (what
Megatron-Core calls; the model's figures) and once for the "Kernel Only" columns (for reference).
Prints the fitted figures, each point's error and the error of one flat share of the NIC.

Usage: scripts/fit_deepep_network.py   (from the repository root)
"""

import math

import yaml

NIC_BYTES_PER_S = 50e9  # one 400 Gb/s NIC per GPU on a DGX H100
FLAT_SHARE = 0.70       # the mean share the model applied before this fit


def distinct_nodes(experts, nodes, top_k):
    per_node = experts // nodes
    miss = math.comb(experts - per_node, top_k) / math.comb(experts, top_k)
    return nodes * (1.0 - miss)


def points(rows, column):
    out = []
    for r in rows:
        if r['library'] != 'hybridep' or r['convention'] != 'ib':
            continue
        nodes = r['nodes']
        counted = r['tokens'] * distinct_nodes(r['experts'], nodes, r['top_k']) * r['hidden'] * 2.0
        wire = counted * (nodes - 1) / nodes
        for kind in ('dispatch', 'combine'):
            out.append((f"{r['ranks']} ranks {kind}", wire, counted / (r[f'{kind}_{column}'] * 1e9)))
    return out


def least_squares(pts):
    n = len(pts)
    sx = sum(x for _, x, _ in pts)
    sy = sum(y for _, _, y in pts)
    sxx = sum(x * x for _, x, _ in pts)
    sxy = sum(x * y for _, x, y in pts)
    slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    return (sy - slope * sx) / n, slope


def main():
    rows = yaml.safe_load(open('tests/fixtures/reference/hybridep_bandwidth.yaml'))['rows']
    for column in ('api', 'kernel'):
        pts = points(rows, column)
        latency, slope = least_squares(pts)
        rate = 1.0 / slope
        print(f'{column}: latency {latency * 1e6:.0f} us, rate {rate / 1e9:.1f} GB/s = {rate / NIC_BYTES_PER_S:.3f} of the NIC')
        for name, wire, t in pts:
            fit = latency + wire / rate
            flat = wire / (FLAT_SHARE * NIC_BYTES_PER_S)
            print(f'  {name:22s} wire {wire / 1e6:6.1f} MB  measured {t * 1e3:6.3f} ms  fit {100 * (fit / t - 1):+5.1f}%'
                  f'  flat {FLAT_SHARE} {100 * (flat / t - 1):+5.1f}%')


if __name__ == '__main__':
    main()
