"""Stage 4 of `judgecam check`: the colour of every facelet, with a confidence.

Colours are resolved from the puzzle itself, in steps that each use a fact about puzzles rather
than a threshold tuned to one camera:

1. Balanced clustering (`color_cluster`): as many clusters as faces, each holding at most one
   face's worth of facelets, seeded by the centres where the puzzle has them (a centre defines
   its face's colour), otherwise from several starts (farthest-point, the scheme, seeded random
   facelets). When facelets are unseen, a colour may show fewer stickers than a face's worth or
   none at all (the bottom face of a solved puzzle), so the colours without a seen centre may
   also be left out entirely, as many as the unseen facelets can hold. Candidates compete by
   how well their colours fit (a likelihood with each colour's own noise, shrunk towards the
   pooled noise), plus the cost of making them legal (step 3), plus a price per colour
   actually used (`color_penalty`): otherwise one more colour always fits a little better, and
   a uniform face is split in two to use up a colour that is simply not in view.
2. Piece constraints (`color_pieces`): the labelling is refined piece by piece, every piece of
   the solved puzzle used once in one of its rotations, alternating with the cluster means; the
   arrangement of colours on faces is read from the centres or, without centres, inferred.
3. Legality (`color_legal`): if the result is no puzzle that turning can reach (two pieces
   swapped, a twisted corner), the cheapest single correction that is legal is taken. With
   unseen facelets, a labelling is legal when some filling of the unseen ones is
   (`judgecam.puzzle.completion`): the guess the piece matching put there does not count.
4. Naming (`color_naming`): clusters get the names of the scheme (built in, or calibrated),
   one name each, with the light estimated from the puzzle (von Kries gains) and only
   rotations of the scheme's arrangement allowed.
5. Same colour, different light (`color_shading`): CIEDE2000 sees a face half in shadow as
   two tight groups, and a colour not in view can hold the dark ones. Two clusters whose
   brightness-free chromaticity differs by less than the price of a colour are merged when
   the counts allow it (the split is then no rival); when only the pieces or legality forbid
   the merge, their facelets get no confidence (a review, not a confident split). Conversely,
   a cluster of two groups on different faces that differ by more than that price in
   chromaticity and in hue is split where a rival splits it (`_two_colours_under_one_light`).
6. Confidence: the margin between the best labelling and the best one giving the facelet
   another colour (by piece, by a swap of centres, or by a rival local optimum), in squared
   noise units (CIEDE2000 over the pooled spread of the clusters). A rival that only makes a
   new colour of facelets that are one of the winner's colours shaded or with a sheen of the
   light's own colour (`color_shading.lit_variant`) is no rival.
"""

from __future__ import annotations

import itertools
import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import linear_sum_assignment

from judgecam.vision.color_cluster import (
    MAX_ROUNDS,
    Clustering,
    balanced_kmeans,
    cluster_means,
    farthest_point_rows,
    pairwise_distances,
    squared_distances,
)
from judgecam.vision.color_faces import (
    NEGLIGIBLE_RATIO,
    equal_luminance,
    face_gains,
    lit_labelling_cost,
    relit,
)
from judgecam.vision.color_hinges import hinged_readings
from judgecam.vision.color_legal import LegalLabelling, legal_labelling
from judgecam.vision.color_model import (
    LOW_CONFIDENCE_REASON,
    ColorClassification,
    ColorCluster,
    FaceletSample,
    as_samples,
)
from judgecam.vision.color_naming import (
    CALIBRATE_ADVICE,
    Naming,
    lab_to_linear_rgb,
    name_clusters,
    naming_costs,
    rotation_namings,
)
from judgecam.vision.color_pieces import PieceModel, assign_pieces, best_arrangement, piece_model
from judgecam.vision.color_shading import (
    chromaticity,
    illuminant_chromaticity,
    lit_variant,
    shading_splits,
)
from judgecam.vision.colorspace import ciede2000

if TYPE_CHECKING:
    from judgecam.calibration.scheme import ColorScheme
    from judgecam.puzzle.geometry import PuzzleSpec

logger = logging.getLogger(__name__)

#: Smallest colour noise (CIEDE2000) assumed between facelets of one colour: sensor noise and
#: sticker texture alone give about this much, and a perfect synthetic cluster must not make
#: every margin infinite.
MIN_NOISE_DELTA_E = 2.0
#: Facelets below this confidence are listed in the reasons.
LOW_CONFIDENCE = 0.5
#: Clusters closer than this (CIEDE2000) are reported: regulation 8.2 wants colours "clearly
#: distinguishable", and below about 10 a change of light can swap them.
CLOSE_CLUSTERS_DELTA_E = 10.0
#: Most rounds of re-estimating cluster colours from the piece labelling.
PIECE_ROUNDS = 8
#: Random restarts of the clustering when some colours have no centre to seed them.
RESTARTS = 4
RESTART_SEED = 2024
#: A facelet whose own colour is this much (squared noise units: a likelihood ratio of e^2)
#: nearer another cluster than its label is reported, even when its piece settles it.
OVERRULED_MARGIN = 4.0
#: A cluster further than this many calibrated spreads from its scheme colour is reported.
SCHEME_MISMATCH_SPREADS = 4.0
#: How many low-confidence facelets the reasons list by name.
LISTED_FACELETS = 6
#: Price of one more colour, per ln(facelets seen): see `color_penalty`.
COLOR_PENALTY_PER_LOG_FACELET = 3.0
#: Cost standing for a colour put on a seen facelet when that colour is taken to be unseen
#: (finite, and well below `color_pieces.FORBIDDEN`, so sums stay exact).
ABSENT_COST = 1e6
#: Search budget when checking whether a partly seen labelling has a legal filling.
COMPLETION_NODES = 5000
#: How many facelets' worth of evidence the prior on a colour's noise variance (the pooled
#: noise) carries: each colour's own spread is estimated, but shrunk towards the pooled one, so
#: a colour with two or three facelets cannot claim a tiny noise.
PRIOR_FACELETS = 9.0


def color_penalty(seen: int) -> float:
    """Cost (squared noise units) of one more colour fitted to `seen` facelets.

    Without a price, splitting one colour's facelets in two always fits a little better. The
    form is the Bayesian information criterion's (a constant times ln(seen)); the constant, 3,
    is about twice what the criterion gives for a mean and a variance in these units (one unit
    per facelet's squared noise), because shading spreads a colour's lightness in a way that
    Gaussian noise does not (measured on simulations with +-15 % shading: no face split).
    """
    return COLOR_PENALTY_PER_LOG_FACELET * float(np.log(max(seen, 2)))


def classify_colors(
    samples: Sequence[FaceletSample | None] | ArrayLike,
    puzzle: str | PuzzleSpec,
    scheme: ColorScheme | None = None,
) -> ColorClassification:
    """Colour name and confidence of every facelet of `puzzle`.

    Each face is lit as a whole (`color_faces`), so the labelling is done with each face's
    light divided out, the lights read from a first labelling. Two first labellings are tried:
    one on the samples as they are, one on their chromaticity alone (every sample brought to
    one luminance: no light's strength changes it, but red and orange lose their lightness
    difference). Where their final labellings differ, the one that explains the samples better
    once its own face lights are fitted (`lit_labelling_cost`) is kept.

    Parameters
    ----------
    samples : sequence of FaceletSample or None, or array of shape (N, 3)
        One per facelet in the puzzle's facelet order (`judgecam.puzzle`); None (or a NaN BGR
        row) for a facelet no camera saw.
    puzzle : a puzzle name ("222", "333", "pyram") or its PuzzleSpec.
    scheme : a calibrated ColorScheme; the puzzle's built-in scheme when None. It only names
        the colours; which facelets share a colour comes from the puzzle itself.
    """
    model = piece_model(puzzle if isinstance(puzzle, str) else puzzle.name)
    facelets = as_samples(samples)
    return _hinges_checked(
        model,
        facelets,
        _as_reported(_lit_classification(model, facelets, puzzle, scheme)),
        puzzle,
        scheme,
    )


def _as_reported(result: ColorClassification) -> ColorClassification:
    """`result` with the confidences it reports as its confidences (stage 4's work with them,
    face lights weighted by confidence, is done)."""
    if not result.reported_confidences:
        return result
    return replace(result, confidences=result.reported_confidences, reported_confidences=())


def _lit_classification(
    model: PieceModel,
    facelets: Sequence[FaceletSample | None],
    puzzle: str | PuzzleSpec,
    scheme: ColorScheme | None,
) -> ColorClassification:
    """The labelling from the two starts (the samples, their chromaticity), each relabelled with
    its face lights divided out; the one its lights explain better."""
    first = _classify_once(facelets, puzzle, scheme)  # raises on a wrong facelet count
    lights = face_gains(model.face_of_facelet, facelets, first.labels, first.confidences)
    usual = first if lights is None else _relit_labelling(model, facelets, lights, puzzle, scheme)
    if usual.min_confidence >= SURE_CONFIDENCE:
        return usual
    chromatic = _classify_once(equal_luminance(facelets), puzzle, scheme, by_naming=False)
    gains = face_gains(model.face_of_facelet, facelets, chromatic.labels, chromatic.confidences)
    if gains is None or (lights is not None and _alike(gains, lights)):
        return usual
    other = _relit_labelling(model, facelets, gains, puzzle, scheme)
    if other.labels == usual.labels:
        # The same answer: keep the one read with the face lights divided out (a rival the
        # light explains away is no doubt), unless the first labelling had its lights too.
        return usual if lights is not None else other
    costs = [
        lit_labelling_cost(model.face_of_facelet, facelets, result.labels, MIN_NOISE_DELTA_E)
        for result in (usual, other)
    ]
    logger.debug("labelling costs: first on the samples %.1f, on chromaticity %.1f", *costs)
    return other if costs[1] < costs[0] else usual


def _hinges_checked(
    model: PieceModel,
    facelets: Sequence[FaceletSample | None],
    result: ColorClassification,
    puzzle: str | PuzzleSpec,
    scheme: ColorScheme | None,
) -> ColorClassification:
    """`result`, or a better labelling, once every face light that rests on one group of
    facelets has been tried with that group read as another colour (`color_hinges`).

    Each reading is scored with the face lights that suit it (`lit_labelling_cost`). The best
    one that beats `result` is labelled again with its lights and kept if that beats `result`
    too. Then every reading left is a rival: a facelet it reads otherwise gets at most the
    confidence its margin gives (3 x the cost difference, in the squared noise units of
    stage 4's margins), as a runner-up labelling does.
    """
    per_color = len(model.face_of_facelet) // len(model.faces)
    readings = hinged_readings(model.face_of_facelet, facelets, result.labels, per_color)
    if not readings:
        return result

    def cost(labels: Sequence[str | None]) -> float:
        return lit_labelling_cost(model.face_of_facelet, facelets, labels, MIN_NOISE_DELTA_E)

    best_cost = cost(result.labels)
    rivals = [(cost(reading.labels), reading.labels) for reading in readings]
    challenger = min(rivals, key=lambda rival: rival[0])
    if challenger[0] < best_cost:
        lights = face_gains(model.face_of_facelet, facelets, challenger[1], [1.0] * len(facelets))
        if lights is not None:
            relabelled = _relit_labelling(model, facelets, lights, puzzle, scheme)
            relabelled_cost = cost(relabelled.labels)
            if relabelled_cost < best_cost:
                logger.debug("a face light hinged on a misread group: relabelled")
                rivals.append((best_cost, result.labels))
                result, best_cost = _as_reported(relabelled), relabelled_cost
    confidences = list(result.confidences)
    doubted = []
    for rival_cost, labels in rivals:
        cap = float(np.tanh(3.0 * max(rival_cost - best_cost, 0.0) / 4.0))
        for index, (mine, theirs) in enumerate(zip(result.labels, labels, strict=True)):
            if mine is not None and theirs != mine and cap < confidences[index]:
                confidences[index] = cap
                doubted.append(index)
    if not doubted:
        return result
    weak = sorted({i for i in doubted if confidences[i] < LOW_CONFIDENCE})
    reasons = list(result.reasons)
    if weak:
        named = ", ".join(f"{facelet_name(model, i)} {result.labels[i]}" for i in weak)
        reasons.append(
            f"{LOW_CONFIDENCE_REASON}: {named} (their face's light rests on them; "
            "read as another colour, with the light fitted to that, they fit about as well)"
        )
    return replace(result, confidences=tuple(confidences), reasons=tuple(reasons))


#: A labelling whose every facelet is at least this confident is kept without trying the
#: chromaticity start, and so is one whose face lights the chromaticity start reads alike
#: (`_alike`): both only save time (together they changed one facelet of 4626 on the corpus
#: and none on the unseen sets, 29 Nov 2026).
SURE_CONFIDENCE = 0.99


def _alike(gains: NDArray[np.float64], other: NDArray[np.float64]) -> bool:
    """Whether two sets of face lights are the same within NEGLIGIBLE_RATIO."""
    return bool(np.max(np.abs(np.log(gains / other))) < np.log(NEGLIGIBLE_RATIO))


def _relit_labelling(
    model: PieceModel,
    facelets: Sequence[FaceletSample | None],
    gains: NDArray[np.float64],
    puzzle: str | PuzzleSpec,
    scheme: ColorScheme | None,
) -> ColorClassification:
    """The labelling of the samples with each face's light (`gains`) divided out."""
    logger.debug("face lights %s: labelling again with them divided out", np.round(gains, 2))
    return _classify_once(relit(model.face_of_facelet, facelets, gains), puzzle, scheme)


def _classify_once(
    samples: Sequence[FaceletSample | None] | ArrayLike,
    puzzle: str | PuzzleSpec,
    scheme: ColorScheme | None = None,
    by_naming: bool = True,
) -> ColorClassification:
    """`classify_colors` on the samples as they are (the same parameters). `by_naming=False`
    leaves arrangements the pieces cannot tell apart in the order tried, not decided by the
    scheme's names: a third of the time, for a labelling whose names do not matter."""
    from judgecam.calibration.scheme import builtin_scheme

    name = puzzle if isinstance(puzzle, str) else puzzle.name
    model = piece_model(name)
    reference = scheme if scheme is not None else builtin_scheme(model.puzzle)
    facelets = as_samples(samples)
    if len(facelets) != len(model.face_of_facelet):
        raise ValueError(
            f"a {model.puzzle} has {len(model.face_of_facelet)} facelets, got {len(facelets)}"
        )
    seen = np.array([i for i, s in enumerate(facelets) if s is not None], dtype=np.intp)
    if len(seen) == 0:
        return _nothing_seen(model, len(facelets))
    labs = np.array([facelets[i].lab for i in seen], dtype=np.float64)  # type: ignore[union-attr]
    spreads = np.array([facelets[i].spread for i in seen], dtype=np.float64)  # type: ignore[union-attr]
    row_of = {int(index): row for row, index in enumerate(seen)}
    pinned = {row_of[f]: face for f, face in model.centres.items() if f in row_of}
    naming_fit = _scheme_fit(reference) if by_naming else None
    distances = pairwise_distances(labs)  # every start of every clustering seeds from these

    resolved_all = [
        _resolve(model, labs, spreads, seen, len(facelets), pinned, clustering, absent, naming_fit)
        for absent in _absent_choices(model, pinned, len(facelets) - len(seen))
        for clustering in _clusterings(model, labs, pinned, reference.centres(), absent, distances)
    ]
    # A candidate that puts two clearly coloured facelets of very different hue in one cluster
    # has merged two colours (its broad noise made the merge cheap): dropped while any other
    # candidate is left.
    resolved_all = [c for c in resolved_all if not _mixes_hues(c, labs)] or resolved_all
    # Likewise a candidate that puts a grey-looking facelet and a clearly coloured one in one
    # cluster (`_merged_rows`, what `glare.merged_colors` sends to a judge): with few facelets
    # seen, the price of a colour saved outweighs the fit its broad own noise loses.
    resolved_all = [c for c in resolved_all if not np.any(_merged_rows(c, labs))] or resolved_all
    penalty = color_penalty(len(seen))
    candidates = _ranked(resolved_all, penalty, model, seen)
    problem = _Problem(
        model,
        labs,
        spreads,
        seen,
        len(facelets),
        pinned,
        penalty,
        min(candidate.noise for candidate in resolved_all),
        naming_fit,
    )
    candidates, merge_caps = _one_colour_under_two_lights(candidates, problem)
    candidates, split_caps = _two_colours_under_one_light(candidates, problem)
    light_caps = merge_caps + split_caps
    resolved = candidates[0]
    logger.debug(
        "candidates (score, colours used, absent): %s",
        [(round(c.score, 1), c.used, c.absent) for c in candidates[:6]],
    )
    members, means, costs, arrangement = (
        resolved.members,
        resolved.means,
        resolved.costs,
        resolved.arrangement,
    )
    costs = _empty_clusters_absent(costs, members, seen)
    margins = _facelet_margins(costs, members, seen, len(facelets))
    if resolved.absent:
        logger.debug("colours taken to be unseen: clusters %s", resolved.absent)
    legal_note = None
    if arrangement is not None and resolved.legal is not None:
        members, legal_note = _piece_labels(
            model, costs, arrangement, resolved.legal, members, margins, seen
        )
    _centre_margins(margins, costs, members, seen, pinned)
    counts = np.bincount(members, minlength=len(means))
    allowed = (
        rotation_namings(model, arrangement, [c.face for c in reference.colors])
        if arrangement is not None
        else None
    )
    naming = name_clusters(means, counts, reference.centres(), allowed)
    reported = margins.copy()
    illuminant = _light_chromaticity(labs, members, naming, reference)
    _rival_margins(margins, reported, candidates, seen, len(means), labs, illuminant)
    for rows, cap in light_caps:
        margins[seen[rows]] = np.minimum(margins[seen[rows]], cap)
        reported[seen[rows]] = np.minimum(reported[seen[rows]], cap)

    names = [reference.colors[c].name for c in naming.colors]
    face_of_cluster = _cluster_faces(model, arrangement, pinned)

    labels: list[str | None] = [None] * len(facelets)
    confidences = [0.0] * len(facelets)
    reported_confidences = [0.0] * len(facelets)
    for row, index in enumerate(seen):
        labels[index] = names[members[row]]
        confidences[index] = float(np.tanh(max(float(margins[index]), 0.0) / 4.0))
        reported_confidences[index] = float(np.tanh(max(float(reported[index]), 0.0) / 4.0))
    clusters = tuple(
        ColorCluster(
            name=names[k],
            face=face_of_cluster[k],
            scheme_face=reference.colors[naming.colors[k]].face,
            lab=(float(means[k, 0]), float(means[k, 1]), float(means[k, 2])),
            spread=_rms_spread(labs[members == k], means[k]),
            count=int(counts[k]),
            delta_e_to_scheme=naming.delta_e[k],
        )
        for k in range(len(means))
    )
    doubt = naming.doubt
    if doubt is not None and scheme is not None:
        # A calibrated scheme was given: calibrating one is not the advice.
        doubt = doubt.replace(CALIBRATE_ADVICE, "is it this puzzle's scheme?")
    reasons = _reasons(model, labels, reported_confidences, costs, members, seen, clusters, doubt)
    if legal_note:
        reasons.insert(1 if len(seen) < len(facelets) else 0, legal_note)
    if scheme is not None:
        reasons.extend(_scheme_mismatches(scheme, clusters, naming.colors))
    return ColorClassification(
        puzzle=model.puzzle,
        labels=tuple(labels),
        confidences=tuple(confidences),
        clusters=clusters,
        reasons=tuple(reasons),
        gains=naming.gains,
        reported_confidences=tuple(reported_confidences),
    )


def _empty_clusters_absent(
    costs: NDArray[np.float64], members: NDArray[np.intp], seen: NDArray[np.intp]
) -> NDArray[np.float64]:
    """`costs` with every cluster that no seen facelet shows made absent (`ABSENT_COST`).

    Such a cluster's mean is only where its seed was left, often on top of a seen colour
    (c0021 of a fresh rig3 set: the hidden face's cluster sat next to green, and three green
    facelets of a solved cube got confidence 0.2 "or white?"). That a seen facelet might
    show the unseen colour is priced by the candidates that give the colour seen facelets
    (`_rival_margins`), not by a mean nothing measured.
    """
    empty = np.flatnonzero(np.bincount(members, minlength=costs.shape[1]) == 0)
    if not len(empty):
        return costs
    result = costs.copy()
    result[np.ix_(seen, empty)] = ABSENT_COST
    return result


def _piece_labels(
    model: PieceModel,
    costs: NDArray[np.float64],
    arrangement: NDArray[np.intp],
    legal: LegalLabelling,
    members: NDArray[np.intp],
    margins: NDArray[np.float64],
    seen: NDArray[np.intp],
) -> tuple[NDArray[np.intp], str | None]:
    """Piece margins into `margins` (in place), and the labels made legal if they were not.

    Returns the cluster per seen facelet and a reason when the legal correction changed it.
    """
    piece_margins = assign_pieces(model, costs, arrangement).margin
    covered = ~np.isnan(piece_margins)
    margins[covered] = piece_margins[covered]
    if not legal.legal:
        return members, "no legal puzzle found near the colours read"
    # Corrections that only relabel unseen facelets change nothing that was read.
    changed = np.intersect1d(legal.changed, seen)
    if not len(changed):
        return members, None
    runner_up = legal.runner_up_increase
    # The alternative to a forced correction is the next legal one (none found: no margin).
    margins[changed] = 0.0 if runner_up is None else runner_up - legal.cost_increase
    named = ", ".join(facelet_name(model, int(i)) for i in changed[:LISTED_FACELETS])
    note = (
        "the closest colouring was not a legal puzzle; the cheapest legal one relabels "
        f"{named} (cost +{legal.cost_increase:.1f})"
    )
    return legal.cluster[seen], note


#: How well clusters (means, counts) fit the scheme when put on the faces by each of (T, F)
#: arrangements (lower is better): `_scheme_fit`.
NamingFit = Callable[
    [PieceModel, NDArray[np.intp], NDArray[np.float64], NDArray[np.intp]], NDArray[np.float64]
]


def _scheme_fit(reference: ColorScheme) -> NamingFit:
    """The mean CIEDE2000 of the best naming that puts `reference` on the puzzle by a rotation
    of each arrangement: what decides between arrangements the seen pieces leave tied."""
    scheme_lab = reference.centres()
    scheme_rgb = lab_to_linear_rgb(scheme_lab)  # the same for every call: converted once
    faces = [color.face for color in reference.colors]

    def fit(
        model: PieceModel,
        arrangements: NDArray[np.intp],
        means: NDArray[np.float64],
        counts: NDArray[np.intp],
    ) -> NDArray[np.float64]:
        allowed = rotation_namings(model, arrangements, faces)
        return naming_costs(means, counts, scheme_lab, allowed, scheme_rgb)

    return fit


@dataclass(frozen=True)
class _Resolved:
    """One candidate resolution: clusters per seen facelet, their means, the facelet costs,
    the face -> cluster arrangement (None without pieces), the squared CIEDE2000 of every seen
    facelet to its cluster (kept for `_fit_cost`), the pooled noise variance the costs are
    scaled by, the clusters taken to have no seen facelet, the cheapest legal labelling (None
    without pieces), and `score`: how badly its colours fit (`_fit_cost`), plus the legal
    correction's cost, plus the price of the colours used (how candidates compete; set by
    `_ranked`)."""

    members: NDArray[np.intp]
    means: NDArray[np.float64]
    costs: NDArray[np.float64]
    arrangement: NDArray[np.intp] | None
    own: NDArray[np.float64]
    noise: float
    absent: tuple[int, ...] = ()
    legal: LegalLabelling | None = None
    score: float = 0.0

    @property
    def used(self) -> int:
        """How many colours the seen facelets show."""
        return len(np.unique(self.members))


#: Facelets at least this chromatic (CIELAB chroma) have a hue worth comparing ...
HUE_CHROMA = 25.0
#: ... and two such facelets in one cluster whose hues differ by more than this (degrees) are
#: two colours: shading, exposure and a sheen change a surface's lightness and chroma, hardly
#: its hue, while the scheme colours' hues lie 25-100 degrees apart (red/orange the closest,
#: which this leaves to the clustering).
MAX_CLUSTER_HUE_SPREAD_DEG = 60.0


def _mixes_hues(candidate: _Resolved, labs: NDArray[np.float64]) -> bool:
    """Whether some cluster holds two chromatic facelets of clearly different hue."""
    chroma = np.hypot(labs[:, 1], labs[:, 2])
    hue = np.degrees(np.arctan2(labs[:, 2], labs[:, 1]))
    for cluster in np.unique(candidate.members):
        hues = hue[(candidate.members == cluster) & (chroma >= HUE_CHROMA)]
        if len(hues) < 2:
            continue
        gaps = np.abs((hues[:, None] - hues[None, :] + 180.0) % 360.0 - 180.0)
        if float(gaps.max()) > MAX_CLUSTER_HUE_SPREAD_DEG:
            return True
    return False


def _merged_rows(candidate: _Resolved, labs: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Per seen facelet: whether its cluster holds a near-grey facelet and a clearly coloured
    one, two colours merged (what `glare.merged_colors` sends to a judge)."""
    from judgecam.vision.glare import mixes_grey_and_colour

    chroma = np.hypot(labs[:, 1], labs[:, 2])
    merged = np.zeros(len(labs), dtype=bool)
    for cluster in np.unique(candidate.members):
        inside = candidate.members == cluster
        if mixes_grey_and_colour(chroma[inside].tolist()):
            merged |= inside
    return merged


def _fit_cost(candidate: _Resolved, noise: float) -> float:
    """How badly a candidate's colours fit the facelets: -2 log-likelihood over 3 (the unit of
    the facelet costs), up to a constant, with each colour's own noise variance (ML).

    Each colour gets its own variance because CIEDE2000 compresses chroma: the same sensor noise
    spreads white far more than red, and one pooled noise would make splitting white pay.
    """
    own = candidate.own
    total = 0.0
    for cluster in np.unique(candidate.members):
        mask = candidate.members == cluster
        variance = (float(own[mask].sum()) + PRIOR_FACELETS * noise) / (
            float(mask.sum()) + PRIOR_FACELETS
        )
        total += float(mask.sum()) * float(np.log(variance))
    return total


def _ranked(
    candidates: list[_Resolved],
    penalty: float,
    model: PieceModel,
    seen: NDArray[np.intp],
) -> list[_Resolved]:
    """Candidates best first by how badly their colours fit, plus the cost of making the
    labelling legal, plus `penalty` per colour used.

    The prior noise every colour's own noise is shrunk towards is the smallest pooled noise of
    any candidate (the best fit): the same for all candidates. Legality is costly to
    decide, so it is only worked out for candidates that could still win; the others keep
    their score without it, a lower bound (which can only make rival margins smaller).
    """
    noise = min(candidate.noise for candidate in candidates)
    ordered = sorted(
        (
            replace(candidate, score=_fit_cost(candidate, noise) + penalty * candidate.used)
            for candidate in candidates
        ),
        key=lambda candidate: candidate.score,
    )
    best = np.inf
    for index, candidate in enumerate(ordered):
        if candidate.score >= best or candidate.arrangement is None:
            break
        ordered[index] = _with_legality(candidate, model, seen)
        best = min(best, ordered[index].score)
    return sorted(ordered, key=lambda candidate: candidate.score)


def _with_legality(candidate: _Resolved, model: PieceModel, seen: NDArray[np.intp]) -> _Resolved:
    """The candidate with its cheapest legal labelling, its cost added to the score."""
    if candidate.arrangement is None or candidate.legal is not None:
        return candidate
    legal = legal_labelling(
        model, candidate.costs, candidate.arrangement, _legality_check(model.puzzle, seen)
    )
    increase = legal.cost_increase if legal.legal else ABSENT_COST
    return replace(candidate, legal=legal, score=candidate.score + increase)


def _one_colour_under_two_lights(
    candidates: list[_Resolved],
    problem: _Problem,
) -> tuple[list[_Resolved], list[tuple[NDArray[np.intp], float]]]:
    """Candidates with a split that shading explains replaced by the one-colour explanation,
    and margin caps (seen rows, cap) for the facelets concerned.

    The fit cost measures colour differences in CIEDE2000, where a face half in shadow looks
    like two tight groups of different lightness: one more colour always fits them better.
    When two clusters of the winner differ in chromaticity by less than the price of a colour
    (`color_shading.shading_splits`), the light explains the split as well, and the winner
    with the two merged (`_merged`: refined by the pieces, legal) wins instead: its margin over
    the split is the price of a colour minus the split's chromaticity evidence. When the counts
    forbid the merge, they settle it and the split stands, unless both clusters look grey
    (`_both_neutral`); when only the pieces or legality forbid it, or the two are greys, it
    stands with no margin (a review, never a confident split).
    """
    caps: list[tuple[NDArray[np.intp], float]] = []
    penalty, labs = problem.penalty, problem.labs
    while True:
        best = candidates[0]
        promoted = False
        blocked: list[tuple[NDArray[np.intp], float]] = []
        for first, second, separation in shading_splits(
            labs, best.members, penalty, MIN_NOISE_DELTA_E
        ):
            rows = np.flatnonzero((best.members == first) | (best.members == second))
            if not _merge_allowed(problem, best, first, second):
                if _both_neutral(labs, best.members, first, second):
                    logger.debug(
                        "clusters %d and %d: greys split by the counts alone", first, second
                    )
                    blocked.append((rows, 0.0))
                continue
            merged = _merged(problem, best, first, second)
            if merged is None:
                blocked.append((rows, 0.0))
                continue
            logger.debug(
                "clusters %d and %d differ only in light (T^2 %.1f < %.1f): merged",
                first,
                second,
                separation,
                penalty,
            )
            caps.append((rows, penalty - separation))
            # Rivals that win only by splitting a colour by light are no rivals.
            kept = [
                c
                for c in candidates[1:]
                if not shading_splits(labs, c.members, penalty, MIN_NOISE_DELTA_E)
            ]
            candidates = [merged, *kept]
            promoted = True
            break
        if not promoted:
            return candidates, caps + blocked


def _split_of(
    merged: NDArray[np.intp], split: NDArray[np.intp]
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]] | None:
    """The two groups of rows that `split` makes of one cluster of `merged`, where it labels
    the rows exactly as `merged` does otherwise (one more colour, nothing else moved)."""
    parent: dict[int, int] = {}
    for a, b in set(zip(merged.tolist(), split.tolist(), strict=True)):
        if parent.setdefault(b, a) != a:
            return None  # a cluster of `split` spans two of `merged`
    children = Counter(parent.values())
    if len(parent) != len(children) + 1:
        return None
    first, second = sorted(b for b, a in parent.items() if children[a] == 2)
    return split == first, split == second


def _two_colours_under_one_light(
    candidates: list[_Resolved],
    problem: _Problem,
) -> tuple[list[_Resolved], list[tuple[NDArray[np.intp], float]]]:
    """Candidates with a merge that colour refutes replaced by the split, and margin caps
    (seen rows, cap) for the facelets concerned: the converse of
    `_one_colour_under_two_lights`.

    A colour's own noise, shrunk towards the pooled one, makes a cluster of two tight groups
    cheap where colours have few facelets (four on a 2x2x2): one wide colour then costs less
    than two plus the price of one (corpus c0066: a solved 2x2x2's two reds and two oranges,
    17.7 apart in CIEDE2000, read as one colour, named white). Where a rival differs from the
    winner only by splitting one of its clusters in two, the split wins when the two groups
    differ by more than the price of a colour both in chromaticity (`shading_splits` would not
    merge them) and in CIELAB hue (`_hue_separation`: ambient light on a shaded face moves
    chromaticity, not hue), neither group is grey and no face shows both (one face is lit as a
    whole: two groups on it are shading or a sheen). The evidence beyond the price is its margin.
    """
    best = candidates[0]
    for rival in candidates[1:]:
        groups = _split_of(best.members, rival.members)
        if groups is None:
            continue
        if any(_neutral(problem.labs[g]) for g in groups):
            continue  # a grey's chromaticity is the light's and the noise's, not the paint's
        faces = [set(problem.model.face_of_facelet[problem.seen[g]].tolist()) for g in groups]
        if faces[0] & faces[1]:
            continue  # a face lit as a whole shows both: shading or a sheen, not two colours
        first, second = (int(rival.members[np.flatnonzero(g)[0]]) for g in groups)
        alike = shading_splits(problem.labs, rival.members, np.inf, MIN_NOISE_DELTA_E)
        separation = next((t2 for a, b, t2 in alike if {a, b} == {first, second}), float("inf"))
        if separation <= problem.penalty or _hue_separation(problem, groups) <= problem.penalty:
            continue
        promoted = _with_legality(rival, problem.model, problem.seen)
        if promoted.legal is not None and not promoted.legal.legal:
            continue
        logger.debug(
            "clusters %d and %d differ in chromaticity (T^2 %.1f > %.1f): split",
            first,
            second,
            separation,
            problem.penalty,
        )
        rows = np.flatnonzero(groups[0] | groups[1])
        kept = [
            c for c in candidates if c is not rival and not _merges(c.members, groups[0], groups[1])
        ]
        return [promoted, *kept], [(rows, separation - problem.penalty)]
    return candidates, []


def _hue_separation(
    problem: _Problem, groups: tuple[NDArray[np.bool_], NDArray[np.bool_]]
) -> float:
    """How far apart two groups of seen rows are in CIELAB hue, in squared noise units.

    Shading, ambient light and a sheen of the light's own colour change a surface's lightness
    and chroma, hardly its hue; chromaticity r/(r+g+b) moves with them where ambient light adds
    to a shaded face. A facelet's hue is as uncertain as the colour noise over its chroma.
    """
    sigma = float(np.sqrt(problem.noise))
    means, variances = [], []
    for rows in groups:
        labs = problem.labs[rows]
        chroma = np.maximum(np.hypot(labs[:, 1], labs[:, 2]), sigma)
        means.append(np.arctan2(labs[:, 2].mean(), labs[:, 1].mean()))
        variances.append(float(np.mean((sigma / chroma) ** 2)) / len(labs))
    gap = float((means[0] - means[1] + np.pi) % (2 * np.pi) - np.pi)
    return gap**2 / sum(variances)


def _neutral(labs: NDArray[np.float64]) -> bool:
    """Whether facelets' mean colour looks grey (`NEUTRAL_CHROMA`)."""
    mean = labs.mean(axis=0)
    return bool(np.hypot(mean[1], mean[2]) < NEUTRAL_CHROMA)


def _merges(members: NDArray[np.intp], first: NDArray[np.bool_], second: NDArray[np.bool_]) -> bool:
    """Whether a labelling puts a row of `first` and a row of `second` in one cluster."""
    return bool(set(members[first].tolist()) & set(members[second].tolist()))


@dataclass(frozen=True)
class _Problem:
    """What every candidate resolution of one classification shares: the puzzle's pieces, the
    seen facelets' colours (rows) and spreads, their facelet indices, how many facelets there
    are, the seen centres (row -> cluster), the price of a colour and the prior noise."""

    model: PieceModel
    labs: NDArray[np.float64]
    spreads: NDArray[np.float64]
    seen: NDArray[np.intp]
    count: int
    pinned: dict[int, int]
    penalty: float
    noise: float
    naming_fit: NamingFit | None = None


#: Below this CIELAB chroma a sample or a cluster looks grey: white, or a colour washed out by
#: glare or darkness.
NEUTRAL_CHROMA = 10.0


def _both_neutral(
    labs: NDArray[np.float64], members: NDArray[np.intp], first: int, second: int
) -> bool:
    """Whether clusters `first` and `second` both look grey (`NEUTRAL_CHROMA`).

    A scheme has one grey colour at most, so two grey clusters the counts keep apart are one
    colour with some of it misread (corpus c0107: a face blown out by a mirrored lamp beside the
    white face in shadow, L 100 and L 40; the shadowed whites were named red with confidence
    0.99). Coloured clusters alike but for the light are left to the counts: red and orange
    under a dim face light are two colours that the counts rightly keep apart.
    """
    means = [labs[members == k].mean(axis=0) for k in (first, second)]
    return all(float(np.hypot(mean[1], mean[2])) < NEUTRAL_CHROMA for mean in means)


def _merge_allowed(problem: _Problem, candidate: _Resolved, first: int, second: int) -> bool:
    """Whether the counts let clusters `first` and `second` of `candidate` be one colour: not
    when both hold a seen centre (two centres are two colours), when together they hold more
    than a face's worth, or when the unseen facelets cannot hold the whole of the colour left
    out. These are certainties, so a split they force stands with its full confidence (but for
    two greys: `_both_neutral`)."""
    model = problem.model
    centres = set(problem.pinned.values())
    if first in centres and second in centres:
        return False
    kept, left_out = (second, first) if second in centres else (first, second)
    capacity = dict(enumerate(model.capacities))
    if candidate.arrangement is not None:
        capacity = {int(k): model.capacities[face] for face, k in enumerate(candidate.arrangement)}
    together = int(np.sum((candidate.members == first) | (candidate.members == second)))
    absent = {*candidate.absent, left_out}
    unseen = problem.count - len(problem.seen)
    return together <= capacity[kept] and sum(capacity[k] for k in absent) <= unseen


def _merged(problem: _Problem, candidate: _Resolved, first: int, second: int) -> _Resolved | None:
    """`candidate` with clusters `first` and `second` made one colour (`_merge_allowed`),
    refined by the pieces and scored like every candidate; None when the refinement splits
    them again or no legal puzzle has them as one colour."""
    model = problem.model
    if second in problem.pinned.values():
        first, second = second, first
    rows = (candidate.members == first) | (candidate.members == second)
    members = candidate.members.copy()
    members[rows] = first
    absent = tuple(sorted({*candidate.absent, second}))
    clustering = Clustering(members, cluster_means(problem.labs, members, candidate.means), 0.0)
    resolved = _resolve(
        model,
        problem.labs,
        problem.spreads,
        problem.seen,
        problem.count,
        problem.pinned,
        clustering,
        absent,
        problem.naming_fit,
    )
    if len(np.unique(resolved.members[rows])) != 1:
        logger.debug("merging clusters %d and %d: the pieces split them again", first, second)
        return None
    fit = _fit_cost(resolved, problem.noise) + problem.penalty * resolved.used
    scored = _with_legality(replace(resolved, score=fit), model, problem.seen)
    if scored.legal is not None and not scored.legal.legal:
        logger.debug("merging clusters %d and %d: no legal puzzle", first, second)
        return None
    return scored


def _absent_choices(
    model: PieceModel, pinned: dict[int, int], unseen: int
) -> list[tuple[int, ...]]:
    """Sets of clusters that may have no seen facelet: none, then the last free one, ...

    Only a colour whose centre is unseen can be missing, and only as many colours as the
    unseen facelets can hold whole. Free clusters are interchangeable (the arrangement search
    puts them on faces), so which ones are left out does not matter, only how many.
    """
    capacities = model.capacities
    free = [face for face in range(len(model.faces)) if face not in pinned.values()]
    choices: list[tuple[int, ...]] = [()]
    room = unseen
    for count in range(1, len(free) + 1):
        room -= capacities[free[-count]]
        if room < 0:
            break
        choices.append(tuple(free[-count:]))
    return choices


def _resolve(
    model: PieceModel,
    labs: NDArray[np.float64],
    spreads: NDArray[np.float64],
    seen: NDArray[np.intp],
    count: int,
    pinned: dict[int, int],
    clustering: Clustering,
    absent: tuple[int, ...] = (),
    naming_fit: NamingFit | None = None,
) -> _Resolved:
    """Refine one clustering with the piece constraints (alternating labels and means).

    Arrangements the seen pieces cannot tell apart are decided by how well the colours fit
    the scheme put on the puzzle each way (`naming_fit`), not by the order they were tried in.
    """
    members, means = clustering.members, clustering.means
    costs, own, noise = _facelet_costs(labs, spreads, means, members, count, seen, absent)
    if not model.kinds:
        return _Resolved(members, means, costs, None, own, noise, absent)
    candidates = _candidate_arrangements(model, pinned)

    def prefer(arrangements: NDArray[np.intp]) -> NDArray[np.float64]:
        if naming_fit is None:
            return np.zeros(len(arrangements))
        counts = np.bincount(members, minlength=len(means))
        return naming_fit(model, arrangements, means, counts)

    arrangement = best_arrangement(model, costs, candidates, prefer)
    chosen_with = costs
    # Whether `means` (and so `costs`) are `cluster_means` of `members` already: then the same
    # members give the same means and costs, and there is nothing to recompute.
    settled = np.array_equal(cluster_means(labs, members, means), means)
    for _ in range(PIECE_ROUNDS):
        pieces = assign_pieces(model, costs, arrangement, with_margins=False)
        refined = members.copy()
        in_pieces = pieces.cluster[seen] >= 0
        refined[in_pieces] = pieces.cluster[seen][in_pieces]
        changed = not np.array_equal(refined, members)
        if not changed and settled:
            break
        settled = True
        members = refined
        means = cluster_means(labs, members, means)
        costs, own, noise = _facelet_costs(labs, spreads, means, members, count, seen, absent)
        if not changed:
            break
    if naming_fit is not None and costs is not chosen_with:
        # Unchanged costs (and so members and means) would choose the same arrangement again.
        arrangement = best_arrangement(model, costs, candidates, prefer)
    return _Resolved(members, means, costs, arrangement, own, noise, absent)


def _clusterings(
    model: PieceModel,
    labs: NDArray[np.float64],
    pinned: dict[int, int],
    scheme_lab: NDArray[np.float64],
    absent: tuple[int, ...] = (),
    distances: NDArray[np.float64] | None = None,
) -> list[Clustering]:
    """Balanced k-means from a few seedings; clusters are indexed like faces, and the
    `absent` ones stay empty (their colour only on unseen facelets). `distances` is
    `pairwise_distances(labs)` when the caller has it (it does not depend on `absent`)."""
    faces = len(model.faces)
    free = [face for face in range(faces) if face not in pinned.values() and face not in absent]
    if distances is None:
        distances = pairwise_distances(labs)
    # Seeds are the colours of facelets (rows), but for the absent clusters' seed, the colour
    # (0, 0, 0): row -1 of `colours`, and the last column of `table`.
    colours = np.vstack([labs, np.zeros((1, 3))])
    table = distances
    if absent:
        table = np.hstack([distances, ciede2000(labs, np.zeros(3))[:, None]])
    fixed = np.full(faces, -1, dtype=np.intp)
    for row, face in pinned.items():
        fixed[face] = row
    fixed_rows = [int(fixed[face]) for face in pinned.values()]
    first = farthest_point_rows(labs, distances, fixed_rows, len(free))
    seedings: list[NDArray[np.intp] | NDArray[np.float64]] = [_with_free(fixed, free, first)]
    if free:
        # Local optima: k-means and the piece refinement only improve the start they get, so
        # start from several places (farthest-point from different first colours, the scheme,
        # seeded random facelets) and let the lowest error win.
        starts = [int(np.argmin(distances[:, row])) for row in first]
        for start in starts[1:]:
            rows = farthest_point_rows(labs, distances, fixed_rows, len(free), start)
            seedings.append(_with_free(fixed, free, rows))
        if not pinned and not absent and len(scheme_lab) == faces:
            seedings.append(np.asarray(scheme_lab, dtype=np.float64))
        rng = np.random.default_rng(RESTART_SEED)
        for _ in range(RESTARTS if len(labs) >= len(free) else 0):
            drawn = rng.choice(len(labs), len(free), replace=False)
            seedings.append(_with_free(fixed, free, drawn))
    # With pieces, the piece refinement is itself the k-means iteration (assign under the
    # constraints, move the means), so one balanced assignment to the seeds is the start.
    rounds = 1 if model.kinds else MAX_ROUNDS
    results: dict[tuple[int, ...], Clustering] = {}
    for seeding in seedings:
        if seeding.dtype == np.intp:  # rows: their distances are in the table already
            seeds, squared = colours[seeding], table[:, seeding] ** 2
        else:
            seeds, squared = seeding, None
        clustering = balanced_kmeans(
            labs, seeds, model.capacities, pinned, rounds, absent, distances=squared
        )
        results.setdefault(tuple(int(m) for m in clustering.members), clustering)
    return list(results.values())


def _with_free(
    fixed: NDArray[np.intp], free: list[int], rows: Sequence[int] | NDArray[np.intp]
) -> NDArray[np.intp]:
    """The seed row of every cluster: `fixed`'s, with the `free` clusters' given by `rows`."""
    combined = fixed.copy()
    combined[free] = rows
    return combined


def _facelet_costs(
    labs: NDArray[np.float64],
    spreads: NDArray[np.float64],
    means: NDArray[np.float64],
    members: NDArray[np.intp],
    count: int,
    seen: NDArray[np.intp],
    absent: tuple[int, ...] = (),
) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """(N, K) squared CIEDE2000 to each cluster over the noise (zero rows for unseen facelets;
    `ABSENT_COST` on seen ones for `absent` clusters), the squared CIEDE2000 of each seen
    facelet to its own cluster, and the pooled noise.

    The noise is the mean squared distance of facelets to their clusters (at least
    `MIN_NOISE_DELTA_E` squared) plus the facelet's own spread squared, so a facelet with glare
    counts as weaker evidence.
    """
    squared = squared_distances(labs, means)
    own = squared[np.arange(len(labs)), members]
    pooled = max(float(np.mean(own)), MIN_NOISE_DELTA_E**2)
    costs = np.zeros((count, len(means)))
    costs[seen] = squared / (pooled + spreads**2)[:, None]
    if absent:
        costs[np.ix_(seen, np.asarray(absent, dtype=np.intp))] = ABSENT_COST
    return costs, own, pooled


def _facelet_margins(
    costs: NDArray[np.float64], members: NDArray[np.intp], seen: NDArray[np.intp], count: int
) -> NDArray[np.float64]:
    """Per facelet: cost of the nearest other cluster minus the cost of its own (NaN unseen)."""
    margins = np.full(count, np.nan)
    rows = costs[seen]
    own = rows[np.arange(len(seen)), members]
    others = np.where(np.eye(rows.shape[1], dtype=bool)[members], np.inf, rows).min(axis=1)
    margins[seen] = others - own
    return margins


def _centre_margins(
    margins: NDArray[np.float64],
    costs: NDArray[np.float64],
    members: NDArray[np.intp],
    seen: NDArray[np.intp],
    pinned: dict[int, int],
) -> None:
    """Margins of seen centres, in place: the cheapest swap of two centres' colours.

    A centre defines its face's colour, so it can only show another colour if another centre
    shows its own: the alternative to compare with is a swap, not a single relabelling.
    """
    rows = list(pinned)
    for row in rows:
        index, own = seen[row], members[row]
        swaps = [
            costs[index, members[other]]
            + costs[seen[other], own]
            - costs[index, own]
            - costs[seen[other], members[other]]
            for other in rows
            if other != row
        ]
        if swaps:
            margins[index] = min(swaps)


def _legality_check(puzzle: str, seen: NDArray[np.intp]) -> Callable[[NDArray[np.intp]], bool]:
    """Whether a cluster-per-facelet labelling is (the seen part of) a puzzle that turning can
    reach (domain). With unseen facelets, what the labelling says there is only a guess: it is
    legal if some filling of the unseen facelets is (`judgecam.puzzle.completion`)."""
    seen_key = tuple(int(index) for index in seen)

    def is_legal(clusters: NDArray[np.intp]) -> bool:
        return _is_legal(puzzle, seen_key, tuple(clusters.tolist()))

    return is_legal


#: Labellings whose legality `_is_legal` keeps: the corrections tried for one candidate are
#: mostly tried again for the next (the same pieces swapped or turned), so most are repeats.
LEGALITY_CACHE_SIZE = 8192


@lru_cache(maxsize=LEGALITY_CACHE_SIZE)
def _is_legal(puzzle: str, seen: tuple[int, ...], clusters: tuple[int, ...]) -> bool:
    """`_legality_check`'s answer for the cluster per facelet `clusters` with the facelets
    `seen` seen, remembered (it depends on these alone)."""
    from judgecam.puzzle.completion import complete
    from judgecam.puzzle.observation import UNKNOWN
    from judgecam.puzzle.reachability import check_reachable
    from judgecam.puzzle.state import State

    names = [f"colour {k}" for k in clusters]
    # The guessed filling is often legal already: a quick check before the search.
    reachable = not check_reachable(State(puzzle, tuple(names)))
    if reachable or len(seen) == len(names):
        return reachable
    labels = [UNKNOWN] * len(names)
    for index in seen:
        labels[index] = names[index]
    found = complete(puzzle, labels, max_colorings=0, max_nodes=COMPLETION_NODES)
    # Out of nodes: so little seen that no filling was ruled out; nothing to correct.
    return bool(found.colorings) or found.out_of_nodes


def _rival_margins(
    margins: NDArray[np.float64],
    reported: NDArray[np.float64],
    candidates: list[_Resolved],
    seen: NDArray[np.intp],
    clusters: int,
    labs: NDArray[np.float64],
    illuminant: NDArray[np.float64] | None = None,
) -> None:
    """Margins lowered, in place, where another local optimum labels a facelet differently.

    The resolution that wins is the best of several starts; a runner-up that groups some
    facelets differently at a slightly higher error is exactly "the best labelling that gives
    this facelet another colour", so its excess error (in the same noise units) caps their
    margins. Clusters of the runner-up are matched to the winner's by their overlap.

    For the margins to report (`reported`; `labs` are the seen facelets' CIELAB), a rival's other
    colour for a facelet does not count where the rival puts it in a colour that merges a
    near-grey and a clearly coloured facelet, while the winner merges none: a reading
    `glare.merged_colors` would send to a judge is no alternative to judge by. On c0124 (a +2)
    the two yellows were doubted only by a rival that made them one colour with the two
    whites. The rival still counts for the facelets it reads otherwise outside such a colour
    (c0131 at 0.75x: a misread orange whose doubt came from such a rival, outside its merge).
    Stage 4's own work (face lights weighted by confidence) keeps every rival whole:
    disregarding them there changed labellings (4242 rig3 at 1.5x, c0004, read wrong).

    With the light's chromaticity (`illuminant`), a rival's reading of facelets as a colour the
    winner leaves unseen does not count where they are the winner's colour shaded or with a
    sheen (`_lit_variants`): seed 8383 rig3 c0033, two reds on a turned slice catching the lamp
    made a sixth colour at +2.1, confidence 0.48 on a solved cube.
    """
    best = candidates[0]
    judged = not np.any(_merged_rows(best, labs))
    penalty = color_penalty(len(seen))
    for rival in candidates[1:]:
        overlap = np.zeros((clusters, clusters))
        np.add.at(overlap, (best.members, rival.members), 1.0)
        rows, cols = linear_sum_assignment(-overlap)
        matched = np.empty(clusters, dtype=np.intp)
        matched[cols] = rows
        differ = matched[rival.members] != best.members
        if illuminant is not None:
            differ &= ~_lit_variants(best, rival, matched, differ, labs, illuminant, penalty)
        if not np.any(differ):
            continue
        excess = rival.score - best.score
        indices = seen[differ]
        margins[indices] = np.minimum(margins[indices], excess)
        if judged:
            indices = seen[differ & ~_merged_rows(rival, labs)]
        reported[indices] = np.minimum(reported[indices], excess)


def _light_chromaticity(
    labs: NDArray[np.float64],
    members: NDArray[np.intp],
    naming: Naming,
    reference: ColorScheme,
) -> NDArray[np.float64] | None:
    """The light's chromaticity as the camera sees it: that of the facelets named a neutral
    scheme colour (white) where the puzzle shows one, shading aside; otherwise what the
    naming's von Kries gains make of a neutral surface (None if they cannot say)."""
    for cluster, color in enumerate(naming.colors):
        lab = reference.colors[color].lab
        if np.hypot(lab[1], lab[2]) < NEUTRAL_CHROMA and np.any(members == cluster):
            return np.asarray(chromaticity(labs[members == cluster]).mean(axis=0))
    return illuminant_chromaticity(naming.gains)


def _lit_variants(
    best: _Resolved,
    rival: _Resolved,
    matched: NDArray[np.intp],
    differ: NDArray[np.bool_],
    labs: NDArray[np.float64],
    illuminant: NDArray[np.float64],
    penalty: float,
) -> NDArray[np.bool_]:
    """Rows where `rival` reads facelets as a colour the winner leaves unseen only because
    they are one of the winner's colours under another light (`color_shading.lit_variant`):
    shaded, or with a sheen of the light's own colour (a turned layer catching a lamp). Such a
    rival splits a colour by light, like those `_one_colour_under_two_lights` sets aside."""
    explained = np.zeros(len(labs), dtype=bool)
    used = np.bincount(best.members, minlength=len(matched))
    for cluster in np.unique(rival.members[differ]):
        if used[matched[cluster]]:
            continue
        rows = differ & (rival.members == cluster)
        own = np.unique(best.members[rows])
        if len(own) != 1:
            continue
        colour = (best.members == own[0]) & ~rows
        if lit_variant(labs, rival.members, rows, colour, illuminant, penalty, MIN_NOISE_DELTA_E):
            explained |= rows
    return explained


def _candidate_arrangements(model: PieceModel, pinned: dict[int, int]) -> NDArray[np.intp]:
    """Face -> cluster arrangements to try: fixed by seen centres, else one per rotation class.

    Clusters are indexed like the faces whose centres seeded them, so a seen centre fixes its
    face's cluster; the remaining clusters may sit on the remaining faces in any order.
    """
    if not pinned:
        return model.arrangements
    return _arrangements_fixing(model.puzzle, tuple(sorted(set(pinned.values()))))


@cache
def _arrangements_fixing(puzzle: str, fixed: tuple[int, ...]) -> NDArray[np.intp]:
    """Every arrangement keeping the `fixed` faces' clusters on them (cached: every candidate
    resolution of a classification tries the same ones). Read-only, since it is shared."""
    faces = len(piece_model(puzzle).faces)
    free = [face for face in range(faces) if face not in fixed]
    rows = []
    for order in itertools.permutations(free):
        arrangement = np.arange(faces)
        arrangement[free] = order
        rows.append(arrangement)
    result = np.array(rows, dtype=np.intp)
    result.setflags(write=False)
    return result


def _cluster_faces(
    model: PieceModel, arrangement: NDArray[np.intp] | None, pinned: dict[int, int]
) -> list[str | None]:
    """The face each cluster sits on, where the centres fix it (None otherwise)."""
    faces: list[str | None] = [None] * len(model.faces)
    if arrangement is not None and pinned:
        for face, cluster in enumerate(arrangement):
            faces[int(cluster)] = model.faces[face]
    else:
        for face in pinned.values():
            faces[face] = model.faces[face]
    return faces


def _rms_spread(labs: NDArray[np.float64], mean: NDArray[np.float64]) -> float:
    if len(labs) == 0:
        return 0.0
    return float(np.sqrt(np.mean(ciede2000(labs, mean) ** 2)))


def facelet_name(model: PieceModel, index: int) -> str:
    """A readable facelet name: its face and 1-based position on the face (U1..U9, F5, ...)."""
    face = int(model.face_of_facelet[index])
    position = int(np.sum(model.face_of_facelet[:index] == face)) + 1
    return f"{model.faces[face]}{position}"


def _reasons(
    model: PieceModel,
    labels: list[str | None],
    confidences: list[float],
    costs: NDArray[np.float64],
    members: NDArray[np.intp],
    seen: NDArray[np.intp],
    clusters: tuple[ColorCluster, ...],
    doubt: str | None,
) -> list[str]:
    """Why the classification may be wrong, most important first."""
    reasons = []
    unseen = len(labels) - len(seen)
    if unseen:
        reasons.append(f"{unseen} of {len(labels)} facelets not seen")
    if doubt:
        reasons.append(doubt)
    for first, second in itertools.combinations(clusters, 2):
        if first.count and second.count:
            delta = float(ciede2000(first.lab, second.lab))
            if delta < CLOSE_CLUSTERS_DELTA_E:
                reasons.append(
                    f"{first.name} and {second.name} are hard to tell apart here "
                    f"(CIEDE2000 {delta:.1f})"
                )
    weak = []
    for row, index in enumerate(seen):
        if confidences[index] < LOW_CONFIDENCE:
            order = np.argsort(costs[index])
            runner_up = next(int(k) for k in order if k != members[row])
            weak.append(
                f"{facelet_name(model, int(index))} {labels[index]} "
                f"(or {clusters[runner_up].name}? confidence {confidences[index]:.2f})"
            )
    if weak:
        listed = ", ".join(weak[:LISTED_FACELETS])
        more = f" and {len(weak) - LISTED_FACELETS} more" if len(weak) > LISTED_FACELETS else ""
        reasons.append(f"{LOW_CONFIDENCE_REASON}: {listed}{more}")
    overruled = []
    for row, index in enumerate(seen):
        nearest = int(np.argmin(costs[index]))
        if (
            nearest != members[row]
            and costs[index, members[row]] - costs[index, nearest] > OVERRULED_MARGIN
        ):
            overruled.append(
                f"{facelet_name(model, int(index))} looks {clusters[nearest].name}, "
                f"its piece makes it {labels[index]}"
            )
    if overruled:
        reasons.append(
            "facelets that look like another colour (glare, a logo or a missing sticker?): "
            + ", ".join(overruled[:LISTED_FACELETS])
            + (
                f" and {len(overruled) - LISTED_FACELETS} more"
                if len(overruled) > LISTED_FACELETS
                else ""
            )
        )
    return reasons


def _scheme_mismatches(
    scheme: ColorScheme, clusters: tuple[ColorCluster, ...], colors: tuple[int, ...]
) -> list[str]:
    """Clusters unlike the calibrated colour they were named after, even after the light.

    "Unlike" is more than `SCHEME_MISMATCH_SPREADS` times the colour's calibrated spread
    (robust std, as a CIELAB length): a different puzzle, or a light the scheme never saw.
    """
    found = []
    for cluster, index in zip(clusters, colors, strict=True):
        spread = float(np.linalg.norm(scheme.colors[index].spread))
        if cluster.count and cluster.delta_e_to_scheme > SCHEME_MISMATCH_SPREADS * spread:
            found.append(
                f"{cluster.name} looks unlike the calibrated {cluster.name} "
                f"(CIEDE2000 {cluster.delta_e_to_scheme:.1f} after adapting to the light, "
                f"spread {spread:.1f}): recalibrate the scheme?"
            )
    return found


def _nothing_seen(model: PieceModel, count: int) -> ColorClassification:
    return ColorClassification(
        puzzle=model.puzzle,
        labels=(None,) * count,
        confidences=(0.0,) * count,
        clusters=(),
        reasons=("no facelet seen",),
        gains=(1.0, 1.0, 1.0),
    )
