# The CPU parts of PyTorch's benchmark recipe (pytorch/tutorials recipes_source/recipes/benchmark.py): two
# ways to a batched dot product, timed with timeit and with torch.utils.benchmark's Timer, tabled by Compare,
# A/B results pickled and read back. Shorter runs than the recipe's (min_run_time 0.01 s, smaller sizes).
import pickle
import timeit
from itertools import product

import minitensor as torch
import minitensor.utils.benchmark as benchmark


def batched_dot_mul_sum(a, b):
    '''Computes batched dot by multiplying and summing'''
    return a.mul(b).sum(-1)


def batched_dot_bmm(a, b):
    '''Computes batched dot by reducing to ``bmm``'''
    a = a.reshape(-1, 1, a.shape[-1])
    b = b.reshape(-1, b.shape[-1], 1)
    return torch.bmm(a, b).flatten(-3)


x = torch.randn(1000, 64)
assert batched_dot_mul_sum(x, x).allclose(batched_dot_bmm(x, x))

t0 = timeit.Timer(stmt='batched_dot_mul_sum(x, x)', setup='from __main__ import batched_dot_mul_sum', globals={'x': x})
print(f'mul_sum(x, x):  {t0.timeit(100) / 100 * 1e6:>5.1f} us')

num_threads = torch.get_num_threads()
t0 = benchmark.Timer(stmt='batched_dot_mul_sum(x, x)', setup='from __main__ import batched_dot_mul_sum',
                     globals={'x': x}, num_threads=num_threads, label='Multithreaded batch dot',
                     sub_label='Implemented using mul and sum')
t1 = benchmark.Timer(stmt='batched_dot_bmm(x, x)', setup='from __main__ import batched_dot_bmm',
                     globals={'x': x}, num_threads=num_threads, label='Multithreaded batch dot',
                     sub_label='Implemented using bmm')
print(t0.timeit(100))
print(t1.timeit(100))
m0 = t0.blocked_autorange(min_run_time=0.01)
print(m0)
print(f"Mean:   {m0.mean * 1e6:6.2f} us")
print(f"Median: {m0.median * 1e6:6.2f} us")
assert m0.median > 0 and m0.number_per_run >= 1 and sum(m0.raw_times) >= 0.01

results = []
sizes = [1, 64, 1024]
for b, n in product(sizes, sizes):
    x = torch.ones((b, n))
    for num_threads in [1, 2]:
        for stmt, fn, description in (('batched_dot_mul_sum(x, x)', 'batched_dot_mul_sum', 'mul/sum'),
                                      ('batched_dot_bmm(x, x)', 'batched_dot_bmm', 'bmm')):
            results.append(benchmark.Timer(stmt=stmt, setup=f'from __main__ import {fn}', globals={'x': x},
                                           num_threads=num_threads, label='Batched dot', sub_label=f'[{b}, {n}]',
                                           description=description).blocked_autorange(min_run_time=0.01))
compare = benchmark.Compare(results)
compare.trim_significant_figures()
compare.colorize()
compare.print()
table = str(compare)
assert "Batched dot" in table and "mul/sum" in table and "2 threads" in table and "[1024, 1024]" in table

ab_test_results = []
for env in ('environment A: mul/sum', 'environment B: bmm'):
    for b, n in ((1, 1), (1024, 100)):
        x = torch.ones((b, n))
        dot_fn = batched_dot_mul_sum if env == 'environment A: mul/sum' else batched_dot_bmm
        m = benchmark.Timer(stmt='batched_dot(x, x)', globals={'x': x, 'batched_dot': dot_fn}, num_threads=1,
                            label='Batched dot', description=f'[{b}, {n}]', env=env)
        m = m.blocked_autorange(min_run_time=0.01)
        ab_test_results.append(pickle.dumps(m))
compare = benchmark.Compare([pickle.loads(i) for i in ab_test_results])
compare.trim_significant_figures()
compare.print()
assert "environment B: bmm" in str(compare)

round_tripped_results = pickle.loads(pickle.dumps(results))
assert str(benchmark.Compare(results)) == str(benchmark.Compare(round_tripped_results))
