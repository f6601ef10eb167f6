"""Two colours of the reading that look like one colour of the scheme: the verdict may not rest
on the one that had to take another name.

Stage 4 names its clusters after the scheme's colours with one light estimate for all of them,
each name used once. When two clusters look like the same scheme colour, one of them carries a
name it does not look like: a colour split in two by light (a face lit by a lamp's reflection
and a face in shadow) or by glare, with the split-off part given a colour that is nowhere to be
seen. On c0019 of a fresh render (seed 7777, a +2 under glare), two bright green facelets were
named red (CIEDE2000 72 from red after the light estimate, nearest green), and the DNF rested on
them. The pieces and the colour counts allowed it, so no other check doubted it.

`misnamed_decides` takes each such cluster's facelets as unseen: if a penalty then changes
(beyond only ruling out the harsher penalty, `lightens_only`), the reading is not trusted.
It only doubts, never merges: over seven test sets (rig poses) 225 clusters looked like another
cluster's colour, and only 14 of them were truly that colour (all reviewed anyway); the rest
were two colours, mostly an orange that the light estimate puts nearer red.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np

from judgecam.puzzle.registry import get_puzzle
from judgecam.puzzle.verdict import DNF, PLUS_TWO, holds_without, judge_unseen
from judgecam.vision.color_naming import lab_to_linear_rgb, linear_rgb_to_lab
from judgecam.vision.colorspace import ciede2000

if TYPE_CHECKING:
    from judgecam.calibration.scheme import ColorScheme
    from judgecam.vision.fuse import Fusion

logger = logging.getLogger(__name__)


def misnamed_clusters(fusion: Fusion, scheme: ColorScheme | None = None) -> list[tuple[str, str]]:
    """(name, looks like) for every seen cluster whose nearest scheme colour, under the light
    stage 4 estimated, is not its name but the name of another seen cluster, where the two
    together fit one colour's count (more facelets than a face has are two colours)."""
    from judgecam.calibration.scheme import builtin_scheme

    colors = fusion.colors
    if colors is None:
        return []
    seen = [cluster for cluster in colors.clusters if cluster.count > 0]
    if len(seen) < 2:
        return []
    reference = scheme if scheme is not None else builtin_scheme(colors.puzzle)
    labs = np.array([cluster.lab for cluster in seen], dtype=np.float64)
    adapted = linear_rgb_to_lab(lab_to_linear_rgb(labs) * np.asarray(colors.gains))
    distances = ciede2000(adapted[:, None, :], reference.centres()[None, :, :])
    counts = {cluster.name: cluster.count for cluster in seen}
    per_color = len(colors.labels) // len(reference.colors)
    found = []
    for cluster, row in zip(seen, distances, strict=True):
        nearest = reference.names[int(np.argmin(row))]
        if (
            nearest != cluster.name
            and nearest in counts
            and cluster.count + counts[nearest] <= per_color
        ):
            found.append((cluster.name, nearest))
    return found


def misnamed_decides(fusion: Fusion, scheme: ColorScheme | None = None) -> str | None:
    """A reason for review if a penalty rests on the facelets of a cluster that looks like
    another cluster's colour (`misnamed_clusters`).

    Penalties only: a solved reading has every face in one colour, so a split colour cannot
    make it (its two parts would share a face); a misnamed face is then only a wrong name, and
    leaving a whole face unseen would send 7 of 70 solved corpus captures to a judge.
    """
    verdict = fusion.verdict.verdict
    if verdict not in (PLUS_TWO, DNF):
        return None
    observation = fusion.observation
    spec = get_puzzle(observation.puzzle)
    for name, nearest in misnamed_clusters(fusion, scheme):
        facelets = [i for i, label in enumerate(observation.facelets) if label == name]
        trial = judge_unseen(spec, observation, facelets)
        if holds_without(verdict, trial):
            continue
        logger.info(
            "%s rests on %d facelets named %s that look %s", verdict, len(facelets), name, nearest
        )
        return (
            f"the {verdict} rests on {len(facelets)} facelet(s) read {name} that look {nearest}, "
            "like another colour of the reading (review without them): one colour split by "
            "light or glare?"
        )
    return None
