import numpy as np

from tinynet.shuffle import epoch_order, epoch_orders, orders_from


def test_every_order_is_a_permutation():
    for n in (1, 2, 4, 17, 1000):
        for epoch in range(5):
            assert sorted(epoch_order(3, epoch, n)) == list(range(n))


def test_order_is_a_pure_function_of_seed_and_epoch():
    np.testing.assert_array_equal(epoch_order(7, 12, 50), epoch_order(7, 12, 50))
    assert not np.array_equal(epoch_order(7, 12, 50), epoch_order(7, 13, 50))
    assert not np.array_equal(epoch_order(7, 12, 50), epoch_order(8, 12, 50))


def test_orders_of_four_are_uniform():
    # 24,000 epochs over the 24 permutations of 4 samples: each count is Binomial(24000, 1/24),
    # mean 1000, sd 31.2. The chi-square statistic has 23 degrees of freedom; its 99.9 %
    # quantile is 49.7, so a uniform shuffler fails this 1 time in 1000 (and it is seeded).
    counts = {}
    for epoch in range(24_000):
        key = tuple(epoch_order(2024, epoch, 4))
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 24
    observed = np.array(list(counts.values()))
    chi2 = np.sum((observed - 1000.0) ** 2 / 1000.0)
    assert chi2 < 49.7


def test_orders_drawn_in_blocks_are_the_epochs_orders():
    """shuffle.orders_from draws many epochs at once; each must be epoch_orders(seeds, e, n),
    across block boundaries, from a first epoch that starts no block, for blocks of 64
    epochs (few keys), of a few, and of one (many keys)."""
    seeds = np.array([0, 5, 2**40 + 3])
    for n, epochs in ((4, 150), (5000, 7), (40_000, 3)):
        drawn = orders_from(seeds, 37, n)
        for epoch in range(37, 37 + epochs):
            np.testing.assert_array_equal(next(drawn), epoch_orders(seeds, epoch, n))
