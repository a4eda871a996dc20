// The backward graph as SVG. It is built once per graph at the server's layout positions;
// each step only changes classes and texts, and animates the gradients that travel. The
// camera (store.js, camera.js) places the drawing in its box with one CSS transform.

import { drawing, transform } from '../camera.js';
import { cameraOf, frameAt, shownStep } from '../store.js';
import { clip, isAccumulate, seqText, short } from '../labels.js';
import { beat } from '../player.js';
import { COL, NODE_H, NODE_W, ROW, TWIN, bezier, edgeControls, tAtY } from './geometry.js';

const SVG = 'http://www.w3.org/2000/svg';
const CHARS = 22;               // monospace characters that fit across a node
const BIG = 60;                 // nodes: above this, no transitions on the graph itself
const VAST = 2000;              // nodes: above this, only those near the view are drawn ...
const DRAWN_MAX = 1500;         // ... and at most this many of them (Note [Vast graphs])
const views = new WeakMap();

function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (parent) parent.appendChild(node);
  return node;
}

function setClass(node, cls) {
  if (node.getAttribute('class') !== cls) node.setAttribute('class', cls);
}

function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

/** `ext`: the network views (views/network/index.js) once loaded, which add bands, collapsed
 * modules and tensors' heatmaps to the drawing. */
export function render(root, state, ext = null) {
  const svg = root.querySelector('svg.graph');
  const empty = root.querySelector('.graph-empty');
  const frame = frameAt(state.run, shownStep(state));
  let view = views.get(svg);
  root.classList.toggle('has-graph', Boolean(frame.graph));
  if (!frame.graph) {
    if (view) { view.layer.remove(); view.overlay.remove(); views.delete(svg); }
    for (const node of root.querySelectorAll('svg')) {
      node.setAttribute('width', '0');
      node.setAttribute('height', '0');
    }
    empty.hidden = Boolean(frame.pass?.summarized);   // views/passes.js lists its pops
    setText(empty, state.run.status === 'running' ? 'Tracing…'
      : state.run.error ? 'No graph to show: see the message under the program.' : 'Press Run to see the graph.');
    return;
  }
  empty.hidden = true;
  if (!view || view.graph !== frame.graph || view.extOf !== ext) {
    if (view) { view.layer.remove(); view.overlay.remove(); }
    view = build(svg, root.querySelector('.overlay'), frame.graph, ext);
    views.set(svg, view);
  }
  const stepped = view.frame !== frame;
  const grew = view.vast !== null && drawNear(view, cameraOf(state), state.box);
  if (stepped || grew) update(view, frame, state);
  view.ext?.sync(frame, state);
  placeCamera(root, view, cameraOf(state), state.box, stepped);
  view.frame = frame;
}

// -- building --------------------------------------------------------------------------------

/** The graph in `svg`; what moves (gradients travelling, the glow of the node that runs)
 * as small HTML boxes in `overlayDiv`, animated by transform and opacity only, which the
 * compositor moves without repainting the graph (SVG children would repaint it all). */
function build(svg, overlayDiv, graph, ext = null) {
  const { width, height, offset } = drawing(graph);
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('width', String(Math.ceil(width)));
  svg.setAttribute('height', String(Math.ceil(height)));
  svg.classList.toggle('big', graph.nodes.length > BIG);
  const layer = el('g', { transform: `translate(${offset[0]} ${offset[1]})` }, svg);
  const edgeLayer = el('g', { class: 'edges' }, layer);
  const labelLayer = el('g', { class: 'edge-labels' }, layer);
  const nodeLayer = el('g', { class: 'nodes' }, layer);
  const overlay = document.createElement('div');
  overlay.className = 'pulses';
  overlayDiv.appendChild(overlay);
  const pulseLayer = overlay;
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const view = { graph, layer, overlay, width, height, offset, nodes: new Map(), edges: new Map(), pulseLayer,
                 byId, lastK: null, animations: [], frame: null, transform: '', vast: null };
  if (graph.nodes.length > VAST && !ext) {
    view.vast = vastIndex(graph, { edgeLayer, labelLayer, nodeLayer });
    svg.dataset.drawn = '0';
  } else {
    for (const n of graph.nodes) buildEdges(view, n, byId, edgeLayer, labelLayer);
    for (const n of graph.nodes) view.nodes.set(n.id, buildNode(n, nodeLayer));
    delete svg.dataset.drawn;
  }
  view.svg = svg;
  view.extOf = ext;
  view.ext = ext ? ext.decorate(view, { layer, edgeLayer, nodeLayer }) : null;
  return view;
}

// Note [Vast graphs]
// A loop of 10,000 steps records a graph of 30,001 nodes. Drawn whole, its 200,000 SVG
// elements took Chromium 24 s to make and to style; drawn near the view, the page shows
// the whole trace in 8 s, mostly the browser's own work and the wait for the stream
// (MEASURED with the CDP profiler, bench/programs.py's recurrence). Above VAST nodes the
// view draws only
// the nodes within a screen of the box's edges (at most DRAWN_MAX of them), with their
// edges in and out, and draws more as the camera moves there; nodes once drawn stay until
// there would be more than DRAWN_MAX, when it draws afresh around the view. The
// overview (views/minimap.js) still shows the whole graph, and Export SVG holds the nodes
// drawn so far. <svg data-drawn> counts them.

/** The graph's nodes by layer, and its edges into each node: where to look as the camera
 * moves. */
function vastIndex(graph, layers) {
  const byLayer = new Map();
  const parents = new Map();
  for (const n of graph.nodes) {
    if (!byLayer.has(n.layer)) byLayer.set(n.layer, []);
    byLayer.get(n.layer).push(n);
    for (const c of n.next) {
      if (c === null) continue;
      if (!parents.has(c)) parents.set(c, []);
      parents.get(c).push(n);
    }
  }
  return { byLayer, parents, layers, edgesOf: new Set() };
}

/** Draws the nodes near the camera's view that are not drawn yet; whether it drew any.
 * When they would pass DRAWN_MAX, the drawing starts afresh around the view. */
function drawNear(view, camera, box) {
  if (!camera || !box) return false;
  const { byLayer, parents, layers, edgesOf } = view.vast;
  const [cx, cy] = [camera.cx - view.offset[0], camera.cy - view.offset[1]];   // layer coords
  const reachX = (1.5 * box.w) / camera.scale + NODE_W;
  const reachY = (1.5 * box.h) / camera.scale + NODE_H;
  const first = Math.max(0, Math.floor((cy - reachY) / ROW));
  const last = Math.ceil((cy + reachY) / ROW);
  const inReach = [];
  for (let layer = first; layer <= last; layer++) {
    for (const n of byLayer.get(layer) ?? []) {
      if (Math.abs(n.x * COL - cx) <= reachX) inReach.push(n);
    }
  }
  let near = inReach.filter((n) => !view.nodes.has(n.id));
  if (!near.length) return false;
  if (view.nodes.size + near.length > DRAWN_MAX && view.nodes.size) {
    for (const layer of [layers.edgeLayer, layers.labelLayer, layers.nodeLayer]) layer.replaceChildren();
    view.nodes.clear();
    view.edges.clear();
    edgesOf.clear();
    near = inReach;
  }
  const distance = (n) => Math.hypot(n.x * COL - cx, n.layer * ROW - cy);
  near.sort((a, b) => distance(a) - distance(b));
  for (const n of near.slice(0, DRAWN_MAX - view.nodes.size)) {
    for (const from of [n, ...(parents.get(n.id) ?? [])]) {
      if (edgesOf.has(from.id)) continue;
      edgesOf.add(from.id);
      buildEdges(view, from, view.byId, layers.edgeLayer, layers.labelLayer);
    }
    view.nodes.set(n.id, buildNode(n, layers.nodeLayer));
  }
  view.svg.dataset.drawn = String(view.nodes.size);
  return true;
}

function buildEdges(view, n, byId, edgeLayer, labelLayer) {
  const twins = {};
  n.next.forEach((c) => { if (c !== null) twins[c] = (twins[c] ?? 0) + 1; });
  const seen = {};
  n.next.forEach((c, edge) => {
    if (c === null) return;
    const target = byId.get(c);
    const k = seen[c] = (seen[c] ?? -1) + 1;
    const shift = twins[c] > 1 ? (k - (twins[c] - 1) / 2) * TWIN : 0;
    const points = edgeControls(n.x * COL + shift, n.layer, target.x * COL + shift / 2, target.layer);
    const [[x0, y0], [x1, y1], [x2, y2], [x3, y3]] = points;
    const path = el('path', { d: `M${x0} ${y0}C${x1} ${y1} ${x2} ${y2} ${x3} ${y3 - 4}`, class: 'edge idle' }, edgeLayer);
    const head = el('path', { d: `M${x3 - 5.5} ${y3 - 10}L${x3 + 5.5} ${y3 - 10}L${x3} ${y3}Z`, class: 'arrowhead idle' }, edgeLayer);
    const gap = target.layer - n.layer > 1 ? target.layer * ROW - ROW / 2 : n.layer * ROW + ROW / 2;
    const at = bezier(points, tAtY(points, gap));
    const label = el('g', { class: 'edge-label idle' }, labelLayer);
    const box = el('rect', { y: at[1] - 11, height: 22, rx: 11 }, label);
    const text = el('text', { y: at[1] + 4.5, 'text-anchor': 'middle' }, label);
    view.edges.set(`${n.id}:${edge}`, { path, head, label, box, text, points, at,
                                        side: twins[c] > 1 ? (k === 0 ? -1 : 1) : 0, last: '' });
  });
}

/** A node drawn with absolute coordinates: no transform per node, so that a big graph stays
 * one cheap layer to paint. */
function buildNode(n, parent) {
  const acc = isAccumulate(n);
  const left = n.x * COL - NODE_W / 2;
  const top = n.layer * ROW - NODE_H / 2;
  const g = el('g', { class: 'node waiting', 'data-id': n.id }, parent);
  el('title', {}, g).textContent = describe(n);
  el('rect', { class: 'node-box', x: left, y: top, width: NODE_W, height: NODE_H, rx: acc ? 26 : 9 }, g);
  const name = el('text', { class: 'node-name', x: left + 14, y: top + 23 }, g);
  name.textContent = acc ? 'AccumulateGrad' : n.name;
  const seq = seqText(n);
  el('text', { class: 'node-seq', x: left + NODE_W - 14, y: top + 23, 'text-anchor': 'end' }, g).textContent = seq;
  const room = NODE_W - 34 - 8.2 * seq.length;
  if (8.3 * name.textContent.length > room) {
    name.setAttribute('textLength', String(room));
    name.setAttribute('lengthAdjust', 'spacingAndGlyphs');
  }
  const line2 = el('text', { class: acc ? 'node-leaf' : 'node-saved', x: left + 14, y: top + 45 }, g);
  const saved = new Map();
  if (acc) {
    line2.textContent = clip(`${n.leaf} = ${short(n.value)}`, CHARS);
  } else if (n.saved.length === 0) {
    line2.textContent = 'saves nothing';
    line2.setAttribute('class', 'node-saved none');
  } else {
    const room = Math.max(6, Math.floor((CHARS - 2 * (n.saved.length - 1)) / n.saved.length));
    n.saved.forEach((s, i) => {
      const span = el('tspan', { class: s.is_tensor ? 'saved tensor' : 'saved' }, line2);
      const value = s.is_tensor && s.released ? '' : ` ${short(s.value)}`;
      span.textContent = `${i ? '  ' : ''}${clip(`${s.name}${value}`, room)}`;
      saved.set(s.name, { span, tensor: s.is_tensor });
    });
  }
  const line3 = el('text', { class: 'node-grad', x: left + 14, y: top + 66 }, g);
  if (n.variable && !acc) {
    const variable = clip(n.variable, 14);
    el('rect', { class: 'var-tag', x: left + 10, y: top - 21, height: 18, rx: 5, width: 14 + 7.2 * variable.length }, g);
    el('text', { class: 'var-tag', x: left + 17, y: top - 7.5 }, g).textContent = variable;
  }
  const badge = el('g', { class: 'badge' }, g);
  el('circle', { cx: left + NODE_W - 2, cy: top + 2, r: 12 }, badge);
  const badgeText = el('text', { x: left + NODE_W - 2, y: top + 6.5, 'text-anchor': 'middle' }, badge);
  return { g, line3, saved, badge, badgeText, acc, node: n, last: {} };
}

function describe(n) {
  if (isAccumulate(n)) return `AccumulateGrad for leaf ${n.leaf} = ${n.value}; sequence number MAX (18446744073709551615)`;
  const saved = n.saved.map((s) => `${s.name} = ${s.value}`).join(', ') || 'nothing';
  return `${n.name}, sequence number ${n.seq}${n.variable ? `, output bound to ${n.variable}` : ''}; saved: ${saved}`;
}

// -- each step -------------------------------------------------------------------------------

function update(view, frame, state) {
  const forward = view.lastK !== null && frame.k === view.lastK + 1;
  const leafGrad = new Map(frame.leaves.map((l) => [l.name, l]));
  const big = view.graph.nodes.length > BIG;
  for (const [id, v] of view.nodes) updateNode(v, frame.nodes.get(id), leafGrad.get(v.node.leaf), forward, big);
  for (const [key, e] of view.edges) {
    const sent = frame.edges.get(key);
    const kind = sent ? (sent.current ? 'current' : 'sent') : 'idle';
    setClass(e.path, `edge ${kind}`);
    setClass(e.head, `arrowhead ${kind}`);
    setClass(e.label, `edge-label ${kind}`);
    const text = sent ? clip(short(sent.text), 16) : '';
    if (text !== e.last) {
      e.last = text;
      e.text.textContent = text;
      const w = 14 + 7.4 * text.length;
      const cx = e.at[0] + e.side * (w / 2 + 3);
      e.box.setAttribute('x', String(cx - w / 2));
      e.box.setAttribute('width', String(w));
      e.text.setAttribute('x', String(cx));
    }
  }
  animate(view, frame, state, forward);
  view.lastK = frame.k;
}

function updateNode(v, n, leaf, forward, big) {
  setClass(v.g, `node ${n.status}${v.acc ? ' acc' : ''}${n.fresh ? ' fresh' : ''}${leaf && leaf.write ? ` written ${leaf.write}` : ''}`);
  const badge = n.status === 'done' ? '✓' : n.status === 'error' ? '✗' : n.status === 'running' ? '▶'
    : n.deps === null ? '' : String(n.deps);
  setText(v.badgeText, badge);
  setClass(v.badge, `badge ${n.status}${n.deps === 0 ? ' zero' : ''}`);
  if (forward && !big && v.last.badge !== undefined && v.last.badge !== badge && /^\d+$/.test(badge)) {
    v.badge.firstChild.animate([{ r: '17px' }, { r: '12px' }], { duration: 450, easing: 'ease-out' });
  }
  v.last.badge = badge;
  for (const [name, { span, tensor }] of v.saved) {
    setClass(span, `saved${tensor ? ' tensor' : ''}${n.freed.has(name) ? ' freed' : ''}${n.justFreed.has(name) ? ' just' : ''}`);
  }
  setText(v.line3, v.acc ? accLine(v.node, n, leaf) : gradLine(n));
}

function gradLine(n) {
  if (n.status === 'waiting' || n.status === 'ready') {
    if (!n.received.length) return '';
    return clip(`in ${n.received.map((r) => short(r.text)).join(' + ')}`, CHARS);
  }
  return n.grad ? clip(`grad ${short(n.grad)}`, CHARS) : '';
}

function accLine(node, n, leaf) {
  const grad = leaf ? leaf.grad : null;
  if (leaf && leaf.write === 'add') return clip(`.grad += ${short(leaf.added)} → ${short(grad)}`, CHARS);
  if ((n.status === 'waiting' || n.status === 'ready') && n.received.length) {
    return clip(`in ${n.received.map((r) => short(r.text)).join(' + ')}`, CHARS);
  }
  return clip(`.grad = ${grad === null ? 'None' : short(grad)}`, CHARS);
}

function box(cls, parent) {
  const node = document.createElement('div');
  node.className = cls;
  parent.appendChild(node);
  return node;
}

function place(node, props) {
  for (const [k, v] of Object.entries(props)) node.style.setProperty(k, `${v}px`);
}

/** The glow of the node that runs and a dot per gradient it sends, travelling its edge.
 * Not for a step that comes sooner after the last one than a dot takes to travel (a key
 * held or pressed quickly): the next step would cut them short, and while any of them runs
 * the browser walks the whole graph on every frame (a 300-node graph stepped every 100 ms
 * spent 16 ms more of its main thread per step so). The step's running node, its edges
 * with their values and the badges show it all the same. */
function animate(view, frame, state, forward) {
  const now = performance.now();
  const since = now - (view.stepped ?? -Infinity);
  if (forward) view.stepped = now;
  view.animations.forEach((a) => a.cancel());
  view.animations = [];
  view.pulseLayer.replaceChildren();
  if (!forward || !frame.step || matchMedia('(prefers-reduced-motion: reduce)').matches) return;
  const duration = Math.min(900, beat(state.settings.speed) * 0.55);
  if (since < duration) return;
  const [ox, oy] = view.offset;     // the overlay is inside the camera's transform: drawing px
  const n = view.byId.get(frame.step.node);
  const glow = box(`glow${frame.step.error ? ' error' : ''}`, view.pulseLayer);
  place(glow, { left: n.x * COL - NODE_W / 2 - 3 + ox, top: n.layer * ROW - NODE_H / 2 - 3 + oy,
                width: NODE_W + 6, height: NODE_H + 6, 'border-radius': isAccumulate(n) ? 28 : 11 });
  const light = glow.animate([{ opacity: 0.9, transform: 'scale(1.08)' }, { opacity: 0, transform: 'scale(1)' }],
                             { duration: Math.max(500, duration), easing: 'ease-out', fill: 'forwards' });
  light.onfinish = () => glow.remove();
  view.animations.push(light);
  for (const sent of frame.step.sent) {
    const e = view.edges.get(`${frame.step.node}:${sent.edge}`);
    if (!e) continue;
    const dot = box('pulse', view.pulseLayer);
    place(dot, { width: 14, height: 14, left: -7, top: -7 });
    if (!e.frames) {                // an edge's path never changes: its keyframes neither
      e.frames = [];
      for (let i = 0; i <= 16; i++) {
        const [x, y] = bezier(e.points, i / 16);
        e.frames.push({ transform: `translate(${x + ox}px, ${y + oy}px)` });
      }
    }
    const a = dot.animate(e.frames, { duration, easing: 'ease-in-out', fill: 'forwards' });
    a.onfinish = () => dot.remove();
    view.animations.push(a);
  }
}

// -- the camera ----------------------------------------------------------------------------

const GLIDE_MS = 350;            // lab.css: .graph-canvas.glide

/** The camera's transform on the drawing; a change that a step caused glides (CSS), one the
 * user makes by dragging or zooming follows the pointer at once. Steps that come faster than
 * a glide (a key held or pressed quickly, playing fast) move the view at once too: the
 * glides would never end, and while the drawing's transform animates the browser walks the
 * whole graph on every frame (a 300-node graph lost a tenth of its frames so). */
function placeCamera(root, view, camera, box, stepped) {
  const canvas = root.querySelector('.graph-canvas');
  const level = root.querySelector('.zoom-level');
  if (!camera) { canvas.style.visibility = 'hidden'; return; }
  canvas.style.visibility = '';
  const css = transform(camera, box);
  if (css === view.transform) return;
  const now = performance.now();
  const glide = stepped && view.transform !== '' && now - (view.glided ?? -Infinity) >= GLIDE_MS;
  if (stepped) view.glided = now;
  canvas.classList.toggle('glide', glide);
  canvas.style.transform = css;
  view.transform = css;
  setText(level, `${Math.round(camera.scale * 100)}%`);
  root.dataset.scale = camera.scale.toFixed(4);
}
