"""Random effect expressions with heavy sharing (DAGs, deep config-after-loop
chains, structurally equal but distinct copies) through ``subst`` and
``smt.encode``, against simple references written here: a tree-walking
substitution and the three-valued evaluation ``eval3`` on random
assignments. Fixed seed, deterministic."""
import random

from exo_hl.core_ir.syms import Sym
from exo_hl.effects import eexpr as E
from exo_hl.effects import smt as S

IK = [Sym("i%d" % n) for n in range(3)]
QK = [Sym("k%d" % n) for n in range(2)]
BK = [Sym("p%d" % n) for n in range(2)]
DOM = range(-3, 4)
CASES = 600
MAX_TREE = 3000


def copy(e, memo=None):
    """``e`` as new objects (structurally equal; its own sharing kept)."""
    memo = {} if memo is None else memo
    hit = memo.get(id(e))
    if hit is not None:
        return hit[1]
    out = tuple(copy(x, memo) if isinstance(x, tuple) else x for x in e)
    memo[id(e)] = (e, out)
    return out


def tree_size(e, memo=None):
    memo = {} if memo is None else memo
    hit = memo.get(id(e))
    if hit is not None:
        return hit[1]
    n = 1 + sum(tree_size(x, memo) for x in e[1:] if isinstance(x, tuple))
    memo[id(e)] = (e, n)
    return n


def naive_subst(e, env):
    """The substitution as a plain tree walk (the same smart constructors)."""
    tag = e[0]
    if tag == "var":
        return env.get(e[1], e)
    if tag in ("const", "bot"):
        return e
    if tag in ("forall", "exists"):
        inner = {k: v for k, v in env.items() if k != e[1]}
        b = naive_subst(e[2], inner)
        return E.forall(e[1], b) if tag == "forall" else E.exists(e[1], b)
    if tag == "ite":
        return E.ite(*(naive_subst(x, env) for x in e[1:]))
    return E.op(e[1], *(naive_subst(x, env) for x in e[2:]))


def struct_eq(a, b, memo):
    if a is b:
        return True
    if not (isinstance(a, tuple) and isinstance(b, tuple)):
        return type(a) is type(b) and a == b
    k = (id(a), id(b))
    if k not in memo:
        memo[k] = (a, b, len(a) == len(b) and all(
            struct_eq(x, y, memo) for x, y in zip(a, b)))
    return memo[k][2]


class Gen:
    def __init__(self, r):
        self.r = r
        self.ints = ([E.var(k) for k in IK + QK]
                     + [E.const(c) for c in (0, 1, 2, -3)] + [E.bot(E.INT)])
        self.bools = ([E.var(k, E.BOOL) for k in BK]
                      + [E.TRUE, E.FALSE, E.bot(E.BOOL)])

    def pick(self, pool):
        r = self.r
        if r.random() < 0.6:    # mostly recent nodes: deep, shared chains
            x = pool[-1 - min(int(r.expovariate(0.7)), len(pool) - 1)]
        else:
            x = r.choice(pool)
        return copy(x) if r.random() < 0.08 else x

    def step(self):
        r, k = self.r, self.r.random()
        if k < 0.4:
            o = r.choice("+-*/%n+-")
            a = self.pick(self.ints)
            if o == "n":
                e = E.op("neg", a)
            elif o in "/%":
                e = E.op(o, a, E.const(r.choice([1, 2, 3, 4, 7])))
            elif o == "*" and r.random() < 0.7:
                e = E.op(o, a, E.const(r.choice([-1, 2, 3])))
            else:
                e = E.op(o, a, self.pick(self.ints))
            self.ints.append(e)
        elif k < 0.52:
            x = self.pick(self.ints)
            if r.random() < 0.5:    # a config value after a loop
                e = E.ite(E.op("<", x, E.const(r.choice([0, 3, 5]))),
                          E.op("+", x, E.const(1)), x)
            else:
                e = E.ite(self.pick(self.bools), x, self.pick(self.ints))
            self.ints.append(e)
        elif k < 0.6:
            self.bools.append(E.ite(*(self.pick(self.bools)
                                      for _ in range(3))))
        elif k < 0.78:
            o = r.choice(["<", "<=", ">", ">=", "=="])
            self.bools.append(E.op(o, self.pick(self.ints),
                                   self.pick(self.ints)))
        elif k < 0.88:
            o = r.choice(["and", "or", "not", "=="])
            a = self.pick(self.bools)
            self.bools.append(E.op(o, a) if o == "not" else
                              E.op(o, a, self.pick(self.bools)))
        else:
            key = r.choice(QK + IK[:1])
            body = self.pick(self.bools)
            q = E.forall if r.random() < 0.5 else E.exists
            self.bools.append(q(key, body))


def decode(pair, env):
    v, d = pair
    return S.eval_term(v, env, DOM) if S.eval_term(d, env, DOM) else None


def test_subst_and_encode_of_shared_expressions_match_references():
    rng = random.Random(20261127)
    n_subst = n_eval = 0
    for _ in range(CASES):
        g = Gen(rng)
        for _ in range(rng.randint(8, 40)):
            g.step()
        roots = [e for e in g.bools[-3:] + g.ints[-3:]
                 if e[0] not in ("var", "const", "bot")
                 and tree_size(e) <= MAX_TREE]
        envs = []
        for _ in range(6):
            env = {k: rng.randint(-4, 4) for k in IK + QK}
            env.update({k: rng.random() < 0.5 for k in BK})
            envs.append(env)
        memo = {}   # one encoding memo for all roots, as the checks keep
        for e in roots:
            sub = {k: g.pick(g.ints) for k in rng.sample(IK + QK, 2)}
            if rng.random() < 0.5:
                sub[rng.choice(BK)] = g.pick(g.bools)
            got = E.subst(e, sub)
            assert struct_eq(got, naive_subst(e, sub), {}), (E.to_str(e, 300),
                                                             sub)
            n_subst += 1
            ex = [e, copy(e)] + ([got] if tree_size(got) <= MAX_TREE else [])
            pairs = [S.encode(x, memo) for x in ex]
            # structurally equal expressions share one result
            assert pairs[1] is pairs[0]
            assert E.to_str(e) == E.to_str(ex[1])
            for env in envs:
                for x, p in zip(ex, pairs):
                    want = E.eval3(x, env, DOM)
                    assert decode(p, env) == want, (E.to_str(x, 300), env)
                    assert decode(S.encode(x), env) == want
                    n_eval += 1
    assert n_subst > 500 and n_eval > 5000
