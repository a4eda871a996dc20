// The graph's drawing geometry, shared by graph.js and checked against app/trace/layout.py
// by tests/test_layout.py: NODE_W / COL == NODE_WIDTH and NODE_H / ROW == NODE_HEIGHT.
export const COL = 230;        // px per layout column (x)
export const ROW = 140;        // px per layer
export const NODE_W = 184;
export const NODE_H = 77;
export const BEND = 0.5;       // rows over which an edge leaves and enters vertically
export const PAD = 28;
export const TWIN = 16;        // px between the two edges of `a * a`

/** The point at t of the edge from the bottom of (x1, layer1) to the top of (x2, layer2),
 * in px: a cubic Bezier leaving and entering vertically (app/trace/layout.py: edge_point). */
export function edgeControls(x1, layer1, x2, layer2) {
  const y1 = layer1 * ROW + NODE_H / 2;
  const y2 = layer2 * ROW - NODE_H / 2;
  const c = Math.min(BEND * ROW, (y2 - y1) / 2);
  return [[x1, y1], [x1, y1 + c], [x2, y2 - c], [x2, y2]];
}

export function bezier(points, t) {
  const [[ax, ay], [bx, by], [cx, cy], [dx, dy]] = points;
  const u = 1 - t;
  const a = u * u * u, b = 3 * u * u * t, c = 3 * u * t * t, d = t * t * t;
  return [a * ax + b * bx + c * cx + d * dx, a * ay + b * by + c * cy + d * dy];
}

/** The parameter t at which the curve reaches height y (it only goes down). */
export function tAtY(points, y) {
  let lo = 0, hi = 1;
  for (let k = 0; k < 24; k++) {
    const mid = (lo + hi) / 2;
    if (bezier(points, mid)[1] < y) lo = mid; else hi = mid;
  }
  return (lo + hi) / 2;
}
