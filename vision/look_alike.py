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

A cluster also looks like another colour when its chromaticity, which shade leaves alone, is
nearer that colour's than its own name's (seed 1357 rig2 `--hands` c0014). `shaded_decides` asks
the same of single facelets: a penalty may not rest on facelets whose chromaticity is another
colour's of the reading. `lone_decides` asks it of facelets far from every other facelet of
their colour while a colour of the scheme goes unused (one merged into a colour by the price
stage 4 sets on each colour). `look_alike_decides` runs them all, then takes every facelet any
of them doubts together: light can split or shade several colours at once.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from judgecam.puzzle.observation import MISSING, UNKNOWN
from judgecam.puzzle.registry import get_puzzle
from judgecam.puzzle.verdict import DNF, PLUS_TWO, holds_without, judge_unseen
from judgecam.vision.color_model import FaceletSample
from judgecam.vision.color_naming import lab_to_linear_rgb, linear_rgb_to_lab
from judgecam.vision.color_shading import chromaticity
from judgecam.vision.colorspace import ciede2000

if TYPE_CHECKING:
    from judgecam.calibration.scheme import ColorScheme
    from judgecam.vision.fuse import Fusion

logger = logging.getLogger(__name__)


def misnamed_clusters(fusion: Fusion, scheme: ColorScheme | None = None) -> list[tuple[str, str]]:
    """(name, looks like) for every seen cluster that looks like another seen cluster's colour
    rather than its own name, where the two together fit one colour's count (more facelets than
    a face has are two colours).

    It looks like another colour if its nearest scheme colour under the light stage 4 estimated
    is another cluster's name, or if its chromaticity (brightness aside) lies nearer another
    cluster's than its own name's under that light. The second catches a colour split off by
    shade: seed 1357 rig2 `--hands` c0014, whites in shadow at L 50-65 beside whites blown out
    to L 100 were named green; in CIEDE2000 they were nearest orange, a colour with too many
    facelets to share, but in chromaticity white's, far from green's.
    """
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
    # Brightness aside: each cluster's chromaticity against its name's under the light (the
    # scheme colour with the light's gains taken back out) and against the other clusters'.
    chroma = chromaticity(labs)
    expected = chromaticity(
        linear_rgb_to_lab(lab_to_linear_rgb(reference.centres()) / np.asarray(colors.gains))
    )
    found = []
    for index, (cluster, row) in enumerate(zip(seen, distances, strict=True)):
        looks_like = [reference.names[int(np.argmin(row))]]
        if cluster.name in reference.names:
            own = float(
                np.linalg.norm(chroma[index] - expected[reference.names.index(cluster.name)])
            )
            gaps = np.linalg.norm(chroma - chroma[index], axis=1)
            looks_like += [
                seen[position].name
                for position in np.argsort(gaps, kind="stable")
                if position != index and gaps[position] < own
            ]
        for nearest in looks_like:
            if (
                nearest != cluster.name
                and nearest in counts
                and cluster.count + counts[nearest] <= per_color
                and (cluster.name, nearest) not in found
            ):
                found.append((cluster.name, nearest))
    return found


def _rests_on(fusion: Fusion, facelets: list[int]) -> bool:
    """Whether the verdict changes with `facelets` taken as unseen (`holds_without`); False for
    none."""
    observation = fusion.observation
    return bool(facelets) and not holds_without(
        fusion.verdict.verdict,
        judge_unseen(get_puzzle(observation.puzzle), observation, facelets),
    )


def misnamed_decides(fusion: Fusion, scheme: ColorScheme | None = None) -> str | None:
    """A reason for review if a penalty rests on the facelets of a cluster that looks like
    another cluster's colour (`misnamed_clusters`), each such cluster asked alone.

    Penalties only: a solved reading has every face in one colour, so a split colour cannot
    make it (its two parts would share a face); a misnamed face is then only a wrong name, and
    leaving a whole face unseen would send 7 of 70 solved corpus captures to a judge.
    """
    if fusion.verdict.verdict not in (PLUS_TWO, DNF):
        return None
    return _misnamed_reason(fusion, misnamed_clusters(fusion, scheme))


def _misnamed_reason(fusion: Fusion, clusters: list[tuple[str, str]]) -> str | None:
    """`misnamed_decides`' reason for the (name, nearest) `clusters`, or None."""
    verdict = fusion.verdict.verdict
    observation = fusion.observation
    for name, nearest in clusters:
        facelets = [i for i, label in enumerate(observation.facelets) if label == name]
        if not _rests_on(fusion, facelets):
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


def shaded_decides(fusion: Fusion) -> str | None:
    """A reason for review if a penalty rests on facelets whose chromaticity is another seen
    colour's rather than their own (`shaded_facelets`).

    Stage 4 tells colours apart in CIEDE2000, lightness included, and lights each face as a
    whole; a shadow over part of a face (a turned layer's, a hand's) darkens a sticker towards
    the darker colour of a pair of like hues, red for an orange, while its chromaticity stays
    put (`color_shading.chromaticity`). On a render never seen before (seed 4646 rig3 c0028, a
    +2), an orange at L 40 beside the face's oranges at L 58 was read red with confidence 1.0:
    DNF. The facelets `shaded_facelets` finds are taken as unseen, and if the penalty then does
    not hold (`holds_without`), a judge looks.
    """
    if fusion.verdict.verdict not in (PLUS_TWO, DNF):
        return None
    return _shaded_reason(fusion, shaded_facelets(fusion))


def _shaded_reason(fusion: Fusion, flagged: list[int]) -> str | None:
    """`shaded_decides`' reason for the `flagged` facelets, or None."""
    verdict = fusion.verdict.verdict
    if not _rests_on(fusion, flagged):
        return None
    logger.info("%s rests on %d facelets of another colour's chromaticity", verdict, len(flagged))
    return (
        f"the {verdict} rests on {len(flagged)} facelet(s) whose hue is another colour's "
        "(review without them): a shadow or a light over part of a face?"
    )


def shaded_facelets(fusion: Fusion) -> list[int]:
    """Seen facelets whose chromaticity is nearer another colour's mean than their own's.

    Each facelet is compared with the mean chromaticity of every colour read; its own colour
    without the facelets of that colour on its face (`_own_colour_elsewhere`)."""
    if not fusion.samples:
        return []
    observation = fusion.observation
    labels = observation.facelets
    seen = [
        (index, sample)
        for index, sample in enumerate(fusion.samples)
        if isinstance(sample, FaceletSample) and labels[index] not in (UNKNOWN, MISSING)
    ]
    if len(seen) < 2:
        return []
    spec = get_puzzle(observation.puzzle)
    chroma = chromaticity(np.array([sample.lab for _, sample in seen]))
    names = np.array([labels[index] for index, _ in seen])
    faces = np.array([spec.facelets[index].face for index, _ in seen])
    flagged = []
    for row, (index, _) in enumerate(seen):
        distances = {}
        for name in sorted(set(names.tolist())):
            members = names == name
            if name == labels[index]:
                members = _own_colour_elsewhere(members, faces, row)
            distances[name] = float(np.linalg.norm(chroma[members].mean(axis=0) - chroma[row]))
        if min(distances, key=distances.__getitem__) != labels[index]:
            flagged.append(index)
    return flagged


def _own_colour_elsewhere(
    members: NDArray[np.bool_], faces: NDArray[np.str_], row: int
) -> NDArray[np.bool_]:
    """The facelets of facelet `row`'s own colour to compare it with: those on other faces.

    A shadow darkens several stickers of one face together; compared with their colour's
    mean including each other, two shaded stickers named alike vouch for each other (corpus
    c0016 rendered darker, as by an underexposed camera: two neon greens in a face's shade
    named yellow beside the face's two lit greens, the one other yellow a true one). Without
    that colour on another face, every other facelet of it; alone, the facelet itself."""
    elsewhere = members & (faces != faces[row])
    if elsewhere.any():
        return elsewhere
    others = members.copy()
    if others.sum() > 1:
        others[row] = False
    return others


#: A facelet farther than this (CIEDE2000) from every other facelet read in its colour is lone
#: (`lone_facelets`): further apart than two colours of a scheme that a dim or tinted light
#: brings close (white and yellow under a warm cast are ~10 apart in the camera's CIELAB).
LONE_DELTA_E = 20.0


def lone_facelets(fusion: Fusion, scheme: ColorScheme | None = None) -> list[int]:
    """Seen facelets farther than LONE_DELTA_E from every other facelet of their colour, in a
    reading that leaves a colour of the scheme unused.

    Stage 4 sets a price on each colour it uses, so a sticker of a colour seen nowhere else
    may be merged into the nearest colour rather than named on its own (corpus c0016 rendered
    darker, as by an underexposed camera: a neon pink, the scheme's red, 25 from the two
    oranges and read orange with confidence 0.92). In session 16's readings of the corpus and
    29 sets (rig poses) 1.2 % of 36,351 seen facelets were misread, and 41 % of the 111 lone
    ones; same-colour facelets on faces lit differently are the rest (whites up to 77 apart).
    """
    from judgecam.calibration.scheme import builtin_scheme

    colors = fusion.colors
    if colors is None or not fusion.samples:
        return []
    labels = fusion.observation.facelets
    seen = [
        (index, sample)
        for index, sample in enumerate(fusion.samples)
        if isinstance(sample, FaceletSample) and labels[index] not in (UNKNOWN, MISSING)
    ]
    reference = scheme if scheme is not None else builtin_scheme(colors.puzzle)
    names = np.array([labels[index] for index, _ in seen])
    if len(seen) < 2 or set(reference.names) <= set(names.tolist()):
        return []
    labs = np.array([sample.lab for _, sample in seen], dtype=np.float64)
    distances = ciede2000(labs[:, None, :], labs[None, :, :])
    flagged = []
    for row, (index, _) in enumerate(seen):
        mates = names == names[row]
        mates[row] = False
        if mates.any() and float(distances[row, mates].min()) > LONE_DELTA_E:
            flagged.append(index)
    return flagged


def lone_decides(fusion: Fusion, scheme: ColorScheme | None = None) -> str | None:
    """A reason for review if a penalty rests on lone facelets (`lone_facelets`)."""
    if fusion.verdict.verdict not in (PLUS_TWO, DNF):
        return None
    return _lone_reason(fusion, lone_facelets(fusion, scheme))


def _lone_reason(fusion: Fusion, flagged: list[int]) -> str | None:
    """`lone_decides`' reason for the `flagged` facelets, or None."""
    verdict = fusion.verdict.verdict
    if not _rests_on(fusion, flagged):
        return None
    logger.info("%s rests on %d lone facelets", verdict, len(flagged))
    return (
        f"the {verdict} rests on {len(flagged)} facelet(s) far from every other facelet of "
        "their colour while a colour of the scheme is unused (review without them): a colour "
        "merged into another?"
    )


def look_alike_decides(fusion: Fusion, scheme: ColorScheme | None = None) -> str | None:
    """A reason for review if a penalty rests on facelets that look like another colour: a
    misnamed cluster, shaded facelets or lone ones, each kind asked alone, then every facelet
    any of them doubts taken together.

    Light can split or shade several colours at once, and the penalty must not rest on all
    the doubts between them: corpus c0154 under a warm cast (whites in shade named red, greens
    split in two, a DNF that held without either), c0057 as plain `check` (a solved 2x2x2 read
    DNF the same way), c0016 darker (two shaded greens named yellow and a lone pink merged
    into orange: a +2 read DNF that held without either).
    """
    verdict = fusion.verdict.verdict
    if verdict not in (PLUS_TWO, DNF):
        return None
    # Each kind of doubt is found once, asked alone, then taken together.
    clusters = misnamed_clusters(fusion, scheme)
    shaded = shaded_facelets(fusion)
    lone = lone_facelets(fusion, scheme)
    reason = (
        _misnamed_reason(fusion, clusters)
        or _shaded_reason(fusion, shaded)
        or _lone_reason(fusion, lone)
    )
    if reason is not None:
        return reason
    misnamed = {name for name, _ in clusters}
    observation = fusion.observation
    doubted = sorted(
        {i for i, label in enumerate(observation.facelets) if label in misnamed}
        | set(shaded)
        | set(lone)
    )
    if not _rests_on(fusion, doubted):
        return None
    logger.info("%s rests on %d facelets that look like another colour", verdict, len(doubted))
    return (
        f"the {verdict} rests on {len(doubted)} facelet(s) that look like another colour of the "
        "reading (split, shaded or merged), taken together (review without them all): colours "
        "changed by light or glare?"
    )
