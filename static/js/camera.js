// The graph's camera: which part of the drawing the box shows, and how large. Pure
// functions of the graph's layout (from the server), the box's size and the node that
// runs; the store keeps the result, so that anything that sets the state (a follower)
// sets the view too. A camera is {graph, scale, cx, cy, auto}: (cx, cy) is the drawing's
// point at the box's centre; `auto` means the page chose it (fit, follow), not the user.

import { COL, NODE_H, NODE_W, PAD, ROW } from './views/geometry.js';

/** The smallest node text is 12.5 px at scale 1; below MIN_TEXT_PX it is too small to read
 * on a projector or a phone, so a graph that does not fit at that size is shown at it,
 * around the node that runs, with an overview beside it. */
export const MIN_TEXT_PX = 8.5;
export const MIN_SCALE = MIN_TEXT_PX / 12.5;
export const FIT_MAX = 1.25;          // a small graph is not blown up further
export const MAX_SCALE = 2.5;
const MARGIN = 10;                    // px of box kept around a fitted graph
const TOOLBAR = 30;                   // px at the box's top kept for the zoom buttons
const FOLLOW_MARGIN = 28;             // px kept between the running node and the box's edge
const TAG = 22;                       // px above a node: its variable's tag
export const MINIMAP = { width: 160, height: 120, gap: 8 };   // the overview's largest size

/** The drawing's size and where a layout position lands in it, in px at scale 1. */
export function drawing(graph) {
  let minX = Infinity, maxX = -Infinity, depth = 0;
  for (const n of graph.nodes) {
    if (n.x < minX) minX = n.x;
    if (n.x > maxX) maxX = n.x;
    if (n.layer > depth) depth = n.layer;
  }
  return {
    width: (maxX - minX) * COL + NODE_W + 2 * PAD,
    height: depth * ROW + NODE_H + 2 * PAD,
    offset: [PAD + NODE_W / 2 - minX * COL, PAD + NODE_H / 2],
  };
}

const drawings = new WeakMap();

function size(graph) {
  let d = drawings.get(graph);
  if (!d) { d = drawing(graph); drawings.set(graph, d); }
  return d;
}

/** A node's centre in the drawing. */
export function nodeCentre(graph, node) {
  const { offset } = size(graph);
  return [node.x * COL + offset[0], node.layer * ROW + offset[1]];
}

/** The scale at which the whole drawing fits the box, below the zoom buttons. */
export function fitScale(graph, box) {
  const { width, height } = size(graph);
  return Math.min((box.w - 2 * MARGIN) / width, (box.h - TOOLBAR - MARGIN) / height, FIT_MAX);
}

/** The overview's size in CSS px: the drawing's shape within MINIMAP. */
export function minimapSize(graph) {
  const { width, height } = size(graph);
  const scale = Math.min(MINIMAP.width / width, MINIMAP.height / height);
  return { w: Math.max(40, Math.round(width * scale)), h: Math.max(30, Math.round(height * scale)), scale };
}

/** Whether the box shows the whole drawing at this camera. */
export function showsAll(camera, box) {
  const { width, height } = size(camera.graph);
  return width * camera.scale <= box.w + 1 && height * camera.scale <= box.h + 1;
}

/** The page's own view: the whole graph when it fits with readable text; else readable
 * text around the focus node (the one running, or the root). */
export function fit(graph, box, focus) {
  const { width, height } = size(graph);
  const whole = fitScale(graph, box);
  if (whole >= MIN_SCALE) {
    return { graph, scale: whole, cx: width / 2, cy: height / 2 - (TOOLBAR - MARGIN) / 2 / whole, auto: true };
  }
  const camera = { graph, scale: MIN_SCALE, cx: width / 2, cy: height / 2, auto: true };
  return focus ? follow(camera, box, focus, true) : clamp(camera, box);
}

/** Pan as little as needed to bring the focus node (and its tag above it) into the box
 * with a margin; centre on it when `centre` is set or it cannot fit. Unchanged cameras are
 * returned as they are, so that a step whose node is in view moves nothing. */
export function follow(camera, box, focus, centre = false) {
  const [x, y] = nodeCentre(camera.graph, focus);
  const s = camera.scale;
  const m = FOLLOW_MARGIN / s;
  const top = TOOLBAR / s;
  const halfW = box.w / 2 / s;
  const halfH = box.h / 2 / s;
  const want = [x - NODE_W / 2 - m, y - NODE_H / 2 - TAG - m, x + NODE_W / 2 + m, y + NODE_H / 2 + m];
  let { cx, cy } = camera;
  // The overview covers the bottom right corner when it shows: a node low in the box keeps
  // to its left.
  const map = showsAll(camera, box) ? null : minimapSize(camera.graph);
  const low = map && want[3] > cy + halfH - (map.h + 2 * MINIMAP.gap) / s;
  const right = low ? (map.w + 2 * MINIMAP.gap) / s : 0;
  if (centre || want[2] - want[0] > 2 * halfW - right) cx = x + right / 2;
  else if (want[0] < cx - halfW) cx = want[0] + halfW;
  else if (want[2] > cx + halfW - right) cx = want[2] - halfW + right;
  if (centre || want[3] - want[1] > 2 * halfH - top) cy = y - TAG / 2 - top / 2;
  else if (want[1] < cy - halfH + top) cy = want[1] + halfH - top;
  else if (want[3] > cy + halfH) cy = want[3] - halfH;
  if (cx === camera.cx && cy === camera.cy) return camera;
  return clamp({ ...camera, cx, cy }, box);
}

/** Keep the drawing in the box: centred along an axis where it is smaller than the box;
 * where it is larger, its edge may come in only as far as the zoom buttons and the
 * overview reach, so that no node need hide under them. */
export function clamp(camera, box) {
  const { width, height } = size(camera.graph);
  const s = camera.scale;
  const halfW = box.w / 2 / s;
  const halfH = box.h / 2 / s;
  const slackX = (MINIMAP.width + 2 * MINIMAP.gap) / s;
  const slackY = (MINIMAP.height + 2 * MINIMAP.gap) / s;
  const cx = width <= 2 * halfW ? width / 2
    : Math.min(Math.max(camera.cx, halfW), width - halfW + slackX);
  const cy = height <= 2 * halfH - TOOLBAR / s ? height / 2 - TOOLBAR / 2 / s
    : Math.min(Math.max(camera.cy, halfH - TOOLBAR / s), height - halfH + slackY);
  return cx === camera.cx && cy === camera.cy ? camera : { ...camera, cx, cy };
}

/** Zoom by `factor` keeping the drawing's point under (px, py) (box px) where it is. The
 * user may zoom out to see the whole graph, however small its text. */
export function zoomAt(camera, box, factor, px = box.w / 2, py = box.h / 2) {
  const low = Math.min(MIN_SCALE, fitScale(camera.graph, box));
  const scale = Math.min(MAX_SCALE, Math.max(low, camera.scale * factor));
  const gx = camera.cx + (px - box.w / 2) / camera.scale;
  const gy = camera.cy + (py - box.h / 2) / camera.scale;
  return clamp({ ...camera, scale, cx: gx - (px - box.w / 2) / scale, cy: gy - (py - box.h / 2) / scale,
                 auto: false }, box);
}

/** Move the drawing by (dx, dy) box px, as a drag does. */
export function panBy(camera, box, dx, dy) {
  return clamp({ ...camera, cx: camera.cx - dx / camera.scale, cy: camera.cy - dy / camera.scale,
                 auto: false }, box);
}

/** Show the drawing's point (gx, gy) at the box's centre (a click on the overview). */
export function centreOn(camera, box, gx, gy) {
  return clamp({ ...camera, cx: gx, cy: gy, auto: false }, box);
}

/** The CSS transform that draws the camera's view. */
export function transform(camera, box) {
  const tx = box.w / 2 - camera.cx * camera.scale;
  const ty = box.h / 2 - camera.cy * camera.scale;
  return `translate(${tx.toFixed(2)}px, ${ty.toFixed(2)}px) scale(${camera.scale.toFixed(4)})`;
}
