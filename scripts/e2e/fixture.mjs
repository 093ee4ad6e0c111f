// The fixture workspace for the VS Code end-to-end test: a small Python package with a
// documented function, a module that uses it, and a README that mentions it.
import * as fs from "node:fs";
import * as path from "node:path";

const FILES = {
  "geometry/__init__.py": '"""Small geometry helpers."""\n\nfrom geometry.shapes import circle_area, rectangle_area\n\n__all__ = ["circle_area", "rectangle_area"]\n',
  "geometry/shapes.py": `"""Areas of basic shapes."""

import math


def circle_area(radius: float) -> float:
    """Return the area of a circle: pi times the radius squared.

    Raises ValueError for a negative radius.
    """
    if radius < 0:
        raise ValueError("radius must not be negative")
    return math.pi * radius**2


def rectangle_area(width: float, height: float) -> float:
    """Return the area of a rectangle."""
    return width * height
`,
  "geometry/report.py": `"""Formats a short report of shape areas."""

from geometry.shapes import circle_area, rectangle_area


def area_report(radius: float, width: float, height: float) -> str:
    circle = circle_area(radius)
    rect = rectangle_area(width, height)
    return f"circle={circle:.2f} rectangle={rect:.2f}"
`,
  "README.md": `# shapes-demo

A tiny package for the Code Compass end-to-end test.

## Circles

\`circle_area(radius)\` in \`geometry/shapes.py\` computes the area of a circle as
pi times the radius squared, and rejects a negative radius.

## Reports

\`area_report\` prints the areas of a circle and a rectangle.
`,
};

/** Write the fixture under dir (created fresh) and return its absolute path. */
export function writeFixture(dir) {
  fs.rmSync(dir, { recursive: true, force: true });
  for (const [rel, text] of Object.entries(FILES)) {
    const file = path.join(dir, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  }
  return dir;
}
