# Generates testdata/dist_fixtures.json for the distributions package with
# PyTorch 1.13: log_prob, entropy, mean, variance, stddev, cdf, icdf and KL
# divergences on broadcast parameter batches (float64), and their
# gradients w.r.t. the parameters (torch.autograd.grad of the sum).
# Run: /usr/bin/python3 distributions/testdata/gen_dist_fixtures.py
import json
import math
import os

import torch
import torch.distributions as D

torch.manual_seed(0)


def enc(x):
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def tensor(t):
    t = t.detach()
    return {"shape": list(t.shape), "dtype": "int64" if t.dtype == torch.int64 else str(t.dtype)[len("torch."):],
            "data": [enc(float(v)) for v in t.reshape(-1).tolist()]}


DT = torch.float64


def T(x):
    return torch.tensor(x, dtype=DT)


CTORS = {
    "Normal": lambda p: D.Normal(p["loc"], p["scale"]),
    "LogNormal": lambda p: D.LogNormal(p["loc"], p["scale"]),
    "Uniform": lambda p: D.Uniform(p["low"], p["high"]),
    "Exponential": lambda p: D.Exponential(p["rate"]),
    "Laplace": lambda p: D.Laplace(p["loc"], p["scale"]),
    "Gamma": lambda p: D.Gamma(p["concentration"], p["rate"]),
    "Beta": lambda p: D.Beta(p["concentration1"], p["concentration0"]),
    "Dirichlet": lambda p: D.Dirichlet(p["concentration"]),
    "Poisson": lambda p: D.Poisson(p["rate"]),
    "BernoulliProbs": lambda p: D.Bernoulli(probs=p["probs"]),
    "BernoulliLogits": lambda p: D.Bernoulli(logits=p["logits"]),
    "BinomialProbs": lambda p: D.Binomial(p["total_count"], probs=p["probs"]),
    "BinomialLogits": lambda p: D.Binomial(p["total_count"], logits=p["logits"]),
    "GeometricProbs": lambda p: D.Geometric(probs=p["probs"]),
    "GeometricLogits": lambda p: D.Geometric(logits=p["logits"]),
    "CategoricalProbs": lambda p: D.Categorical(probs=p["probs"]),
    "CategoricalLogits": lambda p: D.Categorical(logits=p["logits"]),
    "OneHotCategoricalProbs": lambda p: D.OneHotCategorical(probs=p["probs"]),
    "OneHotCategoricalLogits": lambda p: D.OneHotCategorical(logits=p["logits"]),
    "MultivariateNormal": lambda p: D.MultivariateNormal(p["loc"], covariance_matrix=p["covariance_matrix"]),
    "MultivariateNormalPrecision": lambda p: D.MultivariateNormal(p["loc"], precision_matrix=p["precision_matrix"]),
    "MultivariateNormalScaleTril": lambda p: D.MultivariateNormal(p["loc"], scale_tril=p["scale_tril"]),
    "StudentT": lambda p: D.StudentT(p["df"], p["loc"], p["scale"]),
    "Cauchy": lambda p: D.Cauchy(p["loc"], p["scale"]),
    "HalfNormal": lambda p: D.HalfNormal(p["scale"]),
    "HalfCauchy": lambda p: D.HalfCauchy(p["scale"]),
    "Gumbel": lambda p: D.Gumbel(p["loc"], p["scale"]),
    "Chi2": lambda p: D.Chi2(p["df"]),
    "VonMises": lambda p: D.VonMises(p["loc"], p["concentration"]),
    "Weibull": lambda p: D.Weibull(p["scale"], p["concentration"]),
    "Pareto": lambda p: D.Pareto(p["scale"], p["alpha"]),
    "RelaxedBernoulliProbs": lambda p: D.RelaxedBernoulli(p["temperature"], probs=p["probs"]),
    "RelaxedBernoulliLogits": lambda p: D.RelaxedBernoulli(p["temperature"], logits=p["logits"]),
    "RelaxedOneHotCategoricalProbs": lambda p: D.RelaxedOneHotCategorical(p["temperature"], probs=p["probs"]),
    "RelaxedOneHotCategoricalLogits": lambda p: D.RelaxedOneHotCategorical(p["temperature"], logits=p["logits"]),
    "ContinuousBernoulliProbs": lambda p: D.ContinuousBernoulli(probs=p["probs"]),
    "ContinuousBernoulliLogits": lambda p: D.ContinuousBernoulli(logits=p["logits"]),
    "LowRankMultivariateNormal": lambda p: D.LowRankMultivariateNormal(p["loc"], p["cov_factor"], p["cov_diag"]),
}


def spec(name, params, n=None, base=None):
    return {"name": name, "params": params, "n": n, "base": base}


def build(s):
    """Returns the torch distribution of spec s and its leaf parameters."""
    if s["name"] == "Independent":
        b, leaves = build(s["base"])
        return D.Independent(b, s["n"]), leaves
    leaves = [(k, v.clone().requires_grad_(True)) for k, v in s["params"]]
    return CTORS[s["name"]](dict(leaves)), leaves


def enc_spec(s):
    out = {"name": s["name"]}
    if s["name"] == "Independent":
        out["base"], out["n"] = enc_spec(s["base"]), s["n"]
    else:
        out["params"] = [[k, tensor(v)] for k, v in s["params"]]
    return out


def grads(out, leaves):
    if not out.requires_grad:
        return None
    gs = torch.autograd.grad(out.sum(), [v for _, v in leaves], allow_unused=True)
    return {k: tensor(g if g is not None else torch.zeros_like(v)) for (k, v), g in zip(leaves, gs)}


cases = []  # filled by gen, once per dtype


def case(s, value=None, q=None):
    c = {"spec": enc_spec(s), "batch_shape": None, "event_shape": None}
    d, leaves = build(s)
    c["batch_shape"], c["event_shape"] = list(d.batch_shape), list(d.event_shape)
    c["has_rsample"] = d.has_rsample
    if value is not None:
        c["value"] = tensor(value)
    if q is not None:
        c["q"] = tensor(q)
    for what, f in [("log_prob", lambda d: d.log_prob(value) if value is not None else None),
                    ("cdf", lambda d: d.cdf(value) if value is not None else None),
                    ("icdf", lambda d: d.icdf(q) if q is not None else None),
                    ("entropy", lambda d: d.entropy()),
                    ("mean", lambda d: d.mean), ("variance", lambda d: d.variance),
                    ("stddev", lambda d: d.stddev)]:
        d, leaves = build(s)
        try:
            out = f(d)
        except NotImplementedError:
            c[what] = "not_implemented"
            continue
        if out is None:
            continue
        c[what] = tensor(out)
        g = grads(out, leaves)
        if g is not None:
            c[what + "_grad"] = g
    cases.append(c)


kls = []


def kl(p, q):
    dp, lp = build(p)
    dq, lq = build(q)
    out = D.kl_divergence(dp, dq)
    c = {"p": enc_spec(p), "q": enc_spec(q), "kl": tensor(out)}
    g = grads(out, [("p." + k, v) for k, v in lp] + [("q." + k, v) for k, v in lq])
    if g is not None:
        c["grad"] = g
    kls.append(c)


def gen():
    loc = T([[0.3], [-1.2]])          # [2, 1]
    scale = T([0.5, 1.0, 2.5])        # [3]
    val = T([[0.1, -0.7, 2.0], [1.5, 0.0, -3.0]])
    u = T([0.05, 0.5, 0.9])
    case(spec("Normal", [("loc", loc), ("scale", scale)]), val, u)
    case(spec("LogNormal", [("loc", loc), ("scale", scale)]), val.abs() + 0.2, u)
    case(spec("Laplace", [("loc", loc), ("scale", scale)]), val, u)
    case(spec("Uniform", [("low", T([[-1.0], [0.5]])), ("high", T([1.0, 2.0, 3.5]))]),
         T([[0.0, 0.7, 2.9], [0.6, 1.9, 3.0]]), u)
    case(spec("Exponential", [("rate", T([[0.5, 1.0, 3.0]]))]), T([[0.0], [0.4], [2.5]]), u)
    case(spec("Gamma", [("concentration", T([[0.5], [2.0]])), ("rate", T([0.7, 1.0, 4.0]))]),
         T([[0.3, 1.2, 2.0], [0.05, 4.0, 0.9]]))
    case(spec("Beta", [("concentration1", T([[0.5], [2.0]])), ("concentration0", T([0.7, 1.0, 4.0]))]),
         T([[0.3, 0.01, 0.99], [0.5, 0.8, 0.1]]))
    case(spec("Dirichlet", [("concentration", T([[0.5, 1.0, 3.0], [2.0, 2.0, 0.3]]))]),
         T([[0.2, 0.3, 0.5], [0.7, 0.2, 0.1]]))
    case(spec("Poisson", [("rate", T([[0.5, 3.0, 12.0]]))]), T([[0.0], [2.0], [15.0]]))
    case(spec("BernoulliProbs", [("probs", T([[0.2, 0.5, 0.9]]))]), T([[0.0], [1.0]]))
    case(spec("BernoulliLogits", [("logits", T([-2.0, 0.0, 1.5]))]), T([[0.0], [1.0]]))
    case(spec("BinomialProbs", [("total_count", T([[5.0], [12.0]])), ("probs", T([0.0, 0.3, 0.9, 1.0]))]),
         T([[0.0, 2.0, 4.0, 5.0], [1.0, 12.0, 11.0, 12.0]]))
    case(spec("BinomialLogits", [("total_count", T([7.0])), ("logits", T([[-1.0, 0.5, 3.0]]))]), T([[0.0], [3.0], [7.0]]))
    case(spec("GeometricProbs", [("probs", T([[0.2, 0.5, 0.9]]))]), T([[0.0], [3.0]]))
    case(spec("GeometricLogits", [("logits", T([-2.0, 0.0, 1.5]))]), T([[0.0], [3.0]]))
    cp = T([[0.2, 0.3, 0.5], [1.0, 3.0, 0.0]])  # unnormalised, a zero
    case(spec("CategoricalProbs", [("probs", cp)]), torch.tensor([[0, 1], [2, 1], [1, 0]]))
    case(spec("CategoricalLogits", [("logits", T([[0.1, -1.0, 2.0], [0.0, 0.5, 0.3]]))]), torch.tensor([[2], [0]]))
    case(spec("OneHotCategoricalProbs", [("probs", cp)]), T([[[0, 1, 0], [1, 0, 0]], [[0, 0, 1], [0, 1, 0]]]))
    case(spec("OneHotCategoricalLogits", [("logits", T([[0.1, -1.0, 2.0], [0.0, 0.5, 0.3]]))]), T([[0, 0, 1], [1, 0, 0]]))
    case(spec("Independent", None, 1, spec("Normal", [("loc", loc), ("scale", scale)])), val)
    case(spec("Independent", None, 2, spec("Laplace", [("loc", loc), ("scale", scale)])), val)

    n1 = spec("Normal", [("loc", loc), ("scale", scale)])
    n2 = spec("Normal", [("loc", T([0.0, 1.0, -0.5])), ("scale", T([[1.5], [0.3]]))])
    kl(n1, n2)
    kl(spec("LogNormal", n1["params"]), spec("LogNormal", n2["params"]))
    kl(spec("Laplace", n1["params"]), spec("Laplace", n2["params"]))
    kl(spec("BernoulliProbs", [("probs", T([0.2, 0.5, 0.0, 1.0]))]), spec("BernoulliProbs", [("probs", T([0.3, 0.5, 0.6, 0.7]))]))
    kl(spec("BernoulliLogits", [("logits", T([-2.0, 0.0, 1.5]))]), spec("BernoulliLogits", [("logits", T([0.5, -1.0, 0.2]))]))
    kl(spec("CategoricalProbs", [("probs", cp)]), spec("CategoricalProbs", [("probs", T([0.3, 0.3, 0.4]))]))
    kl(spec("CategoricalLogits", [("logits", T([[0.1, -1.0, 2.0], [0.0, 0.5, 0.3]]))]), spec("CategoricalLogits", [("logits", T([0.3, 0.3, 0.4]))]))
    kl(spec("OneHotCategoricalLogits", [("logits", T([[0.1, -1.0, 2.0], [0.0, 0.5, 0.3]]))]), spec("OneHotCategoricalLogits", [("logits", T([0.3, 0.3, 0.4]))]))
    kl(spec("Uniform", [("low", T([0.0, -1.0, 0.5])), ("high", T([1.0, 1.0, 2.0]))]), spec("Uniform", [("low", T([-0.5, -2.0, 1.0])), ("high", T([1.5, 2.0, 3.0]))]))
    kl(spec("Exponential", [("rate", T([[0.5, 1.0, 3.0]]))]), spec("Exponential", [("rate", T([[2.0], [0.3]]))]))
    kl(spec("Gamma", [("concentration", T([[0.5], [2.0]])), ("rate", T([0.7, 1.0, 4.0]))]), spec("Gamma", [("concentration", T([1.5, 0.3, 2.0])), ("rate", T([2.0]))]))
    kl(spec("Beta", [("concentration1", T([[0.5], [2.0]])), ("concentration0", T([0.7, 1.0, 4.0]))]), spec("Beta", [("concentration1", T([1.5, 0.3, 2.0])), ("concentration0", T([2.0]))]))
    kl(spec("Dirichlet", [("concentration", T([[0.5, 1.0, 3.0], [2.0, 2.0, 0.3]]))]), spec("Dirichlet", [("concentration", T([1.0, 2.0, 0.5]))]))
    kl(spec("Poisson", [("rate", T([0.5, 3.0, 12.0]))]), spec("Poisson", [("rate", T([[1.0], [4.0]]))]))
    kl(spec("BinomialProbs", [("total_count", T([10.0, 10.0, 12.0])), ("probs", T([0.2, 0.5, 0.9]))]),
       spec("BinomialProbs", [("total_count", T([10.0])), ("probs", T([0.3, 0.5, 0.4]))]))
    kl(spec("GeometricProbs", [("probs", T([0.2, 0.5, 0.9]))]), spec("GeometricProbs", [("probs", T([[0.3], [0.6]]))]))
    kl(spec("Independent", None, 1, n1), spec("Independent", None, 1, n2))

    # pairs of different kinds (inf where p's support leaves q's)
    nrm = spec("Normal", [("loc", T([0.3, -1.0, 2.0])), ("scale", T([[0.7], [1.5]]))])
    lap = spec("Laplace", [("loc", T([0.1, 0.5, -2.0])), ("scale", T([[0.4], [2.0]]))])
    uni = spec("Uniform", [("low", T([0.1, 0.2, -0.5])), ("high", T([0.9, 0.6, 1.5]))])
    uni01 = spec("Uniform", [("low", T([0.0, -0.1, 0.0])), ("high", T([1.0, 1.0, 0.9]))])
    bet3 = spec("Beta", [("concentration1", T([0.5, 2.0, 3.0])), ("concentration0", T([1.5, 0.4, 1.0]))])
    ext = spec("Exponential", [("rate", T([0.5, 2.0, 3.0]))])
    gam = spec("Gamma", [("concentration", T([0.5, 2.0, 7.0])), ("rate", T([[1.5], [0.4]]))])
    bet = spec("Beta", [("concentration1", T([0.5, 2.0, 3.0])), ("concentration0", T([[1.5], [0.4]]))])
    poi = spec("Poisson", [("rate", T([0.5, 2.0, 3.0]))])
    ber = spec("BernoulliProbs", [("probs", T([0.2, 0.5, 0.9]))])
    kl(ber, poi)
    for q in [ext, gam, nrm]:
        kl(bet, q)
    for q in [uni, uni01]:
        kl(bet3, q)
    for q in [bet, uni, gam, nrm]:
        kl(ext, q)
    for q in [bet, uni, ext, nrm]:
        kl(gam, q)
    for q in [bet, ext, gam, uni, nrm]:
        kl(lap, q)
    for q in [bet, ext, gam, uni, lap]:
        kl(nrm, q)
    kl(poi, ber)
    kl(poi, spec("BinomialProbs", [("total_count", T([4.0])), ("probs", T([0.3]))]))
    kl(uni, bet3)
    kl(uni01, bet3)
    for q in [ext, nrm, spec("Gamma", [("concentration", T([0.5, 2.0, 7.0])), ("rate", T([1.5, 0.4, 1.0]))])]:
        kl(uni, q)

    gen2(loc, scale, val, u, nrm, lap, uni, bet, bet3, ext, gam)


def gen2(loc, scale, val, u, nrm, lap, uni, bet, bet3, ext, gam):
    """The cases of the distributions added after the first set (appended,
    so the earlier fixtures keep their values)."""
    mloc = T([[0.1, -0.3, 0.5], [1.0, 0.0, -1.0]])  # [2, 3]
    cov = T([[2.0, 0.3, -0.4], [0.3, 1.0, 0.2], [-0.4, 0.2, 0.8]])
    tril = T([[[1.0, 0.0, 0.0], [0.5, 0.7, 0.0], [-0.2, 0.3, 1.5]],
              [[0.4, 0.0, 0.0], [0.0, 2.0, 0.0], [1.0, -1.0, 0.6]]])  # [2, 3, 3]
    prec = T([[1.5, -0.2, 0.1], [-0.2, 0.9, 0.3], [0.1, 0.3, 2.0]])
    mval = T([[[0.0, 0.0, 0.0]], [[1.0, -1.0, 0.5]], [[-2.0, 0.3, 1.2]]])  # [3, 1, 3]
    case(spec("MultivariateNormal", [("loc", mloc), ("covariance_matrix", cov)]), mval)
    case(spec("MultivariateNormalScaleTril", [("loc", T([0.2, -0.1, 0.4])), ("scale_tril", tril)]), mval)
    case(spec("MultivariateNormalPrecision", [("loc", mloc), ("precision_matrix", prec)]), mval)
    df = T([0.8, 1.5, 4.0])
    case(spec("StudentT", [("df", df), ("loc", loc), ("scale", scale)]), val)
    case(spec("Cauchy", [("loc", loc), ("scale", scale)]), val, u)
    case(spec("HalfNormal", [("scale", scale)]), val.abs(), u)
    case(spec("HalfCauchy", [("scale", scale)]), val.abs(), u)
    case(spec("Gumbel", [("loc", loc), ("scale", scale)]), val, u)
    case(spec("Chi2", [("df", T([[0.5], [3.0]]))]), T([[0.3, 1.2, 2.0], [0.05, 4.0, 0.9]]))
    case(spec("VonMises", [("loc", T([0.3, -1.0, 2.5])), ("concentration", T([[0.5], [5.0]]))]),
         T([[0.1, -0.7, 2.0], [1.5, 0.0, -3.0]]))
    case(spec("Weibull", [("scale", T([[0.5], [2.0]])), ("concentration", T([0.7, 1.0, 3.5]))]),
         T([[0.3, 1.2, 2.0], [0.05, 4.0, 0.9]]), u)
    case(spec("Pareto", [("scale", T([[1.0], [2.0]])), ("alpha", T([0.8, 1.5, 3.0]))]),
         T([[1.0, 2.5, 4.0], [2.0, 3.0, 10.0]]), u)

    kl(spec("MultivariateNormal", [("loc", mloc), ("covariance_matrix", cov)]),
       spec("MultivariateNormalScaleTril", [("loc", T([0.2, -0.1, 0.4])), ("scale_tril", tril)]))
    kl(spec("MultivariateNormalPrecision", [("loc", T([0.2, -0.1, 0.4])), ("precision_matrix", prec)]),
       spec("MultivariateNormal", [("loc", mloc), ("covariance_matrix", cov)]))
    s2 = T([[1.5], [0.3]])
    l2 = T([0.0, 1.0, -0.5])
    kl(spec("HalfNormal", [("scale", scale)]), spec("HalfNormal", [("scale", s2)]))
    kl(spec("Cauchy", [("loc", loc), ("scale", scale)]), spec("Cauchy", [("loc", l2), ("scale", s2)]))
    kl(spec("HalfCauchy", [("scale", scale)]), spec("HalfCauchy", [("scale", s2)]))
    kl(spec("Gumbel", [("loc", loc), ("scale", scale)]), spec("Gumbel", [("loc", l2), ("scale", s2)]))
    par = spec("Pareto", [("scale", T([0.5, 1.0, 2.0])), ("alpha", T([0.8, 1.5, 3.0]))])
    par2 = spec("Pareto", [("scale", T([1.0, 0.5, 2.0])), ("alpha", T([2.0, 1.0, 0.5]))])
    kl(par, par2)
    chi = spec("Chi2", [("df", T([0.5, 3.0, 7.0]))])
    kl(chi, spec("Chi2", [("df", T([[1.0], [4.0]]))]))
    kl(chi, gam)
    kl(chi, ext)
    kl(ext, chi)
    gum = spec("Gumbel", [("loc", T([0.3, -1.0, 2.0])), ("scale", T([0.7, 1.5, 0.4]))])
    nrm1 = spec("Normal", [("loc", T([0.3, -1.0, 2.0])), ("scale", T([0.7, 1.5, 0.4]))])
    ext1 = spec("Exponential", [("rate", T([0.5, 2.0, 3.0]))])
    gam1 = spec("Gamma", [("concentration", T([0.5, 2.0, 7.0])), ("rate", T([1.5, 0.4, 1.0]))])
    kl(bet, par)
    for q in [par, gum]:
        kl(ext, q)
        kl(gam, q)
    for q in [bet, ext, gam, par, uni, nrm]:
        kl(gum, q)
    kl(lap, par)
    kl(nrm, par)
    kl(nrm, gum)
    for q in [bet3, uni, ext1, gam1, nrm1]:
        kl(par, q)
    kl(uni, gum)
    kl(spec("Uniform", [("low", T([0.6, 1.2, 2.5])), ("high", T([0.9, 1.6, 3.0]))]), par)

    temp = T(0.7)
    case(spec("RelaxedBernoulliProbs", [("temperature", temp), ("probs", T([[0.2, 0.5, 0.9]]))]), T([[0.01], [0.5], [0.97]]))
    case(spec("RelaxedBernoulliLogits", [("temperature", temp), ("logits", T([-2.0, 0.0, 1.5]))]), T([[0.3], [0.8]]))
    case(spec("RelaxedOneHotCategoricalProbs", [("temperature", temp), ("probs", T([[0.2, 0.3, 0.5], [1.0, 3.0, 0.5]]))]),
         T([[[0.1, 0.3, 0.6], [0.8, 0.15, 0.05]], [[0.2, 0.2, 0.6], [0.01, 0.9, 0.09]]]))
    case(spec("RelaxedOneHotCategoricalLogits", [("temperature", T(2.5)), ("logits", T([[0.1, -1.0, 2.0], [0.0, 0.5, 0.3]]))]),
         T([[0.1, 0.3, 0.6], [0.8, 0.15, 0.05]]))
    cbp = T([0.2, 0.4995, 0.9])
    case(spec("ContinuousBernoulliProbs", [("probs", cbp)]), T([[0.0], [0.3], [1.0]]), u)
    case(spec("ContinuousBernoulliLogits", [("logits", T([[-2.0], [0.001], [1.5]]))]), T([0.1, 0.5, 0.95]), u)
    cb = spec("ContinuousBernoulliProbs", [("probs", cbp)])
    kl(cb, spec("ContinuousBernoulliLogits", [("logits", T([[-1.0], [0.0], [2.0]]))]))
    kl(bet3, cb)
    for q in [par, ext1, nrm1, uni, spec("Uniform", [("low", T([-0.5, 0.0, -1.0])), ("high", T([1.5, 2.0, 1.0]))])]:
        kl(cb, q)
    for p in [ext1, gam1, gum, lap, nrm1, par, uni,
              spec("Uniform", [("low", T([0.1, 0.0, 0.2])), ("high", T([0.9, 0.5, 0.3]))])]:
        kl(p, cb)

    W = T([[0.5, -1.0], [0.3, 0.2], [1.2, 0.0]])  # [3, 2]
    W2 = T([[[0.1], [0.8], [-0.5]], [[1.0], [0.0], [0.4]]])  # [2, 3, 1]
    lr = spec("LowRankMultivariateNormal", [("loc", mloc), ("cov_factor", W), ("cov_diag", T([0.5, 1.0, 0.3]))])
    lr2 = spec("LowRankMultivariateNormal", [("loc", T([0.2, -0.1, 0.4])), ("cov_factor", W2), ("cov_diag", T([[0.7, 0.2, 1.1], [1.0, 1.0, 2.0]]))])
    case(lr, mval)
    case(lr2, mval)
    mvn = spec("MultivariateNormal", [("loc", mloc), ("covariance_matrix", cov)])
    mvt = spec("MultivariateNormalScaleTril", [("loc", T([0.2, -0.1, 0.4])), ("scale_tril", tril)])
    kl(lr, lr2)
    kl(mvn, lr2)
    kl(mvt, lr)
    kl(lr2, mvn)
    kl(lr, mvt)


result = {"torch": torch.__version__}

# torch's implicit reparameterisation gradient dx/dalpha of Gamma(alpha, 1)
# draws, on a grid that reaches each of its three approximations
alphas, xs = [], []
for a in [0.05, 0.3, 1.0, 2.5, 7.9, 8.5, 20.0, 150.0]:
    for r in [0.01, 0.3, 0.7, 0.95, 1.05, 1.6, 3.0]:
        alphas.append(a)
        xs.append(a * r)
    alphas += [a, a]
    xs += [0.5, 0.79]
a64, x64 = torch.tensor(alphas, dtype=torch.float64), torch.tensor(xs, dtype=torch.float64)
result["gamma_grad"] = {"alpha": tensor(a64), "x": tensor(x64), "grad": tensor(torch._standard_gamma_grad(a64, x64))}
for DT, suffix in [(torch.float64, ""), (torch.float32, "32")]:
    cases, kls = [], []
    gen()
    result["cases" + suffix], result["kl" + suffix] = cases, kls

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dist_fixtures.json")
with open(out, "w") as f:
    json.dump(result, f, indent=None, separators=(",", ":"))
print("wrote", out, len(result["cases"]), "cases,", len(result["kl"]), "kl, twice (float64, float32)")
