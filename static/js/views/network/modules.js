// A network's layers in the graph: each band of the server's layout (a module such as
// `model.0`, or `x @ W1 + b1` outside any) drawn behind its nodes, and a module shown
// collapsed as one box with its parameters until the backward pass reaches it. The
// positions never change: a collapsed box covers its band, so expanding it only uncovers
// what is already drawn there.

import { COL, NODE_H, NODE_W, ROW } from '../geometry.js';
import { flatten, miniSvg, shapeText } from './heatmap.js';

const SVG = 'http://www.w3.org/2000/svg';
const REACHED = new Set(['ready', 'running', 'done', 'error']);

function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (parent) parent.appendChild(node);
  return node;
}

/** How many levels of bands each band holds inside it (0 for an innermost one). */
function levelsInside(bands) {
  const levels = new Map(bands.map((b) => [b.id, 0]));
  for (const b of [...bands].sort((a, c) => c.depth - a.depth)) {
    if (b.parent !== null) levels.set(b.parent, Math.max(levels.get(b.parent), levels.get(b.id) + 1));
  }
  return levels;
}

/** A band's rectangle in the drawing's px (graph.js's node coordinates): its nodes' extent
 * and a margin that grows with the bands inside it, so that nested bands stay apart. The
 * label runs up the left side. */
export function bandBox(band, levels) {
  const k = Math.min(levels, 2);
  return {
    x: band.left * COL - NODE_W / 2 - 24 - 12 * k,
    y: band.top * ROW - NODE_H / 2 - 27 - 9 * k,
    right: band.right * COL + NODE_W / 2 + 10 + 9 * k,
    bottom: band.bottom * ROW + NODE_H / 2 + 9 + 8 * k,
  };
}

/** The nodes drawn in each band, its own and those of the bands inside it. */
export function membersOf(graph) {
  const parent = new Map(graph.bands.map((b) => [b.id, b.parent]));
  const members = new Map(graph.bands.map((b) => [b.id, []]));
  for (const n of graph.nodes) {
    for (let b = n.band; b !== null && b !== undefined; b = parent.get(b)) members.get(b)?.push(n.id);
  }
  return members;
}

/** Whether each band is open at this frame: the user's choice for this program if they made
 * one, else open once backward has reached one of its nodes (one is ready, has run or is
 * running). A band inside a closed one is covered by it. */
export function openBands(graph, frame, choices, members) {
  const open = new Map();
  for (const b of graph.bands) {
    const auto = members.get(b.id).some((id) => REACHED.has(frame.nodes.get(id)?.status));
    open.set(b.id, b.id in choices ? choices[b.id] : auto);
  }
  return open;
}

/** The user's open/closed choices for the program that ran (state.ui.bands). */
export function choicesOf(state) {
  const saved = state.ui.bands;
  return saved && saved.source === state.run.source ? saved.open : {};
}

export function toggled(state, id, isOpen) {
  return { bands: { source: state.run.source, open: { ...choicesOf(state), [id]: !isOpen } } };
}

/** Draw the bands in `back` (behind the edges) and their collapsed boxes in `top` (above the
 * nodes). Returns {sync(frame, choices)} that shows each band open or closed. A click on a
 * band's label or box is `clickedBand`'s to find. */
export function drawBands(graph, { back, top }) {
  const levels = levelsInside(graph.bands);
  const members = membersOf(graph);
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const drawn = new Map();
  for (const band of graph.bands) {
    const box = bandBox(band, levels.get(band.id));
    const w = box.right - box.x, h = box.bottom - box.y;
    const g = el('g', { class: `band depth-${band.depth % 3}`, 'data-band': band.id }, back);
    el('rect', { class: 'band-bg', x: box.x, y: box.y, width: w, height: h, rx: 14 }, g);
    const label = el('text', { class: 'band-label', transform: `translate(${box.x + 15} ${box.y + 12}) rotate(90)` }, g);
    label.textContent = `▾ ${title(band)}`;
    el('rect', { class: 'band-hit', x: box.x, y: box.y, width: 22, height: Math.min(h, 12 + 7.6 * label.textContent.length) }, g);
    const closed = collapsedBox(band, box, members.get(band.id), byId, top);
    drawn.set(band.id, { g, closed });
  }
  let last = '';
  return {
    members,
    sync(frame, choices) {
      const open = openBands(graph, frame, choices, members);
      const key = [...open.values()].join();
      if (key === last) return open;
      last = key;
      for (const band of graph.bands) {
        let covered = false;
        for (let p = band.parent; p !== null; p = graph.bands.find((b) => b.id === p)?.parent ?? null) {
          if (!open.get(p)) covered = true;
        }
        const { g, closed } = drawn.get(band.id);
        g.classList.toggle('closed', !open.get(band.id));
        closed.classList.toggle('shown', !open.get(band.id) && !covered);
      }
      return open;
    },
  };
}

function title(band) {
  return band.kind === 'layer' ? `layer ${band.id}` : band.id;
}

/** One box for a closed band: its name, how many nodes it holds, each parameter with its
 * shape and its values' heatmap (from the leaf's data in the trace). */
function collapsedBox(band, box, ids, byId, parent) {
  const g = el('g', { class: 'band-box', 'data-band': band.id }, parent);
  el('rect', { class: 'band-box-bg', x: box.x, y: box.y, width: box.right - box.x, height: box.bottom - box.y, rx: 14 }, g);
  const x = box.x + 16;
  let y = box.y + 24;
  el('text', { class: 'band-box-title', x, y }, g).textContent = `▸ ${title(band)}`;
  y += 20;
  const names = ids.map((id) => byId.get(id)).filter((n) => n.name !== 'AccumulateGrad').map((n) => n.name);
  el('text', { class: 'band-box-note', x, y }, g).textContent =
    `${ids.length} ${ids.length === 1 ? 'node' : 'nodes'}: ${[...new Set(names)].join(', ') || 'AccumulateGrad'}`;
  const room = box.bottom - 12;
  for (const id of ids) {
    const n = byId.get(id);
    if (n.name !== 'AccumulateGrad' || y + 24 > room) continue;
    y += 24;
    const name = band.kind === 'module' && n.leaf.startsWith(`${band.id}.`) ? n.leaf.slice(band.id.length + 1) : n.leaf;
    const { shape } = flatten(n.data);
    el('text', { class: 'band-box-param', x, y }, g).textContent = `${name} ${shapeText(shape)}`;
    const mini = n.data === null ? null : miniSvg(n.data, x, y + 7, box.right - x - 16, Math.min(44, room - y - 8));
    if (mini) { g.appendChild(mini.g); y += mini.height + 8; }
  }
  return g;
}

/** The band whose label or collapsed box is at (x, y) on the screen, if any. The graph's
 * box captures the pointer for dragging, so a click reaches it, not the band. */
export function clickedBand(x, y) {
  for (const node of document.elementsFromPoint(x, y)) {
    const hit = node.closest?.('.band-hit, .band-box.shown');
    if (hit) return hit.closest('[data-band]').dataset.band;
  }
  return null;
}

