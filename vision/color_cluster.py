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
) -> Clustering:
    """Balanced k-means from `seeds` (K, 3); `pinned` maps row -> cluster it must stay in and
    `absent` lists clusters that must stay empty (colours taken to be on unseen facelets only).

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
    for _ in range(rounds):
        new_members, cost = balanced_assignment(
            squared_distances(labs, means) + penalty, capacities
        )
        if np.array_equal(new_members, members):
            break
        members = new_members
        means = cluster_means(labs, members, means)
    return Clustering(members, means, cost)


def farthest_point_seeds(
    labs: NDArray[np.float64], fixed: NDArray[np.float64], count: int, start: int | None = None
) -> NDArray[np.float64]:
    """`count` new seeds (not `fixed` itself), each the colour farthest (CIEDE2000) from all seeds.

    The first new seed is row `start` if given, else (with no fixed seeds) the colour farthest
    from the mean colour. Farthest-point seeding gives each distinct sticker colour a seed
    whatever the light, since the colours of a puzzle are chosen to be far apart.
    """
    seeds = list(np.asarray(fixed, dtype=np.float64).reshape(-1, 3))
    added: list[NDArray[np.float64]] = []
    if start is not None and count > 0:
        added.append(labs[start])
    elif not seeds and count > 0:
        added.append(labs[int(np.argmax(ciede2000(labs, labs.mean(axis=0))))])
    while len(added) < count:
        chosen = np.array(seeds + added)
        nearest = np.min(ciede2000(labs[:, None, :], chosen[None, :, :]), axis=1)
        added.append(labs[int(np.argmax(nearest))])
    return np.array(added, dtype=np.float64).reshape(-1, 3)
