// The overview of a graph bigger than its box: every node as a small box coloured by its
// state at this step, and the part the main view shows as a frame. Drawn on a canvas (a
// few hundred rectangles cost well under a millisecond); a click moves the view
// (gestures.js).

import { minimapSize, nodeCentre, showsAll } from '../camera.js';
import { cameraOf, frameAt, shownStep } from '../store.js';
import { NODE_H, NODE_W } from './geometry.js';

export function render(canvas, state) {
  const camera = cameraOf(state);
  const show = Boolean(camera && !showsAll(camera, state.box));
  if (canvas.hidden === show) canvas.hidden = !show;
  if (!show) { canvas.dataset.key = ''; return; }
  const frame = frameAt(state.run, shownStep(state));
  const theme = document.documentElement.dataset.theme;
  const key = [frame.k, camera.scale, camera.cx, camera.cy, state.box.w, state.box.h, theme].join(':');
  if (canvas.dataset.key === key && canvas.graph === frame.graph) return;
  canvas.dataset.key = key;
  canvas.graph = frame.graph;
  draw(canvas, frame, camera, state.box);
}

function draw(canvas, frame, camera, box) {
  const { w, h, scale } = minimapSize(frame.graph);
  const dpr = window.devicePixelRatio || 1;
  if (canvas.width !== Math.round(w * dpr)) canvas.width = Math.round(w * dpr);
  if (canvas.height !== Math.round(h * dpr)) canvas.height = Math.round(h * dpr);
  canvas.style.width = `${w}px`;
  canvas.style.height = `${h}px`;
  canvas.dataset.scale = String(scale);
  const { fill, panel, ink } = colours(canvas);
  const g = canvas.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  g.fillStyle = panel;
  g.fillRect(0, 0, w, h);
  const nw = Math.max(2, NODE_W * scale);
  const nh = Math.max(2, NODE_H * scale);
  for (const n of frame.graph.nodes) {
    const [x, y] = nodeCentre(frame.graph, n);
    g.fillStyle = fill[frame.nodes.get(n.id)?.status ?? 'waiting'];
    g.fillRect(x * scale - nw / 2, y * scale - nh / 2, nw, nh);
  }
  const vw = (box.w / camera.scale) * scale;
  const vh = (box.h / camera.scale) * scale;
  g.strokeStyle = ink;
  g.lineWidth = 1.5;
  g.strokeRect(camera.cx * scale - vw / 2, camera.cy * scale - vh / 2, vw, vh);
}

/** The theme's colours, read once per theme (and colour scheme): getComputedStyle in the
 * middle of a paint recalculates the style of everything the step just changed. */
function colours(canvas) {
  const key = `${document.documentElement.dataset.theme}:${document.body.className}:`
    + `${matchMedia('(prefers-color-scheme: dark)').matches}`;
  if (canvas.palette?.key === key) return canvas.palette;
  const css = getComputedStyle(canvas);
  const colour = (name) => css.getPropertyValue(name).trim();
  canvas.palette = { key, panel: colour('--panel'), ink: colour('--ink'),
              fill: { waiting: colour('--line-strong'), ready: colour('--blue-mid'), done: colour('--line'),
                      running: colour('--blue'), error: colour('--orange') } };
  return canvas.palette;
}
