"""A verdict's reasons split into what made it a `review` (the cause) and the rest (notes).

Attempt records carry `review_because` next to `reasons` since session 17; records written
before have no such key and read as "no cause marked": every reason is shown as before, none
labelled. Used by the review page and the live station page so both say the same thing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ReasonSplit:
    """`because`: what made the verdict a review, in the judge's order (empty: no cause
    marked, e.g. a record from before the key existed); `notes`: every other reason."""

    because: tuple[str, ...]
    notes: tuple[str, ...]

    @property
    def marked(self) -> bool:
        """Whether the record says which reasons made it a review."""
        return bool(self.because)

    def to_json(self) -> dict[str, list[str]]:
        return {"review_because": list(self.because), "notes": list(self.notes)}


def split_reasons(reasons: Iterable[str], review_because: Iterable[str] = ()) -> ReasonSplit:
    """The cause first (as listed in `review_because`), then the reasons that are not in it.

    A cause missing from `reasons` is still shown (nothing recorded is hidden); duplicates are
    dropped."""
    because = tuple(dict.fromkeys(review_because))
    notes = tuple(r for r in dict.fromkeys(reasons) if r not in because)
    return ReasonSplit(because, notes)


def as_strings(value: Any) -> list[str]:
    """A recorded list of reasons as strings; a lone value is a list of one, None is empty."""
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [str(item) for item in value]
    return [str(value)]


def recorded_reasons(result: Mapping[str, Any]) -> ReasonSplit:
    """The split of an attempt record's `result` (or one of its `judgements`). Lenient: an
    old record without `review_because`, or one of another shape, reads as no cause marked."""
    return split_reasons(
        as_strings(result.get("reasons")), as_strings(result.get("review_because"))
    )
