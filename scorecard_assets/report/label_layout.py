"""Where to put point labels on a scatter so that none overlaps another, a point, or the frame.

A greedy placer in display units (pixels, y up, as matplotlib's display coordinates): points are
labelled in priority order (the caller puts the most important first); each label tries a fixed list
of candidate positions around its point, nearest first, and takes the first one whose box stays
inside the frame and touches neither an already placed label nor any point's marker. A label with no
free candidate is left out (``None``) so the caller can number the point and name it elsewhere;
nothing is ever drawn on top of something else.

Pure module: no matplotlib, no Dagster.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Box:
    """An axis-aligned rectangle in display units."""

    x0: float
    y0: float
    x1: float
    y1: float

    def overlaps(self, other: Box) -> bool:
        return self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1

    def inside(self, frame: Box) -> bool:
        return self.x0 >= frame.x0 and self.y0 >= frame.y0 and self.x1 <= frame.x1 and self.y1 <= frame.y1


@dataclass(frozen=True)
class Placement:
    """A label's lower-left corner as an offset from its point, and whether it sits far enough
    away to need a leader line back to the point."""

    dx: float
    dy: float
    far: bool


Offset = tuple[float, float, bool]  # dx, dy of the label's lower-left corner; far from the point


def candidate_offsets(width: float, height: float, radius: float, gap: float) -> list[Offset]:
    """Lower-left offsets of a ``width`` × ``height`` label around a marker of ``radius``, nearest
    first: the four corners beside the marker, then above and below it, then farther rings on both
    sides (those are marked ``far``)."""
    near = radius + gap
    offsets: list[Offset] = [
        (near, gap, False),  # right, above the centre line
        (near, -height - gap, False),  # right, below
        (-near - width, gap, False),  # left, above
        (-near - width, -height - gap, False),  # left, below
        (-width / 2, near, False),  # centred above
        (-width / 2, -near - height, False),  # centred below
    ]
    for ring in range(1, 7):
        lift = ring * (height + gap)
        for dy in (gap + lift, -height - gap - lift):
            offsets.append((near, dy, True))
            offsets.append((-near - width, dy, True))
    return offsets


def place_labels(
    points: list[tuple[float, float]],
    sizes: list[tuple[float, float]],
    radii: list[float],
    frame: Box,
    *,
    gap: float = 3.0,
) -> list[Placement | None]:
    """One placement per point (in the given order of priority), ``None`` where no candidate fits.

    ``points`` are marker centres, ``sizes`` the labels' (width, height), ``radii`` the markers'
    radii, ``frame`` the box every label must stay inside; all in display units.
    """
    if not (len(points) == len(sizes) == len(radii)):
        raise ValueError("points, sizes and radii must have the same length")
    markers = [Box(x - r, y - r, x + r, y + r) for (x, y), r in zip(points, radii, strict=True)]
    placed: list[Box] = []
    out: list[Placement | None] = []
    for (x, y), (width, height), radius in zip(points, sizes, radii, strict=True):
        choice: Placement | None = None
        for dx, dy, far in candidate_offsets(width, height, radius, gap):
            box = Box(x + dx, y + dy, x + dx + width, y + dy + height)
            if not box.inside(frame):
                continue
            if any(box.overlaps(other) for other in placed) or any(box.overlaps(m) for m in markers):
                continue
            choice = Placement(dx, dy, far)
            placed.append(box)
            break
        out.append(choice)
    return out
