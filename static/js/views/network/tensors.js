// Tensors in the graph and beside it: each node's shape at a glance (a tag above it), a
// leaf's values and a gradient as a mini heatmap inside its node or on its edge, and a
// panel with the step's gradients in full (heatmap, numbers, PyTorch's printed text). A
// scalar keeps the graph's own text; every value drawn is one the trace sent.

import { nodeLabel, targetLabel } from '../../labels.js';
import { COL, NODE_H, NODE_W, ROW } from '../geometry.js';
import { drawable, figure, flatten, miniSvg, shapeText } from './heatmap.js';

const SVG = 'http://www.w3.org/2000/svg';

function text(parent, cls, x, y, content, anchor = 'start') {
  const t = document.createElementNS(SVG, 'text');
  t.setAttribute('class', cls);
  t.setAttribute('x', String(x));
  t.setAttribute('y', String(y));
  if (anchor !== 'start') t.setAttribute('text-anchor', anchor);
  t.textContent = content;
  parent.appendChild(t);
  return t;
}

/** A leaf's, a gradient's, a node's output: a tensor when its shape has a dimension. */
function isTensor(shape) {
  return Array.isArray(shape) && shape.length > 0;
}

/** Decorate graph.js's view of `graph`; returns {sync(frame, leaves)} for each frame. */
export function decorateTensors(view, graph) {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  for (const [id, v] of view.nodes) {
    const n = byId.get(id);
    const left = n.x * COL - NODE_W / 2;
    const top = n.layer * ROW - NODE_H / 2;
    v.netBox = { left, top };
    if (isTensor(n.shape)) text(v.g, 'shape-tag', left + NODE_W - 20, top - 7.5, shapeText(n.shape), 'end');
    if (v.acc && drawable(n.data)) {
      const line2 = v.g.querySelector('.node-leaf');
      const mini = miniSvg(n.data, 0, 0, 64, 16);
      if (line2 && mini) {
        line2.textContent = n.leaf.length > 12 ? `${n.leaf.slice(0, 11)}…` : n.leaf;
        place(mini.g, left + NODE_W - 14 - mini.width, top + 45 - 4 - mini.height / 2 - 4);
        v.g.appendChild(mini.g);
      }
    }
  }
  const targets = new Map();
  for (const n of graph.nodes) {
    n.next.forEach((c, edge) => { if (c !== null) targets.set(`${n.id}:${edge}`, byId.get(c)); });
  }
  return {
    sync(frame, leaves) {
      for (const [key, e] of view.edges) syncEdge(key, e, frame.edges.get(key), targets.get(key));
      const stepOf = stepsByNode(frame);
      for (const [id, v] of view.nodes) syncNode(v, byId.get(id), frame.nodes.get(id), stepOf.get(id), leaves);
    },
  };
}

function place(g, x, y) {
  g.setAttribute('transform', `translate(${x} ${y})`);
}

const stepMaps = new WeakMap();

/** Each node's step in the frame's pass, once it has popped. */
function stepsByNode(frame) {
  let map = stepMaps.get(frame);
  if (map) return map;
  map = new Map();
  for (let s = 0; s <= frame.j && frame.pass; s++) map.set(frame.pass.steps[s].node, frame.pass.steps[s]);
  stepMaps.set(frame, map);
  return map;
}

/** An edge that carried a tensor: its shape and a mini heatmap in the label, in place of
 * the printed text graph.js writes (a scalar's stays). */
function syncEdge(key, e, sent, target) {
  const value = sent ? sent.value : null;
  const tensor = sent && (Array.isArray(value) || (value === null && isTensor(target?.shape)));
  if (!tensor) {
    if (e.net !== undefined) { e.netHeat?.remove(); e.netHeat = null; e.net = undefined; resetBox(e); }
    return;
  }
  const shape = Array.isArray(value) ? flatten(value).shape : target.shape;
  const label = shapeText(shape);
  if (e.net === value && e.text.textContent === label) return;
  e.net = value;
  e.label.setAttribute('data-edge', key);
  e.netHeat?.remove();
  const mini = drawable(value) ? miniSvg(value, 0, 0, 48, 28) : null;
  const textW = 7.4 * label.length;
  const w = 14 + textW + (mini ? mini.width + 6 : 0);
  const h = Math.max(22, mini ? mini.height + 8 : 0);
  const cx = e.at[0] + e.side * (w / 2 + 3);
  e.box.setAttribute('x', String(cx - w / 2));
  e.box.setAttribute('width', String(w));
  e.box.setAttribute('y', String(e.at[1] - h / 2));
  e.box.setAttribute('height', String(h));
  e.text.textContent = label;
  e.text.setAttribute('x', String(cx - w / 2 + 7 + textW / 2));
  e.netHeat = mini ? mini.g : null;
  if (mini) {
    place(mini.g, cx - w / 2 + 10 + textW, e.at[1] - mini.height / 2);
    e.label.appendChild(mini.g);
  }
}

function resetBox(e) {
  e.box.setAttribute('y', String(e.at[1] - 11));
  e.box.setAttribute('height', '22');
}

/** A node's third line for a tensor: the gradient it received (or a leaf's .grad) by its
 * shape, with a mini heatmap of its values. */
function syncNode(v, node, n, step, leaves) {
  const want = nodeLine(v, node, n, step, leaves);
  if (!want) {
    if (v.netHeat) { v.netHeat.remove(); v.netHeat = null; v.netValue = undefined; }
    return;
  }
  if (v.line3.textContent !== want.text) v.line3.textContent = want.text;
  if (v.netValue === want.value) return;
  v.netValue = want.value;
  v.netHeat?.remove();
  v.netHeat = null;
  const mini = drawable(want.value) ? miniSvg(want.value, 0, 0, 64, 18) : null;
  if (mini) {
    place(mini.g, v.netBox.left + NODE_W - 14 - mini.width, v.netBox.top + 61 - mini.height / 2);
    v.g.appendChild(mini.g);
    v.netHeat = mini.g;
  }
}

function nodeLine(v, node, n, step, leaves) {
  if (!n || !isTensor(node.shape)) return null;
  const shape = shapeText(node.shape);
  if ((n.status === 'waiting' || n.status === 'ready') && n.received.length) {
    return { text: `in ${n.received.map(() => shape).join(' + ')}`, value: null };
  }
  if (v.acc) {
    const leaf = leaves.get(node.leaf);
    if (!leaf || leaf.grad === null) return null;
    return { text: `${leaf.write === 'add' ? '.grad += … →' : '.grad'} ${shape}`, value: leaf.gradData ?? null };
  }
  if (!step || n.status === 'waiting' || n.status === 'ready') return null;
  return { text: `grad ${shape}`, value: step.grad };
}

// -- the panel: this step's gradients in full -----------------------------------------------------

/** The step's tensors: what the node received, what it sent along each edge, the .grad it
 * wrote. Kept as they are while the step stays, so a focused heatmap keeps its focus. */
export function renderPanel(section, frame) {
  const list = section.querySelector('.tensor-list');
  const items = panelItems(frame);
  const note = section.querySelector('.sub');
  const said = !frame.step ? 'Step through backward: each pop\'s gradients are shown here in full.'
    : items.length ? `${nodeLabel(frame.byId.get(frame.step.node))}: hover or focus a cell (arrow keys move) for its value.`
      : 'This step\'s gradients are single numbers: the graph shows them.';
  if (note.textContent !== said) note.textContent = said;
  if (items.length === list.children.length && items.every((f, i) => list.children[i] === f)) return;
  list.replaceChildren(...items);
}

function panelItems(frame) {
  const step = frame.step;
  if (!step) return [];
  const node = frame.byId.get(step.node);
  const out = [];
  if (Array.isArray(step.grad)) out.push(figure(step.grad, { label: `${nodeLabel(node)} received`, text: step.grad_text }));
  for (const s of step.sent) {
    if (Array.isArray(s.value)) out.push(figure(s.value, { label: `sent to ${targetLabel(frame.byId.get(s.to))}`, text: s.text }));
  }
  if (Array.isArray(step.grad_after)) {
    out.push(figure(step.grad_after, { label: `${step.leaf}.grad after`, text: step.grad_after_text }));
  }
  return out;
}
