// The backward graph as SVG. It is built once per graph at the server's layout positions;
// each step only changes classes and texts, and animates the gradients that travel.

import { frameAt, shownStep } from '../store.js';
import { clip, isAccumulate, seqText, short } from '../labels.js';
import { beat } from '../player.js';
import { COL, NODE_H, NODE_W, PAD, ROW, TWIN, bezier, edgeControls, tAtY } from './geometry.js';

const SVG = 'http://www.w3.org/2000/svg';
const CHARS = 22;               // monospace characters that fit across a node
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

export function render(root, state) {
  const svg = root.querySelector('svg');
  const empty = root.querySelector('.graph-empty');
  const frame = frameAt(state.run, shownStep(state));
  let view = views.get(svg);
  if (!frame.graph) {
    if (view) { view.layer.remove(); views.delete(svg); }
    svg.setAttribute('width', '0');
    svg.setAttribute('height', '0');
    empty.hidden = false;
    setText(empty, state.run.status === 'running' ? 'Tracing…'
      : state.run.error ? 'No graph to show: see the message under the program.' : 'Press Run to see the graph.');
    return;
  }
  empty.hidden = true;
  if (!view || view.graph !== frame.graph) {
    if (view) view.layer.remove();
    view = build(svg, frame.graph);
    views.set(svg, view);
    fit(root, view);
    if (!root.dataset.observed) {
      root.dataset.observed = '1';
      new ResizeObserver(() => { const v = views.get(svg); if (v) fit(root, v); }).observe(root);
    }
  }
  update(view, frame, state);
  follow(root, view, frame);
}

// -- building --------------------------------------------------------------------------------

function build(svg, graph) {
  const xs = graph.nodes.map((n) => n.x);
  const minX = Math.min(...xs);
  const depth = Math.max(...graph.nodes.map((n) => n.layer));
  const width = (Math.max(...xs) - minX) * COL + NODE_W + 2 * PAD;
  const height = depth * ROW + NODE_H + 2 * PAD;
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  const layer = el('g', { transform: `translate(${PAD + NODE_W / 2 - minX * COL} ${PAD + NODE_H / 2})` }, svg);
  const defs = el('defs', {}, layer);
  for (const kind of ['idle', 'sent', 'current']) {
    const marker = el('marker', { id: `arrow-${kind}`, viewBox: '0 0 10 10', refX: 8.5, refY: 5,
                                  markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, defs);
    el('path', { d: 'M0 0.5 10 5 0 9.5z', class: `arrowhead ${kind}` }, marker);
  }
  const edgeLayer = el('g', { class: 'edges' }, layer);
  const labelLayer = el('g', { class: 'edge-labels' }, layer);
  const nodeLayer = el('g', { class: 'nodes' }, layer);
  const pulseLayer = el('g', { class: 'pulses' }, layer);
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const view = { graph, layer, width, height, nodes: new Map(), edges: new Map(), pulseLayer,
                 byId, lastK: null, animations: [] };
  for (const n of graph.nodes) buildEdges(view, n, byId, edgeLayer, labelLayer);
  for (const n of graph.nodes) view.nodes.set(n.id, buildNode(n, nodeLayer));
  return view;
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
    const path = el('path', { d: `M${x0} ${y0}C${x1} ${y1} ${x2} ${y2} ${x3} ${y3}`,
                              class: 'edge', 'marker-end': 'url(#arrow-idle)' }, edgeLayer);
    const gap = target.layer - n.layer > 1 ? target.layer * ROW - ROW / 2 : n.layer * ROW + ROW / 2;
    const at = bezier(points, tAtY(points, gap));
    const label = el('g', { class: 'edge-label', transform: `translate(${at[0]} ${at[1]})` }, labelLayer);
    const box = el('rect', { y: -11, height: 22, rx: 11 }, label);
    const text = el('text', { y: 4.5, 'text-anchor': 'middle' }, label);
    view.edges.set(`${n.id}:${edge}`, { path, label, box, text, points, side: twins[c] > 1 ? (k === 0 ? -1 : 1) : 0, last: '' });
  });
}

function buildNode(n, parent) {
  const acc = isAccumulate(n);
  const g = el('g', { transform: `translate(${n.x * COL - NODE_W / 2} ${n.layer * ROW - NODE_H / 2})` }, parent);
  const title = el('title', {}, g);
  title.textContent = describe(n);
  el('rect', { class: 'node-box', width: NODE_W, height: NODE_H, rx: acc ? 26 : 9 }, g);
  const name = el('text', { class: 'node-name', x: 14, y: 23 }, g);
  name.textContent = acc ? 'AccumulateGrad' : n.name;
  const seq = el('text', { class: 'node-seq', x: NODE_W - 14, y: 23, 'text-anchor': 'end' }, g);
  seq.textContent = seqText(n);
  const line2 = el('text', { class: acc ? 'node-leaf' : 'node-saved', x: 14, y: 45 }, g);
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
      saved.set(s.name, span);
    });
  }
  const line3 = el('text', { class: 'node-grad', x: 14, y: 66 }, g);
  if (n.variable && !acc) {
    const tag = el('g', { class: 'var-tag', transform: 'translate(10 -12)' }, g);
    const variable = clip(n.variable, 14);
    el('rect', { x: 0, y: -9, height: 18, rx: 5, width: 14 + 7.2 * variable.length }, tag);
    el('text', { x: 7, y: 4.5 }, tag).textContent = variable;
  }
  const badge = el('g', { class: 'badge-pos', transform: `translate(${NODE_W - 2} 2)` }, g);
  const badgeInner = el('g', { class: 'badge' }, badge);
  el('circle', { r: 12 }, badgeInner);
  const badgeText = el('text', { y: 4.5, 'text-anchor': 'middle' }, badgeInner);
  return { g, line3, saved, badgeInner, badgeText, acc, node: n, last: {} };
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
  for (const [id, v] of view.nodes) updateNode(v, frame.nodes.get(id), leafGrad.get(v.node.leaf), forward);
  for (const [key, e] of view.edges) {
    const sent = frame.edges.get(key);
    const kind = sent ? (sent.current ? 'current' : 'sent') : 'idle';
    setClass(e.path, `edge ${kind}`);
    if (e.path.getAttribute('marker-end') !== `url(#arrow-${kind})`) e.path.setAttribute('marker-end', `url(#arrow-${kind})`);
    setClass(e.label, `edge-label ${kind}`);
    const text = sent ? clip(short(sent.text), 16) : '';
    if (text !== e.last) {
      e.last = text;
      e.text.textContent = text;
      const w = 14 + 7.4 * text.length;
      e.box.setAttribute('x', String(-w / 2 + e.side * (w / 2 + 3)));
      e.box.setAttribute('width', String(w));
      e.text.setAttribute('x', String(e.side * (w / 2 + 3)));
    }
  }
  animate(view, frame, state, forward);
  view.lastK = frame.k;
}

function updateNode(v, n, leaf, forward) {
  setClass(v.g, `node ${n.status}${v.acc ? ' acc' : ''}${n.fresh ? ' fresh' : ''}${leaf && leaf.write ? ` written ${leaf.write}` : ''}`);
  const badge = n.status === 'done' ? '✓' : n.status === 'error' ? '✗' : n.status === 'running' ? '▶'
    : n.deps === null ? '' : String(n.deps);
  setText(v.badgeText, badge);
  setClass(v.badgeInner, `badge ${n.status}${n.deps === 0 ? ' zero' : ''}`);
  if (forward && v.last.badge !== undefined && v.last.badge !== badge && /^\d+$/.test(badge)) {
    v.badgeInner.animate([{ transform: 'scale(1.45)' }, { transform: 'scale(1)' }],
                         { duration: 450, easing: 'ease-out' });
  }
  v.last.badge = badge;
  for (const [name, span] of v.saved) {
    const freed = n.freed.has(name);
    setClass(span, `saved${span.getAttribute('class').includes('tensor') ? ' tensor' : ''}${freed ? ' freed' : ''}${n.justFreed?.has(name) ? ' just' : ''}`);
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

function animate(view, frame, state, forward) {
  view.animations.forEach((a) => a.cancel());
  view.animations = [];
  view.pulseLayer.replaceChildren();
  if (!forward || !frame.step || matchMedia('(prefers-reduced-motion: reduce)').matches) return;
  const duration = Math.min(900, beat(state.settings.speed) * 0.55);
  for (const sent of frame.step.sent) {
    const e = view.edges.get(`${frame.step.node}:${sent.edge}`);
    if (!e) continue;
    const dot = el('circle', { r: 7, class: 'pulse' }, view.pulseLayer);
    const frames = [];
    for (let i = 0; i <= 16; i++) {
      const [x, y] = bezier(e.points, i / 16);
      frames.push({ transform: `translate(${x}px, ${y}px)` });
    }
    const a = dot.animate(frames, { duration, easing: 'ease-in-out', fill: 'forwards' });
    a.onfinish = () => dot.remove();
    view.animations.push(a);
  }
}

// -- size and scrolling ----------------------------------------------------------------------

function fit(root, view) {
  const svg = root.querySelector('svg');
  const wide = Math.max(200, root.clientWidth - 4) / view.width;
  const tall = root.clientHeight > 200 ? (root.clientHeight - 4) / view.height : wide;
  const scale = Math.max(0.55, Math.min(1.3, wide, Math.max(tall, 0.75)));
  svg.setAttribute('width', String(Math.round(view.width * scale)));
  svg.setAttribute('height', String(Math.round(view.height * scale)));
  view.scale = scale;
}

function follow(root, view, frame) {
  const id = frame.step ? frame.step.node : frame.graph.root;
  const n = view.byId.get(id);
  if (!n || root.scrollHeight <= root.clientHeight + 2 && root.scrollWidth <= root.clientWidth + 2) return;
  const box = view.nodes.get(id).g.getBoundingClientRect();
  const area = root.getBoundingClientRect();
  const outside = box.top < area.top || box.bottom > area.bottom || box.left < area.left || box.right > area.right;
  if (outside) {
    root.scrollBy({ top: box.top - area.top - area.height / 2 + box.height / 2,
                    left: box.left - area.left - area.width / 2 + box.width / 2, behavior: 'smooth' });
  }
}
