"""Balanced clustering of facelet colours: k colours, each on at most one face's worth.

A puzzle in any state still has exactly one face's worth of stickers of each colour, so the
assignment of facelets to colour clusters is a transportation problem, not free k-means. Of the
facelets seen, a colour covers at most one face's worth (fewer when some of its stickers are
on unseen facelets, none at all when all are: those clusters are passed as `absent`). Each
round assigns every seen facelet to a cluster by minimum-cost matching (the Hungarian method
on the clusters repeated `capacity` times) and then moves each cluster to its members' mean.
This is what keeps red from swallowing orange under warm light: nine stickers each, always.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linear_sum_assignment

from judgecam.vision.colorspace import ciede2000

logger = logging.getLogger(__name__)

#: Cost that forbids an assignment (a centre must stay in the cluster it defines).
FORBIDDEN = 1e9
#: Most assignment/update rounds; balanced k-means settles in 2-4 on real puzzles.
MAX_ROUNDS = 12


@dataclass(frozen=True)
class Clustering:
    """Cluster index per seen facelet (rows of the input), cluster means and total cost."""

    members: NDArray[np.intp]
    means: NDArray[np.float64]
    cost: float


def squared_distances(labs: NDArray[np.float64], means: NDArray[np.float64]) -> NDArray[np.float64]:
    """(N, K) squared CIEDE2000 between N colours and K cluster means."""
    return ciede2000(labs[:, None, :], means[None, :, :]) ** 2


def pairwise_distances(labs: NDArray[np.float64]) -> NDArray[np.float64]:
    """(N, N) CIEDE2000 from each of N colours (rows) to each (columns): every distance that
    seeding from the colours themselves needs, in one call rather than one per seed."""
    return ciede2000(labs[:, None, :], labs[None, :, :])


def cluster_means(
    labs: NDArray[np.float64], members: NDArray[np.intp], previous: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Mean colour of each cluster's rows; a cluster with none keeps its `previous` mean.

    All clusters at once: each sum adds its rows in row order, as `labs[rows].mean(axis=0)`
    does, so the means are the same to the last bit.
    """
    counts = np.bincount(members, minlength=len(previous))
    sums = np.stack(
        [np.bincount(members, weights=labs[:, c], minlength=len(previous)) for c in range(3)],
        axis=1,
    )
    means = np.array(previous, dtype=np.float64)
    filled = counts > 0
    means[filled] = sums[filled] / counts[filled, None]
    return means


def balanced_assignment(
    cost: NDArray[np.float64], capacities: Sequence[int]
) -> tuple[NDArray[np.intp], float]:
    """Cluster per row minimising total cost with at most `capacities[k]` rows in cluster k."""
    columns = np.repeat(np.arange(len(capacities)), capacities)
    rows, cols = linear_sum_assignment(cost[:, columns])
    members = np.empty(cost.shape[0], dtype=np.intp)
    members[rows] = columns[cols]
    return members, float(cost[rows, columns[cols]].sum())


def balanced_kmeans(
    labs: NDArray[np.float64],
    seeds: NDArray[np.float64],
    capacities: Sequence[int],
    pinned: Mapping[int, int] | None = None,
    rounds: int = MAX_ROUNDS,
    absent: Sequence[int] = (),
    distances: NDArray[np.float64] | None = None,
) -> Clustering:
    """Balanced k-means from `seeds` (K, 3); `pinned` maps row -> cluster it must stay in and
    `absent` lists clusters that must stay empty (colours taken to be on unseen facelets only).
    `distances` is `squared_distances(labs, seeds)` when the caller has it already.

    `rounds=1` gives the balanced assignment to the seeds themselves (means then updated).
    """
    means = np.array(seeds, dtype=np.float64)
    penalty = np.zeros((len(labs), len(means)))
    for row, cluster in (pinned or {}).items():
        penalty[row, :] = FORBIDDEN
        penalty[row, cluster] = 0.0
    penalty[:, list(absent)] = FORBIDDEN
    members = np.full(len(labs), -1, dtype=np.intp)
    cost = 0.0
    for round_ in range(rounds):
        squared = (
            distances if round_ == 0 and distances is not None else squared_distances(labs, means)
        )
        new_members, cost = balanced_assignment(squared + penalty, capacities)
        if np.array_equal(new_members, members):
            break
        members = new_members
        means = cluster_means(labs, members, means)
    return Clustering(members, means, cost)


def farthest_point_rows(
    labs: NDArray[np.float64],
    distances: NDArray[np.float64],
    fixed: Sequence[int],
    count: int,
    start: int | None = None,
) -> list[int]:
    """Rows of `count` new seeds (not the `fixed` rows themselves), each the colour of `labs`
    farthest (CIEDE2000, read from `distances = pairwise_distances(labs)`) from all seeds.

    The first new seed is row `start` if given, else (with no fixed seeds) the colour farthest
    from the mean colour. Farthest-point seeding gives each distinct sticker colour a seed
    whatever the light, since the colours of a puzzle are chosen to be far apart. Seeds are
    facelets' own colours, so every distance the seeding needs is in `distances`, computed once.
    """
    added: list[int] = []
    if start is not None and count > 0:
        added.append(start)
    elif not fixed and count > 0:
        added.append(int(np.argmax(ciede2000(labs, labs.mean(axis=0)))))
    while len(added) < count:
        nearest = np.min(distances[:, [*fixed, *added]], axis=1)
        added.append(int(np.argmax(nearest)))
    return added
