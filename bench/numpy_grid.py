"""A careful numpy Grid: the peer of `rbp predict grid` in `npm run bench:notebook`.

Reads a v3 request file ({"y", "X", "theta"?, "options"?}), evaluates every combination of
attributes (all 2^K - 1 of them: the Grid of K <= 10 with max_iter >= 2^K - 1), both censors and
the thresholds of options.threshold (default 0, .2, .5, .8), as docs/methodology.md sections 1 to 4
and 7 say (the same formulas as bench/baseline.ts), vectorised over rows and thresholds: per
combination one mean, covariance and inverse (numpy.linalg), relevance and similarity of every row
as matrix products, the censor percentiles of every threshold in one numpy.percentile call, the
PSR weights of every threshold as one (T x N) array. Writes yhat, fit, adjusted fit and the
composite weights as JSON on stdout. Run with Debian's /usr/bin/python3 (python3-numpy).
"""

import itertools
import json
import sys

import numpy as np


def psr_weights(relevance, include):
    """PSR weights (T x N) for the rows each row of `include` (T x N, bool) retains; NaN rows when invalid."""
    N = relevance.shape[0]
    n = include.sum(axis=1)
    r_in = np.where(include, relevance, 0.0)
    sum_r = r_in.sum(axis=1)
    sum_r2_in = (r_in * r_in).sum(axis=1)
    full_var = (relevance @ relevance) / (N - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        phi = n / N
        rbar = sum_r / n
        part_var = sum_r2_in / (n - 1)
        lam2 = full_var / part_var
        w = 1.0 / N + (lam2 / (n - 1))[:, None] * (r_in - (phi * rbar)[:, None])
    valid = (n >= 2) & (part_var > 0)
    w[~valid] = np.nan
    return w, valid


def correlations(W, y):
    """Pearson correlation of every row of W with y; 0 where either is constant."""
    dw = W - W.mean(axis=1, keepdims=True)
    dy = y - y.mean()
    suv = dw @ dy
    suu = (dw * dw).sum(axis=1)
    svv = dy @ dy
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = suv / np.sqrt(suu * svv)
    return np.where((suu > 0) & (svv > 0), rho, 0.0)


def grid(y, X, theta, thresholds):
    N, K = X.shape
    sum_a = 0.0
    sum_a2 = 0.0
    sum_a_yhat = 0.0
    sum_aw = np.zeros(N)
    for k in range(1, K + 1):
        for cols in itertools.combinations(range(K), k):
            cols = list(cols)
            x = X[:, cols]
            xbar = x.mean(axis=0)
            d = x - xbar
            cov = (d.T @ d) / (N - 1)
            try:
                inv = np.linalg.inv(cov)
            except np.linalg.LinAlgError:
                continue
            dth = theta[cols] - xbar
            info_theta = dth @ inv @ dth
            di = d @ inv
            relevance = di @ dth
            info_x = (di * d).sum(axis=1)
            similarity = relevance - 0.5 * (info_x + info_theta)
            for scores in (relevance, similarity):
                cuts = np.percentile(scores, 100 * thresholds)
                include = scores[None, :] >= cuts[:, None]
                w_plus, valid = psr_weights(relevance, include)
                w_minus, valid_minus = psr_weights(relevance, ~include)
                rho_plus = correlations(np.nan_to_num(w_plus), y)
                rho_minus = correlations(np.nan_to_num(w_minus), y)
                fit = rho_plus * rho_plus
                asym = np.where(valid_minus, 0.5 * (rho_plus - rho_minus) ** 2, 0.0)
                a = k * (fit + asym)
                keep = valid & (a > 0)
                if not keep.any():
                    continue
                a = a[keep]
                w = w_plus[keep]
                yhat = w @ y
                sum_a += a.sum()
                sum_a2 += (a * a).sum()
                sum_a_yhat += (a * yhat).sum()
                sum_aw += a @ w
    if sum_a > 0:
        weights = sum_aw / sum_a
        yhat = sum_a_yhat / sum_a
    else:
        weights = np.full(N, 1.0 / N)
        yhat = y.mean()
    rho = correlations(weights[None, :], y)[0]
    return {
        "yhat": float(yhat),
        "fit": float(rho * rho),
        "adjusted_fit": float(sum_a2 / sum_a) if sum_a > 0 else 0.0,
        "weights": weights.tolist(),
    }


def main():
    with open(sys.argv[1]) as f:
        request = json.load(f)
    y = np.asarray(request["y"], dtype=float)
    X = np.asarray(request["X"], dtype=float)
    theta = np.asarray(request.get("theta") or X[-1], dtype=float)
    options = request.get("options") or {}
    thresholds = np.asarray(options.get("threshold", [0, 0.2, 0.5, 0.8]), dtype=float)
    json.dump(grid(y, X, theta, thresholds), sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
